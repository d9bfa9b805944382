#include "seismo/alert/engine.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "seismo/alert/stats.h"
#include "seismo/core/hash.h"
#include "seismo/core/json_writer.h"
#include "seismo/core/time.h"

namespace seismo {

std::string_view AlertRuleName(AlertRule r) {
  switch (r) {
    case AlertRule::kCrashSignatureSpike: return "crash_signature_spike";
    case AlertRule::kNewCrashSignature: return "new_crash_signature";
    case AlertRule::kCrashRateRegression: return "crash_rate_regression";
    case AlertRule::kHangSpike: return "hang_spike";
    case AlertRule::kBurst: return "burst";
  }
  return "unknown";
}

std::string_view AlertStateName(AlertState s) {
  switch (s) {
    case AlertState::kPending: return "pending";
    case AlertState::kFiring: return "firing";
    case AlertState::kResolved: return "resolved";
    case AlertState::kInactive: return "inactive";
  }
  return "unknown";
}

namespace {

constexpr int64_t kHourMs = 3'600'000;
constexpr std::string_view kAllOs = "all";
constexpr const char* kClasses[] = {"parent", "content", "content_shutdown", "gpu", "startup"};
constexpr size_t kSubprocessGpu = 2;  // kBuildUsage value: SUBPROCESS_CRASHES_WITH_DUMP["gpu"]

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Hour indices [from, to], or the whole retained life.
struct Range {
  bool all = true;
  int64_t from = 0;
  int64_t to = 0;
};

template <typename Point>
int64_t SumPoints(const std::vector<Point>& points, size_t i, int64_t lo_exclusive, int64_t hi_inclusive) {
  int64_t sum = 0;
  for (const Point& p : points) {
    if (p.bucket > lo_exclusive && p.bucket <= hi_inclusive) sum += p.v[i];
  }
  return sum;
}

int64_t Sum(const MergedSeries& s, size_t i, const Range& r) {
  if (r.all) return s.total.v[i];
  return SumPoints(s.hourly, i, r.from - 1, r.to);
}

bool OsMatches(std::string_view scope, std::string_view os) { return scope == kAllOs || scope == os; }

// ------------------------------------------------------------------ indexes

struct CrashSeriesRef {
  std::string os, cls, signature;
  const MergedSeries* s;
};
struct UsageRef {
  std::string os;
  const MergedSeries* s;
};

// A build of the crash world: (channel, build_id).
struct CrashBuild {
  std::string channel, build_id, version;
  int64_t first_ms = INT64_MAX;
  std::vector<UsageRef> usage;  // kBuildUsage series
  std::vector<CrashSeriesRef> crashes;
  std::set<std::string> os_names;
};

// A build of the hang world: (channel, build_date), usage and hangs per source.
struct HangSeriesRef {
  std::string source, os, signature;
  const MergedSeries* s;
};
struct HangBuild {
  std::string channel, build_date;
  int64_t first_ms = INT64_MAX;
  std::vector<std::pair<std::string, UsageRef>> usage;  // (source, usage)
  std::vector<HangSeriesRef> hangs;
  std::set<std::string> os_names;
};

struct Index {
  std::map<std::pair<std::string, std::string>, CrashBuild> crash_builds;
  std::map<std::pair<std::string, std::string>, HangBuild> hang_builds;
  std::set<std::string> channels_with_usage;  // channels with main-ping usage
};

Index BuildIndex(const Snapshot& snap) {
  Index ix;
  for (const auto& [key, s] : snap.table(Table::kBuildUsage)) {
    auto f = SplitKey(key);  // channel, product, version, build_id, os
    if (f.size() < 5) continue;
    CrashBuild& b = ix.crash_builds[{std::string(f[0]), std::string(f[3])}];
    b.channel = f[0];
    b.build_id = f[3];
    if (b.version.empty()) b.version = f[2];
    b.first_ms = std::min(b.first_ms, s.first_ms);
    b.usage.push_back({std::string(f[4]), &s});
    b.os_names.insert(std::string(f[4]));
    if (s.total.v[0] > 0) ix.channels_with_usage.insert(std::string(f[0]));
  }
  for (const auto& [key, s] : snap.table(Table::kCrashes)) {
    auto f = SplitKey(key);  // channel, product, version, build_id, os, process, class, signature
    if (f.size() < 8) continue;
    CrashBuild& b = ix.crash_builds[{std::string(f[0]), std::string(f[3])}];
    b.channel = f[0];
    b.build_id = f[3];
    if (b.version.empty()) b.version = f[2];
    b.first_ms = std::min(b.first_ms, s.first_ms);
    b.crashes.push_back({std::string(f[4]), std::string(f[6]), std::string(f[7]), &s});
    b.os_names.insert(std::string(f[4]));
  }
  for (const auto& [key, s] : snap.table(Table::kUsage)) {
    auto f = SplitKey(key);  // source, channel, os, build_date
    if (f.size() < 4) continue;
    HangBuild& b = ix.hang_builds[{std::string(f[1]), std::string(f[3])}];
    b.channel = f[1];
    b.build_date = f[3];
    b.first_ms = std::min(b.first_ms, s.first_ms);
    b.usage.push_back({std::string(f[0]), UsageRef{std::string(f[2]), &s}});
    b.os_names.insert(std::string(f[2]));
  }
  for (const auto& [key, s] : snap.table(Table::kHangs)) {
    auto f = SplitKey(key);  // source, channel, os, build_date, process, thread, signature, stack
    if (f.size() < 8) continue;
    HangBuild& b = ix.hang_builds[{std::string(f[1]), std::string(f[3])}];
    b.channel = f[1];
    b.build_date = f[3];
    b.first_ms = std::min(b.first_ms, s.first_ms);
    b.hangs.push_back({std::string(f[0]), std::string(f[2]), std::string(f[6]), &s});
    b.os_names.insert(std::string(f[2]));
  }
  return ix;
}

// ------------------------------------------------------------------ a round

struct Round {
  const Snapshot& snap;
  const AlertOptions& o;
  std::vector<AlertCandidate> out;
  std::vector<size_t> tested;      // indexes into out
  std::vector<double> log_p;       // per tested
  std::vector<double> min_ratio;   // per tested: the ratio the candidate's ratio must reach
};

// Adds a tested candidate; `holds` is decided after the round's adjustment.
void AddTested(Round& r, AlertCandidate c, double log_p, double min_ratio) {
  r.tested.push_back(r.out.size());
  r.log_p.push_back(log_p);
  r.min_ratio.push_back(min_ratio);
  r.out.push_back(std::move(c));
}

std::optional<double> RateRatio(double count_new, double exposure_new, double count_base,
                                double exposure_base) {
  if (count_base <= 0 || exposure_new <= 0 || exposure_base <= 0) return std::nullopt;
  return (count_new / exposure_new) / (count_base / exposure_base);
}

// Fewer baseline builds than this: no build rule is evaluated (a single earlier build
// cannot tell a regression from ordinary build-to-build variation).
int MinBaselineBuilds(const AlertOptions& o) {
  return std::max(1, std::min(o.min_baseline_builds, o.baseline_builds));
}

bool IsNew(const Snapshot& snap, const AlertOptions& o, int64_t first_ms) {
  return first_ms != INT64_MAX && snap.stream_time_ms - first_ms < o.new_build_days * 24 * kHourMs;
}

// Baseline range of a build first seen at `first_ms` for a new build of age `hours`
// (in hour indices, inclusive) - or its whole life when not age-matched.
Range BaselineRange(const AlertOptions& o, int64_t first_ms, int64_t age_hour_count) {
  if (!o.age_matched) return Range{};
  const int64_t from = FloorDiv(first_ms, kHourMs);
  return Range{false, from, from + age_hour_count - 1};
}

// ---- crash rules

double CrashExposure(const CrashBuild& b, std::string_view os, const Range& r, ExposureMode mode) {
  double e = 0;
  if (mode == ExposureMode::kUsageHours) {
    for (const UsageRef& u : b.usage) {
      if (OsMatches(os, u.os)) e += static_cast<double>(Sum(*u.s, 0, r));
    }
    return e / kHourMs;
  }
  for (const CrashSeriesRef& c : b.crashes) {
    if (OsMatches(os, c.os)) e += static_cast<double>(Sum(*c.s, 0, r));
  }
  return e;
}

struct Side {
  int64_t count = 0;
  HyperLogLog installs;
};

// Distinct installs behind a selection; nullopt when none of its documents carried an
// install id (clientId, install_time): then the min_installs guard cannot judge and is
// skipped (SPEC §5). ADR 0017.
std::optional<int64_t> KnownInstalls(const HyperLogLog& installs) {
  if (installs.empty()) return std::nullopt;
  return static_cast<int64_t>(std::llround(installs.Estimate()));
}

// The min_installs guard: passes when the installs are unknown.
bool EnoughInstalls(const std::optional<int64_t>& installs, const AlertOptions& o) {
  return !installs || *installs >= o.min_installs;
}

void CrashRulesForBuild(Round& r, const Index& ix, const CrashBuild& nb, std::string_view os,
                        ExposureMode mode) {
  const AlertOptions& o = r.o;
  const int64_t st = r.snap.stream_time_ms;
  // Usage and crash reports arrive through different topics. When one lags behind the
  // other, the new build is judged up to the hour both have reached, and its baselines at
  // that age: a crash rate over usage that has not arrived yet looks like a regression.
  int64_t end = st;
  for (Table t : {Table::kBuildUsage, Table::kCrashes}) {
    const int64_t at = r.snap.table_time_ms[static_cast<size_t>(t)];
    if (at != INT64_MIN) end = std::min(end, at);
  }
  if (end < nb.first_ms) return;  // only the leading topic has seen the build yet
  const Range judged =
      end < st ? Range{false, FloorDiv(nb.first_ms, kHourMs), FloorDiv(end, kHourMs)} : Range{};
  const int64_t age_hours = FloorDiv(end, kHourMs) - FloorDiv(nb.first_ms, kHourMs) + 1;
  // Baseline builds: the most recent earlier builds of the channel that reached the
  // minimum exposure (usage hours; in crash-share mode, min_count crash reports).
  struct Base {
    const CrashBuild* b;
    Range range;
  };
  std::vector<Base> bases;
  auto it = ix.crash_builds.lower_bound({nb.channel, nb.build_id});
  while (it != ix.crash_builds.begin() && static_cast<int>(bases.size()) < o.baseline_builds) {
    --it;
    const CrashBuild& b = it->second;
    if (b.channel != nb.channel) break;
    if (b.first_ms == INT64_MAX) continue;
    const double whole = CrashExposure(b, os, Range{}, mode);
    const double needed = mode == ExposureMode::kUsageHours ? o.min_baseline_usage_hours
                                                            : static_cast<double>(o.min_count);
    if (whole < needed) continue;
    bases.push_back({&b, BaselineRange(o, b.first_ms, age_hours)});
  }
  if (static_cast<int>(bases.size()) < MinBaselineBuilds(o)) return;

  const double e_new = CrashExposure(nb, os, judged, mode);
  double e_base = 0;
  std::vector<double> e_bases;
  std::vector<std::string> base_ids;
  for (const Base& b : bases) {
    e_bases.push_back(CrashExposure(*b.b, os, b.range, mode));
    e_base += e_bases.back();
    base_ids.push_back(b.b->build_id);
  }
  if (!(e_new > 0) || !(e_base > 0)) return;

  // Per signature and per class, new build and baseline.
  std::map<std::string, Side> sig_new, class_new;
  std::map<std::string, int64_t> sig_base, class_base;
  std::map<std::string, std::vector<int64_t>> sig_by_base;  // per baseline build, for the dispersion
  std::set<std::string> sig_ever;  // appeared in any baseline build, at any age
  // (signature, class) -> new-build and baseline counts, to tell a signature's own spike
  // from the rise of its whole class.
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> sig_class;
  int64_t all_new = 0, all_base = 0;  // every crash report of the build and of its baseline
  for (const CrashSeriesRef& c : nb.crashes) {
    if (!OsMatches(os, c.os)) continue;
    const int64_t count = Sum(*c.s, 0, judged);
    Side& s = sig_new[c.signature];
    s.count += count;
    s.installs.Merge(c.s->total.installs);
    sig_class[{c.signature, c.cls}].first += count;
    all_new += count;
    for (const char* cls : kClasses) {
      const bool startup = std::string_view(cls) == "startup";
      if (!startup && c.cls != cls) continue;
      Side& k = class_new[cls];
      const int64_t in_class = Sum(*c.s, startup ? 1 : 0, judged);
      k.count += in_class;
      if (in_class > 0) k.installs.Merge(c.s->total.installs);
    }
  }
  for (size_t bi = 0; bi < bases.size(); ++bi) {
    const Base& b = bases[bi];
    for (const CrashSeriesRef& c : b.b->crashes) {
      if (!OsMatches(os, c.os)) continue;
      const int64_t count = Sum(*c.s, 0, b.range);
      sig_base[c.signature] += count;
      sig_class[{c.signature, c.cls}].second += count;
      all_base += count;
      std::vector<int64_t>& per_base = sig_by_base[c.signature];
      per_base.resize(bases.size());
      per_base[bi] += count;
      if (c.s->total.v[0] > 0) sig_ever.insert(c.signature);
      for (const char* cls : kClasses) {
        const bool startup = std::string_view(cls) == "startup";
        if (!startup && c.cls != cls) continue;
        class_base[cls] += Sum(*c.s, startup ? 1 : 0, b.range);
      }
    }
  }
  // SPEC §3.3: gpu crashes also come from main pings' SUBPROCESS_CRASHES_WITH_DUMP, and
  // /api/v1/builds adds them to the gpu crash reports; the gpu class rate here does too.
  // Their installs are those of the main pings that reported them.
  for (const UsageRef& u : nb.usage) {
    if (!OsMatches(os, u.os) || u.s->total.v[kSubprocessGpu] <= 0) continue;
    Side& k = class_new["gpu"];
    k.count += Sum(*u.s, kSubprocessGpu, judged);
    k.installs.Merge(u.s->total.installs);
  }
  for (const Base& b : bases) {
    for (const UsageRef& u : b.b->usage) {
      if (OsMatches(os, u.os)) class_base["gpu"] += Sum(*u.s, kSubprocessGpu, b.range);
    }
  }
  // Build-to-build variation of signature rates, from the baseline builds (ADR 0006).
  double dispersion = 0;
  if (o.overdispersion == Overdispersion::kEstimate) {
    std::vector<std::vector<int64_t>> counts;
    for (auto& [sig, per_base] : sig_by_base) {
      if (sig != kOtherSeries) counts.push_back(std::move(per_base));
    }
    dispersion = EstimateRateDispersion(e_bases, counts);
  }

  auto numbers = [&](int64_t count_new, int64_t count_base, const HyperLogLog& installs) {
    AlertNumbers n;
    n.count_new = count_new;
    n.count_base = count_base;
    n.exposure_new = e_new;
    n.exposure_base = e_base;
    n.exposure = mode;
    n.ratio = RateRatio(static_cast<double>(count_new), e_new, static_cast<double>(count_base), e_base);
    n.installs = KnownInstalls(installs);
    n.baseline_builds = base_ids;
    n.version = nb.version;
    n.age_hours = static_cast<double>(end - nb.first_ms) / kHourMs;
    return n;
  };
  auto key = [&](AlertRule rule, std::string signature, std::string scope) {
    return AlertKey{rule, nb.channel, std::string(os), nb.build_id, std::move(signature), std::move(scope)};
  };

  for (const auto& [sig, side] : sig_new) {
    if (sig == kOtherSeries) continue;  // folded series: not one signature
    AlertNumbers n = numbers(side.count, sig_base[sig], side.installs);
    if (!sig_ever.count(sig)) {
      if (side.count < o.min_new_count || !EnoughInstalls(n.installs, o)) continue;
      r.out.push_back({key(AlertRule::kNewCrashSignature, sig, ""), std::move(n), true});
      continue;
    }
    if (side.count < o.min_count || !EnoughInstalls(n.installs, o)) continue;
    n.dispersion = dispersion;
    // A spike is the signature's own: when the rest of its class (the class holding most
    // of its new-build crashes; the rest of the build when the signature is its whole class)
    // rose by ρ > 1 as well, the test's null is "ratio ≤ ρ" and the ratio must reach
    // min_ratio·ρ. A whole-build regression is crash_rate_regression's alert, not forty spikes.
    double rest_ratio = 1;
    const std::pair<int64_t, int64_t>* own = nullptr;
    std::string cls;
    for (auto at = sig_class.lower_bound({sig, ""}); at != sig_class.end() && at->first.first == sig; ++at) {
      if (own == nullptr || at->second.first > own->first) {
        own = &at->second;
        cls = at->first.second;
      }
    }
    if (own != nullptr) {
      int64_t rest_new = class_new[cls].count - own->first, rest_base = class_base[cls] - own->second;
      if (rest_new + rest_base == 0) {
        rest_new = all_new - side.count;
        rest_base = all_base - sig_base[sig];
      }
      const std::optional<double> rest =
          RateRatio(static_cast<double>(rest_new), e_new, static_cast<double>(rest_base), e_base);
      if (rest && *rest > 1) rest_ratio = *rest;
    }
    const double lp = DispersedRateTestLogP(side.count, e_new, n.count_base, e_bases, dispersion, rest_ratio);
    AddTested(r, {key(AlertRule::kCrashSignatureSpike, sig, ""), std::move(n), false}, lp,
              o.min_ratio * rest_ratio);
  }
  // Class rates are a different question in crash-share mode only in that a whole-build
  // regression cannot be seen there (every class's share stays put); the test is the same.
  for (const char* cls : kClasses) {
    auto found = class_new.find(cls);
    if (found == class_new.end()) continue;
    const Side& side = found->second;
    AlertNumbers n = numbers(side.count, class_base[cls], side.installs);
    if (side.count < o.min_count || !EnoughInstalls(n.installs, o)) continue;
    const double lp = PoissonRateTestLogP(side.count, e_new, n.count_base, e_base);
    AddTested(r, {key(AlertRule::kCrashRateRegression, "", cls), std::move(n), false}, lp, o.min_ratio);
  }
}

// ---- hang rule

double HangUsageHours(const HangBuild& b, std::string_view source, std::string_view os, const Range& r) {
  int64_t ms = 0;
  for (const auto& [src, u] : b.usage) {
    if (src == source && OsMatches(os, u.os)) ms += Sum(*u.s, 0, r);
  }
  return static_cast<double>(ms) / kHourMs;
}

void HangRulesForBuild(Round& r, const Index& ix, const HangBuild& nb, std::string_view source,
                       std::string_view os) {
  const AlertOptions& o = r.o;
  const int64_t st = r.snap.stream_time_ms;
  const int64_t age_hours = FloorDiv(st, kHourMs) - FloorDiv(nb.first_ms, kHourMs) + 1;
  struct Base {
    const HangBuild* b;
    Range range;
  };
  std::vector<Base> bases;
  auto it = ix.hang_builds.lower_bound({nb.channel, nb.build_date});
  while (it != ix.hang_builds.begin() && static_cast<int>(bases.size()) < o.baseline_builds) {
    --it;
    const HangBuild& b = it->second;
    if (b.channel != nb.channel) break;
    if (b.first_ms == INT64_MAX) continue;
    if (HangUsageHours(b, source, os, Range{}) < o.min_baseline_usage_hours) continue;
    bases.push_back({&b, BaselineRange(o, b.first_ms, age_hours)});
  }
  if (static_cast<int>(bases.size()) < MinBaselineBuilds(o)) return;
  const double e_new = HangUsageHours(nb, source, os, Range{});
  double e_base = 0;
  std::vector<double> e_bases;
  std::vector<std::string> base_ids;
  for (const Base& b : bases) {
    e_bases.push_back(HangUsageHours(*b.b, source, os, b.range));
    e_base += e_bases.back();
    base_ids.push_back(b.b->build_date);
  }
  if (!(e_new > 0) || !(e_base > 0)) return;

  struct HangSide {
    int64_t count = 0, us = 0;
    HyperLogLog installs;  // of the pings that reported the hangs (empty: none had a client id)
  };
  std::map<std::string, HangSide> sig_new, sig_base;
  std::map<std::string, std::vector<int64_t>> sig_by_base;  // hang counts per baseline build
  for (const HangSeriesRef& h : nb.hangs) {
    if (h.source != source || !OsMatches(os, h.os)) continue;
    HangSide& s = sig_new[h.signature];
    s.us += h.s->total.v[0];
    s.count += h.s->total.v[1];
    s.installs.Merge(h.s->total.installs);
  }
  for (size_t bi = 0; bi < bases.size(); ++bi) {
    const Base& b = bases[bi];
    for (const HangSeriesRef& h : b.b->hangs) {
      if (h.source != source || !OsMatches(os, h.os)) continue;
      const int64_t count = Sum(*h.s, 1, b.range);
      std::vector<int64_t>& per_base = sig_by_base[h.signature];
      per_base.resize(bases.size());
      per_base[bi] += count;
      if (!sig_new.count(h.signature)) continue;
      HangSide& s = sig_base[h.signature];
      s.us += Sum(*h.s, 0, b.range);
      s.count += count;
    }
  }
  double dispersion = 0;
  if (o.overdispersion == Overdispersion::kEstimate) {
    std::vector<std::vector<int64_t>> counts;
    for (auto& [sig, per_base] : sig_by_base) {
      if (sig != kOtherSeries) counts.push_back(std::move(per_base));
    }
    dispersion = EstimateRateDispersion(e_bases, counts);
  }
  for (const auto& [sig, side] : sig_new) {
    if (sig == kOtherSeries || side.count < o.min_count) continue;
    // Installs are known when the pings carried a client id (main pings do; Mozilla's bhr
    // pings do not, and then the guard cannot apply: ADR 0006, 0017).
    const std::optional<int64_t> installs = KnownInstalls(side.installs);
    if (!EnoughInstalls(installs, o)) continue;
    const HangSide& base = sig_base[sig];
    AlertNumbers n;
    n.installs = installs;
    n.dispersion = dispersion;
    n.count_new = side.count;
    n.count_base = base.count;
    n.exposure_new = e_new;
    n.exposure_base = e_base;
    n.hang_ms_new = side.us / 1000;
    n.hang_ms_base = base.us / 1000;
    // The gate is on hang time per usage hour; the test is on hang counts.
    n.ratio = RateRatio(static_cast<double>(side.us), e_new, static_cast<double>(base.us), e_base);
    n.baseline_builds = base_ids;
    n.age_hours = static_cast<double>(st - nb.first_ms) / kHourMs;
    const double lp = DispersedRateTestLogP(side.count, e_new, base.count, e_bases, dispersion);
    AddTested(r,
              {AlertKey{AlertRule::kHangSpike, nb.channel, std::string(os), nb.build_date, sig,
                        std::string(source)},
               std::move(n), false},
              lp, o.min_ratio);
  }
}

// ---- burst

// Sums of one series over the burst window and the trailing baseline before it, from the
// per-bucket points when they reach back far enough, else from the hourly ones.
struct BurstRanges {
  bool use_points = true;
  int64_t window_lo = 0, window_hi = 0;      // (lo, hi]
  int64_t baseline_lo = 0, baseline_hi = 0;  // (lo, hi]
};

BurstRanges MakeBurstRanges(const Snapshot& snap, const AlertOptions& o) {
  BurstRanges b;
  const int64_t w = o.burst_window.count(), base = o.burst_baseline.count();
  int64_t longest = 0;
  for (int64_t x : snap.windows_ms) longest = std::max(longest, x);
  const int64_t unit = (w + base <= longest && snap.bucket_ms > 0) ? snap.bucket_ms : kHourMs;
  b.use_points = unit == snap.bucket_ms;
  // The window ends with the last unit that is complete in both usage and crashes: the
  // two arrive through different topics, and a window holding the crashes of minutes
  // whose usage has not arrived yet would look like a burst.
  int64_t end = snap.stream_time_ms;
  for (Table t : {Table::kBuildUsage, Table::kCrashes}) {
    const int64_t at = snap.table_time_ms[static_cast<size_t>(t)];
    if (at != INT64_MIN) end = std::min(end, at);
  }
  const int64_t last_complete = FloorDiv(end + 1, unit) - 1;
  const int64_t w_units = std::max<int64_t>(1, w / unit), base_units = std::max<int64_t>(1, base / unit);
  b.window_hi = last_complete;
  b.window_lo = last_complete - w_units;
  b.baseline_hi = b.window_lo;
  b.baseline_lo = b.window_lo - base_units;
  return b;
}

std::pair<int64_t, int64_t> BurstSums(const MergedSeries& s, size_t i, const BurstRanges& b) {
  if (b.use_points) {
    return {SumPoints(s.points, i, b.window_lo, b.window_hi),
            SumPoints(s.points, i, b.baseline_lo, b.baseline_hi)};
  }
  return {SumPoints(s.hourly, i, b.window_lo, b.window_hi),
          SumPoints(s.hourly, i, b.baseline_lo, b.baseline_hi)};
}

void BurstRules(Round& r, const Index& ix) {
  const Snapshot& snap = r.snap;
  const AlertOptions& o = r.o;
  const BurstRanges br = MakeBurstRanges(snap, o);
  const std::optional<size_t> span = snap.SpanIndex(o.burst_window.count());
  struct Exposure {
    double window = 0, baseline = 0;
  };
  struct SigSide {
    int64_t window = 0, baseline = 0;
    HyperLogLog installs;
  };
  std::map<std::pair<std::string, std::string>, Exposure> usage, crash_share;  // (channel, os)
  std::map<std::tuple<std::string, std::string, std::string>, SigSide> sigs;   // (channel, os, sig)
  for (const auto& [id, b] : ix.crash_builds) {
    for (const UsageRef& u : b.usage) {
      auto [w, base] = BurstSums(*u.s, 0, br);
      Exposure& e = usage[{b.channel, u.os}];
      e.window += static_cast<double>(w) / kHourMs;
      e.baseline += static_cast<double>(base) / kHourMs;
    }
    for (const CrashSeriesRef& c : b.crashes) {
      auto [w, base] = BurstSums(*c.s, 0, br);
      Exposure& e = crash_share[{b.channel, c.os}];
      e.window += static_cast<double>(w);
      e.baseline += static_cast<double>(base);
      if (w == 0 && base == 0) continue;
      SigSide& s = sigs[{b.channel, c.os, c.signature}];
      s.window += w;
      s.baseline += base;
      if (w > 0) s.installs.Merge(span && *span < c.s->spans.size() ? c.s->spans[*span].installs : c.s->total.installs);
    }
  }
  for (const auto& [k, side] : sigs) {
    const auto& [channel, os, sig] = k;
    if (sig == kOtherSeries || side.window < o.min_count) continue;
    const bool shares = o.exposure == ExposureMode::kCrashShare || !ix.channels_with_usage.count(channel);
    const Exposure& e = shares ? crash_share[{channel, os}] : usage[{channel, os}];
    if (!(e.window > 0) || !(e.baseline > 0)) continue;
    const std::optional<int64_t> installs = KnownInstalls(side.installs);
    if (!EnoughInstalls(installs, o)) continue;
    AlertNumbers n;
    n.count_new = side.window;
    n.count_base = side.baseline;
    n.exposure_new = e.window;
    n.exposure_base = e.baseline;
    n.exposure = shares ? ExposureMode::kCrashShare : ExposureMode::kUsageHours;
    n.ratio = RateRatio(static_cast<double>(side.window), e.window, static_cast<double>(side.baseline), e.baseline);
    n.installs = installs;
    n.age_hours = static_cast<double>(o.burst_window.count()) / kHourMs;
    const double lp = PoissonRateTestLogP(side.window, e.window, side.baseline, e.baseline);
    AddTested(r, {AlertKey{AlertRule::kBurst, channel, os, "", sig, ""}, std::move(n), false}, lp,
              o.min_ratio);
  }
}

}  // namespace

std::vector<AlertCandidate> EvaluateRules(const Snapshot& snap, const AlertOptions& o) {
  Round r{snap, o, {}, {}, {}, {}};
  const Index ix = BuildIndex(snap);
  for (const auto& [id, b] : ix.crash_builds) {
    if (!IsNew(snap, o, b.first_ms)) continue;
    const ExposureMode mode = o.exposure == ExposureMode::kCrashShare || !ix.channels_with_usage.count(b.channel)
                                  ? ExposureMode::kCrashShare
                                  : ExposureMode::kUsageHours;
    if (o.per_os) {
      for (const std::string& os : b.os_names) CrashRulesForBuild(r, ix, b, os, mode);
    } else {
      CrashRulesForBuild(r, ix, b, kAllOs, mode);
    }
  }
  for (const auto& [id, b] : ix.hang_builds) {
    if (!IsNew(snap, o, b.first_ms)) continue;
    std::set<std::string> sources;
    for (const HangSeriesRef& h : b.hangs) sources.insert(h.source);
    for (const std::string& source : sources) {
      if (o.per_os) {
        for (const std::string& os : b.os_names) HangRulesForBuild(r, ix, b, source, os);
      } else {
        HangRulesForBuild(r, ix, b, source, kAllOs);
      }
    }
  }
  BurstRules(r, ix);

  // One family per round: every tested candidate.
  std::vector<double> p(r.log_p.size());
  for (size_t i = 0; i < p.size(); ++i) p[i] = std::exp(r.log_p[i]);
  const std::vector<double> adjusted = AdjustPValues(p, o.multiple_testing);
  const size_t m = p.size();
  for (size_t i = 0; i < m; ++i) {
    AlertCandidate& c = r.out[r.tested[i]];
    c.numbers.p_value = p[i];
    c.numbers.p_adjusted = adjusted[i];
    // Bonferroni in log space too, so p-values that underflow to 0 still compare.
    bool significant = adjusted[i] < o.alpha;
    if (o.multiple_testing == MultipleTesting::kBonferroni) {
      significant = r.log_p[i] + std::log(static_cast<double>(m)) < std::log(o.alpha);
    } else if (o.multiple_testing == MultipleTesting::kNone) {
      significant = r.log_p[i] < std::log(o.alpha);
    }
    const bool ratio_ok = !c.numbers.ratio || *c.numbers.ratio >= r.min_ratio[i];
    c.holds = significant && ratio_ok;
  }
  std::sort(r.out.begin(), r.out.end(),
            [](const AlertCandidate& a, const AlertCandidate& b) { return a.key < b.key; });
  return std::move(r.out);
}

// ------------------------------------------------------------------ JSON

namespace {

void AppendQuery(std::string& out, std::string_view name, std::string_view value) {
  if (value.empty()) return;
  out += out.find('?') == std::string::npos ? '?' : '&';
  out += name;
  out += '=';
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char ch : value) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
}

}  // namespace

