// burst (SPEC §5, docs/adr/0006-alerts.md): per (channel, OS, signature) over every
// build, the burst window against the trailing burst_baseline before it.
//
//   ──────────── baseline ─────────────┬──── window ────┐
//   (baseline_lo               baseline_hi = window_lo   window_hi]   last complete unit
//
// Units are buckets when the window and its baseline fit in the longest window (the
// buckets a snapshot's time series hold), else hours.
#include <algorithm>
#include <cmath>

#include "round.h"
#include "seismo/alert/stats.h"
#include "seismo/core/syms_map.h"

namespace seismo::alert_detail {
namespace {

struct BurstRanges {
  bool use_points = true;                    // units are buckets (else hours)
  int64_t first_point = 0;                   // the first bucket a time series holds
  int64_t window_lo = 0, window_hi = 0;      // (lo, hi] in units
  int64_t baseline_lo = 0, baseline_hi = 0;  // (lo, hi] in units
  BucketRange window_buckets, baseline_buckets;  // with use_points: what SumUnits reads
};

BurstRanges MakeBurstRanges(const Snapshot& snap, const AlertOptions& options) {
  BurstRanges ranges;
  const int64_t window = options.burst_window.count(), baseline = options.burst_baseline.count();
  int64_t longest = 0;
  for (int64_t kept : snap.windows_ms) longest = std::max(longest, kept);
  const int64_t unit_ms = (window + baseline <= longest && snap.bucket_ms > 0) ? snap.bucket_ms : kHourMs;
  ranges.use_points = unit_ms == snap.bucket_ms;
  if (ranges.use_points) ranges.first_point = snap.StreamBucket() - longest / snap.bucket_ms + 1;
  // The window ends with the last unit that is complete in both usage and crashes: the
  // two arrive through different topics, and a window holding the crashes of minutes
  // whose usage has not arrived yet would look like a burst.
  const int64_t end = CrashWorldTime(snap);
  const int64_t last_complete = FloorDiv(end + 1, unit_ms) - 1;
  const int64_t window_units = std::max<int64_t>(1, window / unit_ms);
  const int64_t baseline_units = std::max<int64_t>(1, baseline / unit_ms);
  ranges.window_hi = last_complete;
  ranges.window_lo = last_complete - window_units;
  ranges.baseline_hi = ranges.window_lo;
  ranges.baseline_lo = ranges.window_lo - baseline_units;
  if (ranges.use_points) {
    ranges.window_buckets =
        BucketRange::Of(std::max(ranges.window_lo + 1, ranges.first_point), ranges.window_hi, snap.bucket_ms);
    ranges.baseline_buckets = BucketRange::Of(std::max(ranges.baseline_lo + 1, ranges.first_point),
                                              ranges.baseline_hi, snap.bucket_ms);
  }
  return ranges;
}

// Value `value` of a series over the units (lo, hi]. Buckets are read within the longest
// window only (the buckets a snapshot's time series hold: Snapshot::Points), through the
// range made once per round (`buckets`).
int64_t SumUnits(const SeriesData& series, size_t value, const BurstRanges& ranges, int64_t lo, int64_t hi,
                 const BucketRange& buckets) {
  if (!ranges.use_points) return Sum(series, value, HourRange{false, lo + 1, hi});
  return SumBuckets(series, buckets)[value];
}

std::pair<int64_t, int64_t> BurstSums(const SeriesData& series, size_t value, const BurstRanges& ranges) {
  return {SumUnits(series, value, ranges, ranges.window_lo, ranges.window_hi, ranges.window_buckets),
          SumUnits(series, value, ranges, ranges.baseline_lo, ranges.baseline_hi, ranges.baseline_buckets)};
}

struct Exposure {
  double window = 0, baseline = 0;
};

struct SignatureSide {
  int64_t window = 0, baseline = 0;
  HyperLogLog installs;
};

}  // namespace

void BurstRule(Round& round, const BuildIndex& index) {
  const Snapshot& snap = round.snap();
  const AlertOptions& options = round.options();
  const BurstRanges ranges = MakeBurstRanges(snap, options);
  const std::optional<size_t> span = snap.SpanIndex(options.burst_window.count());
  const BucketRange span_buckets = span ? snap.SpanRange(*span) : BucketRange{};
  // Usage hours are summed in build order, each build's rows in key order (the order of
  // the floating-point sums is part of the result).
  SymsMap<2, Exposure> usage, crash_share;  // (channel, os)
  SymsMap<3, SignatureSide> signatures;     // (channel, os, signature)
  for (const CrashBuild& build : index.crash_builds) {
    for (const SeriesData* series : build.usage) {
      auto [window, baseline] = BurstSums(*series, 0, ranges);
      Exposure& exposure = usage[{build.channel, series->key[build_field::kOs]}];
      exposure.window += static_cast<double>(window) / kHourMs;
      exposure.baseline += static_cast<double>(baseline) / kHourMs;
    }
    for (const SeriesData* series : build.crashes) {
      const SeriesKey& key = series->key;
      auto [window, baseline] = BurstSums(*series, 0, ranges);
      Exposure& exposure = crash_share[{build.channel, key[crash_field::kOs]}];
      exposure.window += static_cast<double>(window);
      exposure.baseline += static_cast<double>(baseline);
      if (window == 0 && baseline == 0) continue;
      SignatureSide& side = signatures[{build.channel, key[crash_field::kOs], key[crash_field::kSignature]}];
      side.window += window;
      side.baseline += baseline;
      if (window > 0) side.installs.Merge(span ? InstallsOfBuckets(*series, span_buckets) : series->installs);
    }
  }
  for (const auto& [channel_os_signature, side] : signatures) {
    const auto& [channel, os, signature] = channel_os_signature;
    if (signature == snap.symbols->other() || side.window < options.min_count) continue;
    const bool shares =
        options.exposure == ExposureMode::kCrashShare || !index.channels_with_usage.contains(channel);
    const Exposure& exposure = shares ? crash_share[{channel, os}] : usage[{channel, os}];
    if (!(exposure.window > 0) || !(exposure.baseline > 0)) continue;
    const std::optional<int64_t> installs = KnownInstalls(side.installs);
    if (!EnoughInstalls(installs, options)) continue;
    AlertNumbers numbers;
    numbers.count_new = side.window;
    numbers.count_base = side.baseline;
    numbers.exposure_new = exposure.window;
    numbers.exposure_base = exposure.baseline;
    numbers.exposure = shares ? ExposureMode::kCrashShare : ExposureMode::kUsageHours;
    numbers.ratio = RateRatio(static_cast<double>(side.window), exposure.window,
                              static_cast<double>(side.baseline), exposure.baseline);
    numbers.installs = installs;
    numbers.age_hours = static_cast<double>(options.burst_window.count()) / kHourMs;
    const double log_p = PoissonRateTestLogP(side.window, exposure.window, side.baseline, exposure.baseline);
    round.AddTested(
        AlertKey{AlertRule::kBurst, TextOf(snap, channel), TextOf(snap, os), "", TextOf(snap, signature), ""},
        std::move(numbers), log_p, options.min_ratio);
  }
}

}  // namespace seismo::alert_detail
