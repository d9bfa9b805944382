// Releases: a snapshot's series grouped by build, and a build's baseline builds — the
// earlier builds of its channel it is compared with, at equal age (SPEC §5, ADR 0006).
// The alert rules judge new builds with it; /api/v1/builds and /api/v1/releases show the
// same comparison (ADR 0029), so the page and the alerts never disagree on a baseline.
//
//   crash world   (channel, build_id)   kBuildUsage series (usage, sub-process crashes)
//                                       kCrashes series
//   hang world    (channel, build_date) kUsage series (usage per source)
//                                       kHangs series
//
// Builds of each world are ordered by (channel, build) text, so a build's baseline
// builds are the ones just before it (SelectBaselines). Every entry points into the
// snapshot, which must outlive the index; sums over hours read the hours' sums of the
// series (series_data.h), never a copy.
//
// Threading: built and read by one thread (an evaluation round, one request).
#pragma once

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/core/huge_pages.h"
#include "seismo/parse/document.h"

namespace seismo {

// Hour indices [from, to] (inclusive), or the whole retained life.
struct HourRange {
  bool all = true;
  int64_t from = 0;
  int64_t to = 0;
};

// Value `value` of a series summed over `range` (from the hours' sums).
int64_t Sum(const SeriesData& series, size_t value, const HourRange& range);

struct CrashBuild {
  Sym channel = kNoId, build = kNoId;  // build: the build id
  Sym version = kNoId;
  int64_t first_ms = INT64_MAX;
  std::vector<const SeriesData*> usage;    // kBuildUsage, in key order
  std::vector<const SeriesData*> crashes;  // kCrashes
  std::vector<Sym> os_names;               // in text order
};

// A build's hang series: a million at 10⁶ series, on huge pages (huge_pages.h). In no order
// a reader may depend on: a full index lists them as it walks the table, one made from the
// previous snapshot's (IndexSnapshotFrom) keeps that one's order without the removed series
// and lists the added after them. Every reader sums what it reads (CountHangs,
// HangCountsByAge, the hang rule, the flame-graph diff), so their answers are the same either
// way (tests/unit/alert/rules_test.cc checks it).
using BuildSeries = std::vector<const SeriesData*, HugePageAllocator<const SeriesData*>>;

// What a build's hang series alone give its first_ms and os_names, kept beside them so that an
// index made from the previous one updates both by the changed series instead of reading every
// series of the build: the earliest first_ms and how many series hold it, and each OS's series.
struct HangListStats {
  int64_t first_ms = INT64_MAX;
  uint64_t at_first = 0;                     // series whose first_ms is first_ms
  std::vector<std::pair<Sym, uint64_t>> os;  // (OS, its series), none at 0, in no order