std::string DashboardPath(const AlertKey& k) {
  std::string path;
  const std::string_view os = k.os == kAllOs ? "" : std::string_view(k.os);
  switch (k.rule) {
    case AlertRule::kCrashSignatureSpike:
    case AlertRule::kNewCrashSignature:
    case AlertRule::kBurst:
      path = "/#/crashes/signature";
      AppendQuery(path, "signature", k.signature);
      AppendQuery(path, "build_id", k.build);
      break;
    case AlertRule::kCrashRateRegression:
      path = "/#/crashes";
      AppendQuery(path, "build_id", k.build);
      break;
    case AlertRule::kHangSpike:
      path = "/#/hangs";
      AppendQuery(path, "signature", k.signature);
      AppendQuery(path, "build_date", k.build);
      break;
  }
  AppendQuery(path, "channel", k.channel);
  AppendQuery(path, "os", os);
  return path;
}

std::string AlertJson(const Alert& a) {
  const AlertKey& k = a.key;
  const AlertNumbers& n = a.numbers;
  const bool hang = k.rule == AlertRule::kHangSpike;
  JsonWriter w;
  w.BeginObject();
  w.Key("state").String(AlertStateName(a.state));
  w.Key("rule").String(AlertRuleName(k.rule));
  w.Key("channel").String(k.channel);
  w.Key("os").String(k.os);
  w.Key("build");
  k.build.empty() ? w.Null() : w.String(k.build);
  if (!k.build.empty()) w.Key(hang ? "build_date" : "build_id").String(k.build);
  w.Key("version");
  n.version.empty() ? w.Null() : w.String(n.version);
  w.Key("signature");
  k.signature.empty() ? w.Null() : w.String(k.signature);
  if (!k.scope.empty()) w.Key(hang ? "source" : "process").String(k.scope);
  w.Key("count_new").Int(n.count_new);
  w.Key("count_base").Int(n.count_base);
  w.Key("exposure_kind").String(ExposureModeName(n.exposure));
  w.Key("exposure_new").Double(n.exposure_new);
  w.Key("exposure_base").Double(n.exposure_base);
  // Rates: per 1000 usage hours (crashes), per usage hour (hang ms), share (crash_share).
  auto rate = [&](double amount, double exposure) -> std::optional<double> {
    if (!(exposure > 0)) return std::nullopt;
    if (n.exposure == ExposureMode::kCrashShare) return amount / exposure;
    return hang ? amount / exposure : amount * 1000 / exposure;
  };
  w.Key("rate_new").OptDouble(rate(hang ? static_cast<double>(n.hang_ms_new) : n.count_new, n.exposure_new));
  w.Key("rate_base").OptDouble(rate(hang ? static_cast<double>(n.hang_ms_base) : n.count_base, n.exposure_base));
  if (hang) {
    w.Key("hang_ms_new").Int(n.hang_ms_new);
    w.Key("hang_ms_base").Int(n.hang_ms_base);
  }
  w.Key("ratio").OptDouble(n.ratio);
  w.Key("p_value").OptDouble(n.p_value);
  w.Key("p_adjusted").OptDouble(n.p_adjusted);
  w.Key("dispersion").Double(n.dispersion);
  w.Key("installs");
  n.installs ? w.Int(*n.installs) : w.Null();
  if (!n.installs) w.Key("note").String(kInstallsUnknownNote);
  w.Key("baseline_builds").BeginArray();
  for (const std::string& b : n.baseline_builds) w.String(b);
  w.EndArray();
  w.Key("age_hours").Double(n.age_hours);
  w.Key("first_seen").String(FormatTimestamp(EventTime{a.first_seen_ms}));
  w.Key("last_seen").String(FormatTimestamp(EventTime{a.last_seen_ms}));
  w.Key("since").String(FormatTimestamp(EventTime{a.since_ms}));
  w.Key("dashboard_path").String(DashboardPath(k));
  w.EndObject();
  return w.Take();
}

