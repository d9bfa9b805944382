// hang_spike (SPEC §5, docs/adr/0006-alerts.md): per hang signature and source (bhr,
// main) of each new build date against its baseline build dates.
#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cmath>

#include "round.h"
#include "seismo/alert/stats.h"

namespace seismo::alert_detail {
namespace {

double HangUsageHours(const HangBuild& build, Sym source, OsScope os, const HourRange& range) {
  int64_t usage_ms = 0;
  for (const SeriesData* usage : build.usage) {
    const SeriesKey& key = usage->key;
    if (key[usage_field::kSource] == source && os.Matches(key[usage_field::kOs])) {
      usage_ms += Sum(*usage, 0, range);
    }
  }
  return static_cast<double>(usage_ms) / kHourMs;
}

struct HangSide {
  int64_t count = 0, us = 0;
  HyperLogLog installs;  // of the pings that reported the hangs (empty: none had a client id)
};

void HangRuleForBuild(Round& round, const BuildIndex& index, size_t build_at, Sym source, OsScope os) {
  const Snapshot& snap = round.snap();
  const AlertOptions& options = round.options();
  const HangBuild& build = index.hang_builds[build_at];
  const int64_t stream_ms = snap.stream_time_ms;
  const int64_t age_hours = HangBuildAge(snap, build).age_hours;
  const auto baselines = SelectBaselines(
      snap, index.hang_builds, build_at, BaselinePolicyOf(options), age_hours,
      options.min_baseline_usage_hours,
      [&](const HangBuild& base, const HourRange& range) { return HangUsageHours(base, source, os, range); });
  if (baselines.builds.empty()) return;
  const double exposure_new = HangUsageHours(build, source, os, HourRange{});
  const double exposure_base = baselines.exposure;
  if (!(exposure_new > 0) || !(exposure_base > 0)) return;

  absl::flat_hash_map<Sym, HangSide> signature_new, signature_base;
  absl::flat_hash_map<Sym, std::vector<int64_t>> signature_by_base;  // hang counts per baseline build
  auto in_scope = [&](const SeriesKey& key) {
    return key[hang_field::kSource] == source && os.Matches(key[hang_field::kOs]);
  };
  for (const SeriesData* hang : build.hangs) {
    if (!in_scope(hang->key)) continue;
    HangSide& side = signature_new[hang->key[hang_field::kSignature]];
    side.us += hang->total()[0];
    side.count += hang->total()[1];
    side.installs.Merge(hang->installs);
  }
  for (size_t base_at = 0; base_at < baselines.builds.size(); ++base_at) {
    const auto& base = baselines.builds[base_at];
    for (const SeriesData* hang : base.build->hangs) {
      if (!in_scope(hang->key)) continue;
      const Sym signature = hang->key[hang_field::kSignature];
      const int64_t count = Sum(*hang, 1, base.range);
      std::vector<int64_t>& per_base = signature_by_base[signature];
      per_base.resize(baselines.builds.size());
      per_base[base_at] += count;
      if (!signature_new.contains(signature)) continue;
      HangSide& side = signature_base[signature];
      side.us += Sum(*hang, 0, base.range);
      side.count += count;
    }
  }
  const double dispersion = SignatureDispersion(snap, options, baselines.exposures, signature_by_base);
  for (const auto& [signature, side] : signature_new) {
    if (signature == snap.symbols->other() || side.count < options.min_count) continue;
    // Installs are known when the pings carried a client id (main pings do; Mozilla's bhr
    // pings do not, and then the guard cannot apply: ADR 0006, 0017).
    const std::optional<int64_t> installs = KnownInstalls(side.installs);
    if (!EnoughInstalls(installs, options)) continue;
    const HangSide& base = signature_base[signature];
    AlertNumbers numbers;
    numbers.installs = installs;
    numbers.dispersion = dispersion;
    numbers.count_new = side.count;
    numbers.count_base = base.count;
    numbers.exposure_new = exposure_new;
    numbers.exposure_base = exposure_base;
    numbers.hang_ms_new = side.us / 1000;
    numbers.hang_ms_base = base.us / 1000;
    // The gate is on hang time per usage hour; the test is on hang counts.
    numbers.ratio =
        RateRatio(static_cast<double>(side.us), exposure_new, static_cast<double>(base.us), exposure_base);
    numbers.baseline_builds = baselines.ids;
    numbers.age_hours = static_cast<double>(stream_ms - build.first_ms) / kHourMs;
    const double log_p =
        DispersedRateTestLogP(side.count, exposure_new, base.count, baselines.exposures, dispersion);
    round.AddTested(AlertKey{AlertRule::kHangSpike, TextOf(snap, build.channel), os.Name(snap),
                             TextOf(snap, build.build), TextOf(snap, signature), TextOf(snap, source)},
                    std::move(numbers), log_p, options.min_ratio);
  }
}

}  // namespace

void HangRules(Round& round, const BuildIndex& index) {
  for (size_t build_at = 0; build_at < index.hang_builds.size(); ++build_at) {
    const HangBuild& build = index.hang_builds[build_at];
    if (!IsNew(round.snap(), round.options(), build.first_ms)) continue;
    std::vector<Sym> sources;
    for (const SeriesData* hang : build.hangs) sources.push_back(hang->key[hang_field::kSource]);
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    for (Sym source : sources) {
      if (round.options().per_os) {
        for (Sym os : build.os_names) HangRuleForBuild(round, index, build_at, source, OsScope{os});
      } else {
        HangRuleForBuild(round, index, build_at, source, OsScope{});
      }
    }
  }
}

}  // namespace seismo::alert_detail
