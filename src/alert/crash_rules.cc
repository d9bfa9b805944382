// crash_signature_spike, new_crash_signature and crash_rate_regression (SPEC §5; the
// choices behind them: docs/adr/0006-alerts.md): each new build of the crash world
// against its baseline builds, for every OS together or (per_os) each OS.
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <cmath>

#include "round.h"
#include "seismo/aggregate/subprocess_crashes.h"
#include "seismo/alert/stats.h"

namespace seismo::alert_detail {
namespace {

constexpr std::string_view kClasses[] = {"parent", "content", "content_shutdown", "gpu", "startup"};
constexpr std::string_view kStartup = "startup";  // a pseudo-class: the startup count of every class
constexpr size_t kSubprocessGpu = 2;              // kBuildUsage value: SUBPROCESS_CRASHES_WITH_DUMP["gpu"]

double CrashExposure(const CrashBuild& build, OsScope os, const HourRange& range, ExposureMode mode) {
  double exposure = 0;
  if (mode == ExposureMode::kUsageHours) {
    for (const SeriesData* usage : build.usage) {
      if (os.Matches(usage->key[build_field::kOs])) exposure += static_cast<double>(Sum(*usage, 0, range));
    }
    return exposure / kHourMs;
  }
  for (const SeriesData* crash : build.crashes) {
    if (os.Matches(crash->key[crash_field::kOs])) exposure += static_cast<double>(Sum(*crash, 0, range));
  }
  return exposure;
}

struct Side {
  int64_t count = 0;
  HyperLogLog installs;
};

// Counts of one signature in one class: the new build's and its baselines'.
struct ClassCounts {
  Sym crash_class = kNoId;
  int64_t count_new = 0;
  int64_t count_base = 0;
};

// Sums of every class a crash row counts in: its own class (if one of kClasses) and startup.
template <typename Add>
void ForEachClassOf(std::string_view crash_class, const Add& add) {
  for (std::string_view name : kClasses) {
    const bool startup = name == kStartup;
    if (startup || crash_class == name) add(name, startup ? size_t{1} : size_t{0});
  }
}

void CrashRulesForBuild(Round& round, const BuildIndex& index, size_t build_at, OsScope os,
                        ExposureMode mode) {
  const Snapshot& snap = round.snap();
  const AlertOptions& options = round.options();
  const CrashBuild& build = index.crash_builds[build_at];
  // Judged up to the hour both usage and crash reports have reached, its baselines at
  // that age (CrashBuildAge); nothing while only the leading topic has seen the build.
  const std::optional<JudgedAge> judged_age = CrashBuildAge(snap, build);
  if (!judged_age) return;
  const HourRange judged = judged_age->judged;
  const int64_t age_hours = judged_age->age_hours;
  const int64_t end = judged_age->end_ms;
  // Baseline builds must have reached the minimum exposure (usage hours; in crash-share
  // mode, min_count crash reports).
  const double needed = mode == ExposureMode::kUsageHours ? options.min_baseline_usage_hours
                                                          : static_cast<double>(options.min_count);
  const auto baselines = SelectBaselines(
      snap, index.crash_builds, build_at, BaselinePolicyOf(options), age_hours, needed,
      [&](const CrashBuild& base, const HourRange& range) { return CrashExposure(base, os, range, mode); });
  if (baselines.builds.empty()) return;

  const double exposure_new = CrashExposure(build, os, judged, mode);
  const double exposure_base = baselines.exposure;
  if (!(exposure_new > 0) || !(exposure_base > 0)) return;

  // Per signature and per class, new build and baseline.
  absl::flat_hash_map<Sym, Side> signature_new;
  absl::flat_hash_map<std::string_view, Side> class_new;  // by class name (kClasses)
  absl::flat_hash_map<Sym, int64_t> signature_base;
  absl::flat_hash_map<std::string_view, int64_t> class_base;
  absl::flat_hash_map<Sym, std::vector<int64_t>> signature_by_base;  // per baseline build, for the dispersion
  absl::flat_hash_set<Sym> signature_ever;  // appeared in any baseline build, at any age
  // Per signature, its classes' new-build and baseline counts, to tell a signature's own
  // spike from the rise of its whole class.
  absl::flat_hash_map<Sym, std::vector<ClassCounts>> signature_classes;
  auto class_counts = [&signature_classes](Sym signature, Sym crash_class) -> ClassCounts& {
    std::vector<ClassCounts>& classes = signature_classes[signature];
    for (ClassCounts& counts : classes) {
      if (counts.crash_class == crash_class) return counts;
    }
    return classes.emplace_back(ClassCounts{crash_class});
  };
  int64_t all_new = 0, all_base = 0;  // every crash report of the build and of its baseline
  std::vector<int64_t> base_gpu_reports(baselines.builds.size());  // per baseline build
  for (const SeriesData* crash : build.crashes) {
    const SeriesKey& key = crash->key;
    if (!os.Matches(key[crash_field::kOs])) continue;
    const int64_t count = Sum(*crash, 0, judged);
    Side& side = signature_new[key[crash_field::kSignature]];
    side.count += count;
    side.installs.Merge(crash->installs);
    class_counts(key[crash_field::kSignature], key[crash_field::kClass]).count_new += count;
    all_new += count;
    ForEachClassOf(snap.Text(key[crash_field::kClass]), [&](std::string_view name, size_t value) {
      Side& in_class = class_new[name];
      const int64_t count_in_class = Sum(*crash, value, judged);
      in_class.count += count_in_class;
      if (count_in_class > 0) in_class.installs.Merge(crash->installs);
    });
  }
  for (size_t base_at = 0; base_at < baselines.builds.size(); ++base_at) {
    const auto& base = baselines.builds[base_at];
    for (const SeriesData* crash : base.build->crashes) {
      const SeriesKey& key = crash->key;
      if (!os.Matches(key[crash_field::kOs])) continue;
      const Sym signature = key[crash_field::kSignature];
      const int64_t count = Sum(*crash, 0, base.range);
      signature_base[signature] += count;
      class_counts(signature, key[crash_field::kClass]).count_base += count;
      all_base += count;
      std::vector<int64_t>& per_base = signature_by_base[signature];
      per_base.resize(baselines.builds.size());
      per_base[base_at] += count;
      if (crash->total()[0] > 0) signature_ever.insert(signature);
      ForEachClassOf(snap.Text(key[crash_field::kClass]), [&](std::string_view name, size_t value) {
        const int64_t in_class = Sum(*crash, value, base.range);
        class_base[name] += in_class;
        if (name == "gpu") base_gpu_reports[base_at] += in_class;
      });
    }
  }
  // SPEC §3.3: gpu crashes also come from main pings' SUBPROCESS_CRASHES_WITH_DUMP, which
  // count the same crashes as the reports: each build's gpu count is the larger of the two,
  // as /api/v1/builds counts it (SubprocessCrashCount). Their installs are those of the
  // main pings that reported them.
  int64_t gpu_main_pings = 0;
  bool gpu_in_main_pings = false;
  for (const SeriesData* usage : build.usage) {
    if (!os.Matches(usage->key[build_field::kOs]) || usage->total()[kSubprocessGpu] <= 0) continue;
    gpu_main_pings += Sum(*usage, kSubprocessGpu, judged);
    gpu_in_main_pings = true;
    class_new["gpu"].installs.Merge(InstallsOfHours(*usage));  // its hours hold the reporters (ADR 0031)
  }
  if (gpu_in_main_pings) {
    Side& gpu = class_new["gpu"];
    gpu.count = SubprocessCrashCount(gpu.count, gpu_main_pings);
  }
  for (size_t base_at = 0; base_at < baselines.builds.size(); ++base_at) {
    int64_t main_pings = 0;
    for (const SeriesData* usage : baselines.builds[base_at].build->usage) {
      if (os.Matches(usage->key[build_field::kOs]))
        main_pings += Sum(*usage, kSubprocessGpu, baselines.builds[base_at].range);
    }
    class_base["gpu"] +=
        SubprocessCrashCount(base_gpu_reports[base_at], main_pings) - base_gpu_reports[base_at];
  }
  const double dispersion = SignatureDispersion(snap, options, baselines.exposures, signature_by_base);

  auto numbers = [&](int64_t count_new, int64_t count_base, const HyperLogLog& installs) {
    AlertNumbers result;
    result.count_new = count_new;
    result.count_base = count_base;
    result.exposure_new = exposure_new;
    result.exposure_base = exposure_base;
    result.exposure = mode;
    result.ratio = RateRatio(static_cast<double>(count_new), exposure_new, static_cast<double>(count_base),
                             exposure_base);
    result.installs = KnownInstalls(installs);
    result.baseline_builds = baselines.ids;
    result.version = TextOf(snap, build.version);
    result.age_hours = static_cast<double>(end - build.first_ms) / kHourMs;
    return result;
  };
  auto key = [&](AlertRule rule, std::string signature, std::string_view scope) {
    return AlertKey{rule,
                    TextOf(snap, build.channel),
                    os.Name(snap),
                    TextOf(snap, build.build),
                    std::move(signature),
                    std::string(scope)};
  };

  for (const auto& [signature, side] : signature_new) {
    if (signature == snap.symbols->other()) continue;  // folded series: not one signature
    const int64_t count_base = signature_base[signature];
    AlertNumbers signature_numbers = numbers(side.count, count_base, side.installs);
    if (!signature_ever.contains(signature)) {
      if (side.count < options.min_new_count || !EnoughInstalls(signature_numbers.installs, options)) continue;
      round.Add(key(AlertRule::kNewCrashSignature, TextOf(snap, signature), ""),
                std::move(signature_numbers));
      continue;
    }
    if (side.count < options.min_count || !EnoughInstalls(signature_numbers.installs, options)) continue;
    signature_numbers.dispersion = dispersion;
    // A spike is the signature's own: when the rest of its class (the class holding most
    // of its new-build crashes; the rest of the build when the signature is its whole class)
    // rose by ρ > 1 as well, the test's null is "ratio ≤ ρ" and the ratio must reach
    // min_ratio·ρ. A whole-build regression is crash_rate_regression's alert, not forty spikes.
    double rest_ratio = 1;
    const ClassCounts* own = nullptr;  // most new-build crashes; ties: the first class by name
    for (const ClassCounts& counts : signature_classes[signature]) {
      if (own == nullptr || counts.count_new > own->count_new ||
          (counts.count_new == own->count_new &&
           snap.Text(counts.crash_class) < snap.Text(own->crash_class))) {
        own = &counts;
      }
    }
    if (own != nullptr) {
      const std::string_view own_class = snap.Text(own->crash_class);
      int64_t rest_new = class_new[own_class].count - own->count_new;
      int64_t rest_base = class_base[own_class] - own->count_base;
      if (rest_new + rest_base == 0) {
        rest_new = all_new - side.count;
        rest_base = all_base - count_base;
      }
      const std::optional<double> rest = RateRatio(static_cast<double>(rest_new), exposure_new,
                                                   static_cast<double>(rest_base), exposure_base);
      if (rest && *rest > 1) rest_ratio = *rest;
    }
    const double log_p = DispersedRateTestLogP(side.count, exposure_new, count_base, baselines.exposures,
                                               dispersion, rest_ratio);
    round.AddTested(key(AlertRule::kCrashSignatureSpike, TextOf(snap, signature), ""),
                    std::move(signature_numbers), log_p, options.min_ratio * rest_ratio);
  }
  // Class rates are a different question in crash-share mode only in that a whole-build
  // regression cannot be seen there (every class's share stays put); the test is the same.
  for (std::string_view name : kClasses) {
    auto found = class_new.find(name);
    if (found == class_new.end()) continue;
    const Side& side = found->second;
    AlertNumbers class_numbers = numbers(side.count, class_base[name], side.installs);
    if (side.count < options.min_count || !EnoughInstalls(class_numbers.installs, options)) continue;
    const double log_p =
        PoissonRateTestLogP(side.count, exposure_new, class_numbers.count_base, exposure_base);
    round.AddTested(key(AlertRule::kCrashRateRegression, "", name), std::move(class_numbers), log_p,
                    options.min_ratio);
  }
}

}  // namespace

void CrashRules(Round& round, const BuildIndex& index) {
  const AlertOptions& options = round.options();
  for (size_t build_at = 0; build_at < index.crash_builds.size(); ++build_at) {
    const CrashBuild& build = index.crash_builds[build_at];
    if (!IsNew(round.snap(), options, build.first_ms)) continue;
    const ExposureMode mode =
        options.exposure == ExposureMode::kCrashShare || !index.channels_with_usage.contains(build.channel)
            ? ExposureMode::kCrashShare
            : ExposureMode::kUsageHours;
    if (options.per_os) {
      for (Sym os : build.os_names) CrashRulesForBuild(round, index, build_at, OsScope{os}, mode);
    } else {
      CrashRulesForBuild(round, index, build_at, OsScope{}, mode);
    }
  }
}

}  // namespace seismo::alert_detail