// ------------------------------------------------------------------ engine

AlertEngine::AlertEngine(AlertOptions options) : options_(std::move(options)) {}

std::vector<AlertEvent> AlertEngine::Evaluate(const Snapshot& snap) {
  std::vector<AlertCandidate> candidates = EvaluateRules(snap, options_);
  const auto installs_unknown = static_cast<uint64_t>(std::count_if(
      candidates.begin(), candidates.end(), [](const AlertCandidate& c) { return !c.numbers.installs; }));
  const int64_t st = snap.stream_time_ms;
  std::vector<AlertEvent> events;
  std::lock_guard<std::mutex> lock(mu_);
  std::set<AlertKey> held;
  for (AlertCandidate& c : candidates) {
    if (!c.holds) continue;
    held.insert(c.key);
    auto it = alerts_.find(c.key);
    if (it == alerts_.end() || it->second.state == AlertState::kResolved) {
      const AlertState from = it == alerts_.end() ? AlertState::kInactive : AlertState::kResolved;
      Alert a;
      a.key = c.key;
      a.numbers = std::move(c.numbers);
      a.state = options_.for_evaluations <= 1 ? AlertState::kFiring : AlertState::kPending;
      a.first_seen_ms = a.last_seen_ms = a.since_ms = st;
      a.true_streak = 1;
      events.push_back({a, from});
      alerts_[a.key] = std::move(a);
      continue;
    }
    Alert& a = it->second;
    a.numbers = std::move(c.numbers);
    a.last_seen_ms = st;
    a.false_streak = 0;
    ++a.true_streak;
    if (a.state == AlertState::kPending && a.true_streak >= options_.for_evaluations) {
      a.state = AlertState::kFiring;
      a.since_ms = st;
      events.push_back({a, AlertState::kPending});
    }
  }
  const int64_t forget_after = options_.new_build_days * 24 * kHourMs;
  for (auto it = alerts_.begin(); it != alerts_.end();) {
    Alert& a = it->second;
    if (held.count(a.key)) {
      ++it;
      continue;
    }
    a.true_streak = 0;
    ++a.false_streak;
    if (a.state == AlertState::kPending) {
      Alert gone = a;
      gone.state = AlertState::kInactive;
      gone.since_ms = st;
      events.push_back({std::move(gone), AlertState::kPending});
      it = alerts_.erase(it);
      continue;
    }
    if (a.state == AlertState::kFiring && a.false_streak >= options_.resolve_after) {
      a.state = AlertState::kResolved;
      a.since_ms = st;
      events.push_back({a, AlertState::kFiring});
    } else if (a.state == AlertState::kResolved && st - a.since_ms > forget_after) {
      it = alerts_.erase(it);
      continue;
    }
    ++it;
  }
  std::sort(events.begin(), events.end(),
            [](const AlertEvent& a, const AlertEvent& b) { return a.alert.key < b.alert.key; });
  ++stats_.rounds;
  stats_.tested = candidates.size();
  stats_.installs_unknown += installs_unknown;
  stats_.transitions += events.size();
  RenderLocked();
  return events;
}

