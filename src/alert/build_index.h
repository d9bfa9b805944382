// The alert rules' view of a snapshot: its series grouped by build, without copying
// a series (every entry points into the snapshot, which must outlive the index).
//
//   crash world   (channel, build_id)   kBuildUsage series (usage, sub-process crashes)
//                                       kCrashes series
//   hang world    (channel, build_date) kUsage series (usage per source)
//                                       kHangs series
//
// Builds of each world are ordered by (channel, build) text, so a build's baseline
// builds are the ones just before it (SelectBaselines). Sums over hours read the
// hours' sums of the series (aggregate/series_data.h), never a copy.
//
// Threading: built and read by one evaluation round.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <cstdint>
#include <string>
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/alert/engine.h"

namespace seismo::alert_detail {

int64_t FloorDiv(int64_t value, int64_t divisor);

// Hour indices [from, to] (inclusive), or the whole retained life.
struct HourRange {
  bool all = true;
  int64_t from = 0;
  int64_t to = 0;
};

// Value `value` of a series summed over `range` (from the hours' sums).
int64_t Sum(const SeriesData& series, size_t value, const HourRange& range);

// The OS a rule is evaluated for: one OS, or every OS (kNoId, AlertKey::os kAllOs).
struct OsScope {
  Sym os = kNoId;
  bool Matches(Sym series_os) const { return os == kNoId || os == series_os; }
  std::string Name(const Snapshot& snap) const {
    return os == kNoId ? std::string(kAllOs) : std::string(snap.Text(os));
  }
};

struct CrashBuild {
  Sym channel = kNoId, build = kNoId;  // build: the build id
  Sym version = kNoId;
  int64_t first_ms = INT64_MAX;
  std::vector<const SeriesData*> usage;    // kBuildUsage, in key order
  std::vector<const SeriesData*> crashes;  // kCrashes
  std::vector<Sym> os_names;               // in text order
};

struct HangBuild {
  Sym channel = kNoId, build = kNoId;  // build: the build date
  int64_t first_ms = INT64_MAX;
  std::vector<const SeriesData*> usage;  // kUsage (every source)
  std::vector<const SeriesData*> hangs;  // kHangs (every source)
  std::vector<Sym> os_names;             // in text order
};

struct BuildIndex {
  std::vector<CrashBuild> crash_builds;          // by (channel, build_id) text
  std::vector<HangBuild> hang_builds;            // by (channel, build_date) text
  absl::flat_hash_set<Sym> channels_with_usage;  // channels with main-ping usage
};

BuildIndex IndexSnapshot(const Snapshot& snap);

// Whether a build first seen at `first_ms` is new at the snapshot's stream time.
bool IsNew(const Snapshot& snap, const AlertOptions& options, int64_t first_ms);

// A baseline build of a new one, the hours it is compared over, and its exposure there.
template <typename Build>
struct Baseline {
  const Build* build;
  HourRange range;
  double exposure;
};

template <typename Build>
struct Baselines {
  std::vector<Baseline<Build>> builds;  // newest first
  std::vector<double> exposures;        // of each, over its range
  double exposure = 0;                  // their sum
  std::vector<std::string> ids;         // their build texts (AlertNumbers::baseline_builds)
};

// Baseline builds of builds[index]: the most recent earlier builds of its channel whose
// whole-life exposure reached `needed`, newest first, at most options.baseline_builds;
// each compared over its first `age_hours` hours when age-matched. None when fewer than
// the minimum qualify (a single earlier build cannot tell a regression from ordinary
// build-to-build variation). `exposure(build, range)` is the rule's exposure.
template <typename Build, typename Exposure>
Baselines<Build> SelectBaselines(const Snapshot& snap, const std::vector<Build>& builds, size_t index,
                                 const AlertOptions& options, int64_t age_hours, double needed,
                                 const Exposure& exposure) {
  Baselines<Build> baselines;
  const size_t wanted = static_cast<size_t>(std::max(0, options.baseline_builds));
  for (size_t earlier = index; earlier-- > 0 && baselines.builds.size() < wanted;) {
    const Build& build = builds[earlier];
    if (build.channel != builds[index].channel) break;
    if (build.first_ms == INT64_MAX) continue;
    if (exposure(build, HourRange{}) < needed) continue;
    HourRange range;
    if (options.age_matched) {
      const int64_t from = FloorDiv(build.first_ms, kHourMs);
      range = HourRange{false, from, from + age_hours - 1};
    }
    baselines.builds.push_back({&build, range, exposure(build, range)});
  }
  const int minimum = std::max(1, std::min(options.min_baseline_builds, options.baseline_builds));
  if (static_cast<int>(baselines.builds.size()) < minimum) return {};
  for (const Baseline<Build>& base : baselines.builds) {
    baselines.exposures.push_back(base.exposure);
    baselines.exposure += base.exposure;
    baselines.ids.emplace_back(snap.Text(base.build->build));
  }
  return baselines;
}

}  // namespace seismo::alert_detail