  void Add(const SeriesData& series);
  // Takes out one series that was added. False when it was the last at first_ms: the earliest
  // of the others is not known without reading them (Of).
  [[nodiscard]] bool Remove(const SeriesData& series);
  static HangListStats Of(const BuildSeries& hangs);
  friend bool operator==(const HangListStats&, const HangListStats&) = default;
};

struct HangBuild {
  Sym channel = kNoId, build = kNoId;  // build: the build date
  int64_t first_ms = INT64_MAX;        // of its usage and hang series
  std::vector<const SeriesData*> usage;  // kUsage (every source)
  BuildSeries hangs;                     // kHangs (every source), in no order (above)
  std::vector<Sym> os_names;             // of its usage and hang series, in text order
  HangListStats hang_stats;              // of `hangs`
};

struct BuildIndex {
  std::vector<CrashBuild> crash_builds;          // by (channel, build_id) text
  std::vector<HangBuild> hang_builds;            // by (channel, build_date) text
  absl::flat_hash_set<Sym> channels_with_usage;  // channels with main-ping usage
};

BuildIndex IndexSnapshot(const Snapshot& snap);
// The index of `snap` made from `before`, the index of a snapshot of the same symbol table, and
// the hang series the two snapshots differ by (row_changes.h ChangedRows(kHangs): `removed`
// rows of before's snapshot, `added` rows of snap): before's hang lists without the removed
// series, with the added ones, and the crash world and the hang world's usage read in full
// (small tables). The same index IndexSnapshot(snap) makes, but for the order of each build's
// hang series (BuildSeries); it costs the changed series and a copy of the lists, where the
// full index reads every hang series (Snapshot::BuildsFrom, the warm-up's round, ADR 0034).
// Changes that are not before's rows (a removed series before's index does not hold) break
// ChangedRows' contract: the index is then made in full.
BuildIndex IndexSnapshotFrom(const Snapshot& snap, const BuildIndex& before,
                             std::span<const SeriesData* const> removed,
                             std::span<const SeriesData* const> added);

// Which earlier builds a build is compared with ([alerts] keys of the same names).
struct BaselinePolicy {
  int baseline_builds = 3;                // earlier builds compared against
  int min_baseline_builds = 2;            // fewer qualifying earlier builds: no baseline
  double min_baseline_usage_hours = 100;  // a baseline build must have reached this
  bool age_matched = true;                // compare with the same age of each baseline
};

// The time both of the crash world's tables have reached: the earlier of stream time and
// the latest usage and crash report times (they arrive through different topics).
int64_t CrashWorldTime(const Snapshot& snap);

// How far a crash build is judged and how old it is then. Usage and crash reports arrive
// through different topics; when one lags the other, the build is judged up to the hour
// both have reached (`judged`), and its age (in whole hours, counting the hour of its
// first ping) is taken there: a crash rate over usage that has not arrived yet would look
// like a regression. nullopt when only the leading topic has seen the build yet.
struct JudgedAge {
  HourRange judged;
  int64_t age_hours = 0;
  int64_t end_ms = 0;  // the time it is judged at
};
std::optional<JudgedAge> CrashBuildAge(const Snapshot& snap, const CrashBuild& build);
// A hang build is judged up to stream time.
JudgedAge HangBuildAge(const Snapshot& snap, const HangBuild& build);

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
// whole-life exposure reached `needed`, newest first, at most policy.baseline_builds;
// each compared over its first `age_hours` hours when age-matched. None when fewer than
// the minimum qualify (a single earlier build cannot tell a regression from ordinary
// build-to-build variation). `exposure(build, range)` is the comparison's exposure.
template <typename Build, typename Exposure>
Baselines<Build> SelectBaselines(const Snapshot& snap, const std::vector<Build>& builds, size_t index,
                                 const BaselinePolicy& policy, int64_t age_hours, double needed,
                                 const Exposure& exposure) {
  Baselines<Build> baselines;
  const size_t wanted = static_cast<size_t>(std::max(0, policy.baseline_builds));
  for (size_t earlier = index; earlier-- > 0 && baselines.builds.size() < wanted;) {
    const Build& build = builds[earlier];
    if (build.channel != builds[index].channel) break;
    if (build.first_ms == INT64_MAX) continue;
    if (exposure(build, HourRange{}) < needed) continue;
    HourRange range;
    if (policy.age_matched) {
      const int64_t from = FloorDiv(build.first_ms, kHourMs);
      range = HourRange{false, from, from + age_hours - 1};
    }
    baselines.builds.push_back({&build, range, exposure(build, range)});
  }
  const int minimum = std::max(1, std::min(policy.min_baseline_builds, policy.baseline_builds));
  if (static_cast<int>(baselines.builds.size()) < minimum) return {};
  for (const Baseline<Build>& base : baselines.builds) {
    baselines.exposures.push_back(base.exposure);
    baselines.exposure += base.exposure;
    baselines.ids.emplace_back(snap.Text(base.build->build));
  }
  return baselines;
}

// ------------------------------------------------------------------ comparisons
//
// A build beside its baselines at equal age, as the alert rules compare them: the build
// over its judged range (CrashBuildAge, HangBuildAge), each baseline build over its first
// age_hours hours (age-matched; its whole life when the policy says not), pooled. The
// exposure is usage hours (all OSes); a baseline must have reached
// policy.min_baseline_usage_hours.

inline constexpr size_t kCrashClassCount = static_cast<size_t>(CrashClass::kOther) + 1;

// A crash build's counts over some hours, as the series hold them.
struct CrashCounts {
  int64_t usage_ms = 0;
  std::array<int64_t, kCrashClassCount> reports{};     // crash reports by class (CrashClass order)
  std::array<int64_t, kCrashClassCount> main_pings{};  // SUBPROCESS_CRASHES_WITH_DUMP (gpu, plugin, GMP)
  int64_t startup = 0;                                 // crash reports with StartupCrash
  void Add(const CrashCounts& other);
};

// What a build's counts amount to: by class, gpu, plugin and GMP the larger of reports and
// main pings (SubprocessCrashCount, ADR 0026); totals of several builds add these.
struct CrashTotals {
  int64_t usage_ms = 0;
  std::array<int64_t, kCrashClassCount> by_class{};
  int64_t startup = 0;
  int64_t total = 0;  // every class
  static CrashTotals Of(const CrashCounts& counts);
  void Add(const CrashTotals& other);
};

// Which crash reports or hangs a comparison counts: every one (nullopt), or those of one
// signature (an id no series holds, kNoId, matches none). Main pings' sub-process counts
// carry no signature: a signature's comparison counts crash reports alone.
using SignatureScope = std::optional<Sym>;

// A build's counts over `range` (every OS).
CrashCounts CountCrashes(const Snapshot& snap, const CrashBuild& build, const HourRange& range,
                         SignatureScope signature = std::nullopt);

struct CrashComparison {
  JudgedAge age;
  CrashTotals build;                         // over its judged range
  CrashTotals baseline;                      // the baselines', each over its first age_hours hours, added
  std::vector<std::string> baseline_builds;  // newest first
};
// nullopt while the build is not judged yet or has too few qualifying baseline builds.
std::optional<CrashComparison> CompareCrashBuild(const Snapshot& snap, const BuildIndex& index, size_t at,
                                                 const BaselinePolicy& policy,
                                                 SignatureScope signature = std::nullopt);

// A hang build's counts of one source (bhr, main) over some hours.
struct HangCounts {
  int64_t usage_ms = 0;
  int64_t hang_us = 0;
  int64_t hang_count = 0;
  void Add(const HangCounts& other);
};
HangCounts CountHangs(const HangBuild& build, Sym source, const HourRange& range,
                      SignatureScope signature = std::nullopt);

// The index of a channel's hang build of `date`, or of its newest when `date` is empty;
// nullopt when the channel has none.
std::optional<size_t> FindHangBuild(const Snapshot& snap, const BuildIndex& index, std::string_view channel,
                                    std::string_view date);

// The source a hang build is shown by: `want` ("bhr" or "main") when given, else bhr when
// the build has bhr usage, else main; nullopt when it has no usage of that source.
std::optional<Sym> ShownHangSource(const Snapshot& snap, const HangBuild& build,
                                   const std::optional<std::string>& want);

struct HangComparison {
  JudgedAge age;
  HangCounts build;                          // its whole life
  HangCounts baseline;                       // the baselines', each over its first age_hours hours, added
  std::vector<std::string> baseline_builds;  // build dates, newest first
  std::vector<Baseline<HangBuild>> baselines;  // the same builds and the hours each is compared over
};
std::optional<HangComparison> CompareHangBuild(const Snapshot& snap, const BuildIndex& index, size_t at,
                                               Sym source, const BaselinePolicy& policy,
                                               SignatureScope signature = std::nullopt);

// Hour by hour of a build's age: element k holds its (k+1)th hour, the hour of its first
// ping being its first; `hours` elements (later hours are not read).
std::vector<CrashCounts> CrashCountsByAge(const Snapshot& snap, const CrashBuild& build, int64_t hours,
                                          SignatureScope signature = std::nullopt);
std::vector<HangCounts> HangCountsByAge(const HangBuild& build, Sym source, int64_t hours,
                                        SignatureScope signature = std::nullopt);

}  // namespace seismo