void AlertEngine::RenderLocked() {
  std::vector<const Alert*> order;
  stats_.by_state = {};
  for (const auto& [k, a] : alerts_) {
    order.push_back(&a);
    if (a.state != AlertState::kInactive) ++stats_.by_state[static_cast<size_t>(a.state)];
  }
  auto rank = [](AlertState s) { return s == AlertState::kFiring ? 0 : s == AlertState::kPending ? 1 : 2; };
  std::stable_sort(order.begin(), order.end(),
                   [&](const Alert* a, const Alert* b) { return rank(a->state) < rank(b->state); });
  std::string out = "[";
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0) out += ',';
    out += AlertJson(*order[i]);
  }
  out += ']';
  json_ = std::move(out);
}

std::vector<Alert> AlertEngine::Alerts() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Alert> out;
  for (const auto& [k, a] : alerts_) out.push_back(a);
  auto rank = [](AlertState s) { return s == AlertState::kFiring ? 0 : s == AlertState::kPending ? 1 : 2; };
  std::stable_sort(out.begin(), out.end(), [&](const Alert& a, const Alert& b) { return rank(a.state) < rank(b.state); });
  return out;
}

std::string AlertEngine::AlertsJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  return json_;
}

AlertEngineStats AlertEngine::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

// ------------------------------------------------------------------ serialisation
//
//   "SALR" u32 version | u64 count | count × alert | u64 Hash64(everything before)
//   alert: u8 rule, 5 strings (u32 length + bytes), u8 state, i64 first/last/since,
//          i32 true/false streaks, numbers (i64 counts, f64 exposures, u8 mode,
//          optionals as u8 flag + value, string list, string, f64, i64 hang ms,
//          f64 dispersion)

