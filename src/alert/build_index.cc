#include "build_index.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>

namespace seismo::alert_detail {
namespace {

// The first bucket whose start falls in `hour` (HourOfBucket's inverse).
int64_t FirstBucketOfHour(int64_t hour, int64_t bucket_ms) { return -FloorDiv(-hour * kHourMs, bucket_ms); }

// Orders builds by (channel, build) text and sorts each build's OS names by text.
template <typename Build>
void Order(const Snapshot& snap, std::vector<Build>& builds) {
  auto text_less = [&snap](Sym lhs, Sym rhs) { return lhs != rhs && snap.Text(lhs) < snap.Text(rhs); };
  std::sort(builds.begin(), builds.end(), [&](const Build& lhs, const Build& rhs) {
    if (lhs.channel != rhs.channel) return text_less(lhs.channel, rhs.channel);
    return text_less(lhs.build, rhs.build);
  });
  for (Build& build : builds) {
    std::sort(build.os_names.begin(), build.os_names.end(), text_less);
    build.os_names.erase(std::unique(build.os_names.begin(), build.os_names.end()), build.os_names.end());
  }
}

// Where the build of (channel, build) is in `builds`, added when new.
template <typename Build>
size_t BuildAt(std::vector<Build>& builds, absl::flat_hash_map<std::array<Sym, 2>, size_t>& at, Sym channel,
               Sym build) {
  auto [it, added] = at.try_emplace({channel, build}, builds.size());
  if (added) builds.emplace_back().channel = channel;
  return it->second;
}

}  // namespace

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t Sum(const Snapshot& snap, const SeriesData& series, size_t value, const HourRange& range) {
  if (range.all) return series.total[value];
  const int64_t first = FirstBucketOfHour(range.from, snap.bucket_ms);
  const int64_t last = FirstBucketOfHour(range.to + 1, snap.bucket_ms) - 1;
  return SumBuckets(series, first, last, snap.bucket_ms)[value];
}

bool IsNew(const Snapshot& snap, const AlertOptions& options, int64_t first_ms) {
  return first_ms != INT64_MAX && snap.stream_time_ms - first_ms < options.new_build_days * 24 * kHourMs;
}

BuildIndex IndexSnapshot(const Snapshot& snap) {
  BuildIndex index;
  absl::flat_hash_map<std::array<Sym, 2>, size_t> crash_at, hang_at;
  // A build's version is the first non-empty one of its rows in key order: build usage
  // rows first, then crash rows. Of one build's crash rows, the first in key order with a
  // version is the one with the least (product, version).
  struct CrashVersion {
    Sym product = kNoId, version = kNoId;
  };
  std::vector<CrashVersion> crash_versions;
  auto has_version = [&snap](Sym version) { return version != kNoId && !snap.Text(version).empty(); };

  // Build usage in key order: its rows' order is the order of the burst rule's sums.
  for (const SeriesData* series : snap.sorted(Table::kBuildUsage)) {
    const SeriesKey& key = series->key;
    CrashBuild& build =
        index.crash_builds[BuildAt(index.crash_builds, crash_at, key[build_field::kChannel], key[build_field::kBuildId])];
    build.build = key[build_field::kBuildId];
    if (!has_version(build.version)) build.version = key[build_field::kVersion];
    build.first_ms = std::min(build.first_ms, series->first_ms);
    build.usage.push_back(series);
    build.os_names.push_back(key[build_field::kOs]);
    if (series->total[0] > 0) index.channels_with_usage.insert(key[build_field::kChannel]);
  }
  for (const SeriesData* series : snap.table(Table::kCrashes)) {
    const SeriesKey& key = series->key;
    const size_t at = BuildAt(index.crash_builds, crash_at, key[crash_field::kChannel], key[crash_field::kBuildId]);
    CrashBuild& build = index.crash_builds[at];
    build.build = key[crash_field::kBuildId];
    build.first_ms = std::min(build.first_ms, series->first_ms);
    build.crashes.push_back(series);
    build.os_names.push_back(key[crash_field::kOs]);
    if (crash_versions.size() <= at) crash_versions.resize(at + 1);
    CrashVersion& first = crash_versions[at];
    const Sym product = key[crash_field::kProduct], version = key[crash_field::kVersion];
    if (!has_version(version)) continue;
    if (first.version == kNoId || std::pair(snap.Text(product), snap.Text(version)) <
                                      std::pair(snap.Text(first.product), snap.Text(first.version))) {
      first = {product, version};
    }
  }
  for (size_t at = 0; at < crash_versions.size(); ++at) {
    CrashBuild& build = index.crash_builds[at];
    if (!has_version(build.version) && crash_versions[at].version != kNoId) build.version = crash_versions[at].version;
  }
  for (const SeriesData* series : snap.table(Table::kUsage)) {
    const SeriesKey& key = series->key;
    HangBuild& build =
        index.hang_builds[BuildAt(index.hang_builds, hang_at, key[usage_field::kChannel], key[usage_field::kBuildDate])];
    build.build = key[usage_field::kBuildDate];
    build.first_ms = std::min(build.first_ms, series->first_ms);
    build.usage.push_back(series);
    build.os_names.push_back(key[usage_field::kOs]);
  }
  for (const SeriesData* series : snap.table(Table::kHangs)) {
    const SeriesKey& key = series->key;
    HangBuild& build =
        index.hang_builds[BuildAt(index.hang_builds, hang_at, key[hang_field::kChannel], key[hang_field::kBuildDate])];
    build.build = key[hang_field::kBuildDate];
    build.first_ms = std::min(build.first_ms, series->first_ms);
    build.hangs.push_back(series);
    build.os_names.push_back(key[hang_field::kOs]);
  }
  Order(snap, index.crash_builds);
  Order(snap, index.hang_builds);
  return index;
}

}  // namespace seismo::alert_detail
