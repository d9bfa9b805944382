#include "build_index.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>

namespace seismo::alert_detail {
namespace {

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

// The builds of one world as its series are added: each series goes to the build of its
// (channel, build) fields, which are at the same positions in both of the world's tables.
template <typename Build>
class BuildsOf {
 public:
  BuildsOf(std::vector<Build>& builds, size_t channel, size_t build, size_t os)
      : builds_(builds), channel_(channel), build_(build), os_(os) {}

  // Adds `series` to its build's `list`; returns where the build is.
  size_t Add(const SeriesData& series, std::vector<const SeriesData*> Build::*list) {
    const SeriesKey& key = series.key;
    auto [it, added] = at_.try_emplace({key[channel_], key[build_]}, builds_.size());
    Build& build = added ? builds_.emplace_back() : builds_[it->second];
    build.channel = key[channel_];
    build.build = key[build_];
    build.first_ms = std::min(build.first_ms, series.first_ms);
    (build.*list).push_back(&series);
    build.os_names.push_back(key[os_]);
    return it->second;
  }

 private:
  std::vector<Build>& builds_;
  const size_t channel_, build_, os_;
  absl::flat_hash_map<std::array<Sym, 2>, size_t> at_;
};

}  // namespace

int64_t FloorDiv(int64_t value, int64_t divisor) {
  return value / divisor - ((value % divisor != 0) && ((value < 0) != (divisor < 0)));
}

int64_t Sum(const SeriesData& series, size_t value, const HourRange& range) {
  if (range.all) return series.total[value];
  // Whole hours: their sums (the hours are ascending).
  int64_t sum = 0;
  auto hour = std::lower_bound(series.hours.begin(), series.hours.end(), range.from,
                               [](const auto& chunk, int64_t from) { return chunk->hour < from; });
  for (; hour != series.hours.end() && (*hour)->hour <= range.to; ++hour) sum += (*hour)->sum[value];
  return sum;
}

bool IsNew(const Snapshot& snap, const AlertOptions& options, int64_t first_ms) {
  // Before any document was accepted there is no stream time, and nothing is new.
  if (first_ms == INT64_MAX || snap.stream_time_ms == INT64_MIN) return false;
  return snap.stream_time_ms - first_ms < options.new_build_days * 24 * kHourMs;
}

BuildIndex IndexSnapshot(const Snapshot& snap) {
  BuildIndex index;
  // kCrashes keys start with their kBuildUsage key, kHangs keys with their kUsage key:
  // one field position serves both tables of a world.
  static_assert(int{crash_field::kChannel} == build_field::kChannel &&
                int{crash_field::kBuildId} == build_field::kBuildId && int{crash_field::kOs} == build_field::kOs);
  static_assert(int{hang_field::kChannel} == usage_field::kChannel &&
                int{hang_field::kBuildDate} == usage_field::kBuildDate && int{hang_field::kOs} == usage_field::kOs);
  BuildsOf<CrashBuild> crash_builds(index.crash_builds, build_field::kChannel, build_field::kBuildId,
                                    build_field::kOs);
  BuildsOf<HangBuild> hang_builds(index.hang_builds, usage_field::kChannel, usage_field::kBuildDate,
                                  usage_field::kOs);
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
    CrashBuild& build = index.crash_builds[crash_builds.Add(*series, &CrashBuild::usage)];
    if (!has_version(build.version)) build.version = series->key[build_field::kVersion];
    if (series->total[0] > 0) index.channels_with_usage.insert(build.channel);
  }
  for (const SeriesData* series : snap.table(Table::kCrashes)) {
    const size_t at = crash_builds.Add(*series, &CrashBuild::crashes);
    if (crash_versions.size() <= at) crash_versions.resize(at + 1);
    CrashVersion& first = crash_versions[at];
    const Sym product = series->key[crash_field::kProduct], version = series->key[crash_field::kVersion];
    if (!has_version(version)) continue;
    if (first.version == kNoId || std::pair(snap.Text(product), snap.Text(version)) <
                                      std::pair(snap.Text(first.product), snap.Text(first.version))) {
      first = {product, version};
    }
  }
  for (size_t at = 0; at < crash_versions.size(); ++at) {
    CrashBuild& build = index.crash_builds[at];
    if (!has_version(build.version) && crash_versions[at].version != kNoId) {
      build.version = crash_versions[at].version;
    }
  }
  for (const SeriesData* series : snap.table(Table::kUsage)) hang_builds.Add(*series, &HangBuild::usage);
  for (const SeriesData* series : snap.table(Table::kHangs)) hang_builds.Add(*series, &HangBuild::hangs);
  Order(snap, index.crash_builds);
  Order(snap, index.hang_builds);
  return index;
}

}  // namespace seismo::alert_detail