namespace {

constexpr char kMagic[4] = {'S', 'A', 'L', 'R'};
constexpr uint32_t kFormatVersion = 2;  // 2: numbers end with the dispersion

class Writer {
 public:
  template <typename T>
  void Pod(T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    out.append(buf, sizeof(T));
  }
  void Str(const std::string& s) {
    Pod<uint32_t>(static_cast<uint32_t>(s.size()));
    out += s;
  }
  template <typename T>
  void Opt(const std::optional<T>& v) {
    Pod<uint8_t>(v.has_value());
    if (v) Pod<T>(*v);
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  bool Pod(T& v) {
    if (in_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Str(std::string& s) {
    uint32_t n = 0;
    if (!Pod(n) || in_.size() - pos_ < n) return false;
    s.assign(in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  template <typename T>
  bool Opt(std::optional<T>& v) {
    uint8_t has = 0;
    if (!Pod(has) || has > 1) return false;
    if (!has) {
      v.reset();
      return true;
    }
    T x{};
    if (!Pod(x)) return false;
    v = x;
    return true;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace

std::string AlertEngine::Serialize() const {
  std::lock_guard<std::mutex> lock(mu_);
  Writer w;
  w.out.append(kMagic, 4);
  w.Pod<uint32_t>(kFormatVersion);
  w.Pod<uint64_t>(alerts_.size());
  for (const auto& [k, a] : alerts_) {
    w.Pod<uint8_t>(static_cast<uint8_t>(k.rule));
    for (const std::string* s : {&k.channel, &k.os, &k.build, &k.signature, &k.scope}) w.Str(*s);
    w.Pod<uint8_t>(static_cast<uint8_t>(a.state));
    w.Pod<int64_t>(a.first_seen_ms);
    w.Pod<int64_t>(a.last_seen_ms);
    w.Pod<int64_t>(a.since_ms);
    w.Pod<int32_t>(a.true_streak);
    w.Pod<int32_t>(a.false_streak);
    const AlertNumbers& n = a.numbers;
    w.Pod<int64_t>(n.count_new);
    w.Pod<int64_t>(n.count_base);
    w.Pod<double>(n.exposure_new);
    w.Pod<double>(n.exposure_base);
    w.Pod<uint8_t>(static_cast<uint8_t>(n.exposure));
    w.Opt(n.ratio);
    w.Opt(n.p_value);
    w.Opt(n.p_adjusted);
    w.Opt(n.installs);
    w.Pod<uint32_t>(static_cast<uint32_t>(n.baseline_builds.size()));
    for (const std::string& b : n.baseline_builds) w.Str(b);
    w.Str(n.version);
    w.Pod<double>(n.age_hours);
    w.Pod<int64_t>(n.hang_ms_new);
    w.Pod<int64_t>(n.hang_ms_base);
    w.Pod<double>(n.dispersion);
  }
  w.Pod<uint64_t>(Hash64(w.out));
  return std::move(w.out);
}

Status AlertEngine::Restore(std::string_view bytes) {
  auto corrupt = [](const char* what) { return Status::Corrupt(std::string("alert state: ") + what); };
  if (bytes.size() < 4 + 4 + 8 + 8 || std::memcmp(bytes.data(), kMagic, 4) != 0) return corrupt("not an alert state");
  uint64_t checksum = 0;
  std::memcpy(&checksum, bytes.data() + bytes.size() - 8, 8);
  if (Hash64(bytes.substr(0, bytes.size() - 8)) != checksum) return corrupt("checksum mismatch");
  Reader r(bytes.substr(4, bytes.size() - 12));
  uint32_t version = 0;
  uint64_t count = 0;
  if (!r.Pod(version) || version != kFormatVersion) return corrupt("unsupported format version");
  if (!r.Pod(count)) return corrupt("truncated");
  std::map<AlertKey, Alert> restored;
  for (uint64_t i = 0; i < count; ++i) {
    Alert a;
    uint8_t rule = 0, state = 0, mode = 0;
    uint32_t bases = 0;
    int32_t ts = 0, fs = 0;
    bool ok = r.Pod(rule) && rule < kAlertRuleCount;
    for (std::string* s : {&a.key.channel, &a.key.os, &a.key.build, &a.key.signature, &a.key.scope}) {
      ok = ok && r.Str(*s);
    }
    ok = ok && r.Pod(state) && state <= static_cast<uint8_t>(AlertState::kResolved);
    ok = ok && r.Pod(a.first_seen_ms) && r.Pod(a.last_seen_ms) && r.Pod(a.since_ms) && r.Pod(ts) && r.Pod(fs);
    AlertNumbers& n = a.numbers;
    ok = ok && r.Pod(n.count_new) && r.Pod(n.count_base) && r.Pod(n.exposure_new) && r.Pod(n.exposure_base) &&
         r.Pod(mode) && mode <= 1 && r.Opt(n.ratio) && r.Opt(n.p_value) && r.Opt(n.p_adjusted) &&
         r.Opt(n.installs) && r.Pod(bases);
    for (uint32_t b = 0; ok && b < bases; ++b) {
      std::string id;
      ok = r.Str(id);
      n.baseline_builds.push_back(std::move(id));
    }
    ok = ok && r.Str(n.version) && r.Pod(n.age_hours) && r.Pod(n.hang_ms_new) && r.Pod(n.hang_ms_base) &&
         r.Pod(n.dispersion);
    if (!ok) return corrupt("truncated or malformed alert");
    a.key.rule = static_cast<AlertRule>(rule);
    a.state = static_cast<AlertState>(state);
    a.true_streak = ts;
    a.false_streak = fs;
    n.exposure = static_cast<ExposureMode>(mode);
    restored[a.key] = std::move(a);
  }
  if (!r.done()) return corrupt("trailing bytes");
  std::lock_guard<std::mutex> lock(mu_);
  alerts_ = std::move(restored);
  RenderLocked();
  return Status::Ok();
}

}  // namespace seismo
