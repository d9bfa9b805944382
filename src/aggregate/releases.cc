#include "seismo/aggregate/releases.h"

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "seismo/aggregate/row_changes.h"
#include "seismo/aggregate/subprocess_crashes.h"
#include "seismo/core/syms_map.h"

namespace seismo {
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

  // Where the build (channel, build) is, added (with no series) when new.
  size_t At(Sym channel, Sym build) {
    auto [it, added] = at_.try_emplace({channel, build}, builds_.size());
    if (added) {
      Build& b = builds_.emplace_back();
      b.channel = channel;
      b.build = build;
    }
    return it->second;
  }

  // Adds `series` to its build's `list`; returns where the build is.
  size_t Add(const SeriesData& series, std::vector<const SeriesData*> Build::*list) {
    const SeriesKey& key = series.key;
    const size_t at = At(key[channel_], key[build_]);
    Build& build = builds_[at];
    build.first_ms = std::min(build.first_ms, series.first_ms);
    (build.*list).push_back(&series);
    AddOs(at, key[os_]);
    return at;
  }

  // Adds a hang series to its build's hangs and their stats (HangBuild only).
  void AddHang(const SeriesData& series) {
    Build& build = builds_[At(series.key[channel_], series.key[build_])];
    build.hangs.push_back(&series);
    build.hang_stats.Add(series);
  }

 private:
  // A build's OS names stay few however many series it has (a million hang series of one
  // build: a million names to sort by text in Order): a repeat of the last one is not
  // added, and past twice the distinct count, the list is deduplicated by id.
  void AddOs(size_t at, Sym os) {
    std::vector<Sym>& names = builds_[at].os_names;
    if (!names.empty() && names.back() == os) return;
    names.push_back(os);
    if (distinct_.size() <= at) distinct_.resize(at + 1, 0);
    if (names.size() <= 2 * distinct_[at] + 8) return;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    distinct_[at] = names.size();
  }

  std::vector<Build>& builds_;
  const size_t channel_, build_, os_;
  SymsMap<2, size_t> at_;
  std::vector<size_t> distinct_;  // per build, its OS names' count at their last deduplication
};

}  // namespace

int64_t Sum(const SeriesData& series, size_t value, const HourRange& range) {
  if (range.all) return series.total()[value];
  // Whole hours: their sums (the hours are ascending).
  int64_t sum = 0;
  auto hour = std::lower_bound(series.hours.begin(), series.hours.end(), range.from,
                               [](const auto& chunk, int64_t from) { return chunk->hour < from; });
  for (; hour != series.hours.end() && (*hour)->hour <= range.to; ++hour) sum += (*hour)->sum()[value];
  return sum;
}

namespace {

// Every build of the crash world, and the hang world's builds from their usage series (the
// hang series are added by the caller).
void IndexAllButHangs(const Snapshot& snap, BuildIndex& index, BuildsOf<HangBuild>& hang_builds) {
  // kCrashes keys start with their kBuildUsage key, kHangs keys with their kUsage key:
  // one field position serves both tables of a world.
  static_assert(int{crash_field::kChannel} == build_field::kChannel &&
                int{crash_field::kBuildId} == build_field::kBuildId &&
                int{crash_field::kOs} == build_field::kOs);
  static_assert(int{hang_field::kChannel} == usage_field::kChannel &&
                int{hang_field::kBuildDate} == usage_field::kBuildDate &&
                int{hang_field::kOs} == usage_field::kOs);
  BuildsOf<CrashBuild> crash_builds(index.crash_builds, build_field::kChannel, build_field::kBuildId,
                                    build_field::kOs);
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
    if (series->total()[0] > 0) index.channels_with_usage.insert(build.channel);
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
}

// Each hang build's first time and OS names with its hang series', then both worlds in order.
void FinishIndex(const Snapshot& snap, BuildIndex& index) {
  for (HangBuild& build : index.hang_builds) {
    build.first_ms = std::min(build.first_ms, build.hang_stats.first_ms);
    for (const auto& [os, series] : build.hang_stats.os) build.os_names.push_back(os);
  }
  Order(snap, index.crash_builds);
  Order(snap, index.hang_builds);
}

BuildsOf<HangBuild> HangBuildsOf(BuildIndex& index) {
  return BuildsOf<HangBuild>(index.hang_builds, usage_field::kChannel, usage_field::kBuildDate,
                             usage_field::kOs);
}

}  // namespace

void HangListStats::Add(const SeriesData& series) {
  if (series.first_ms < first_ms) {
    first_ms = series.first_ms;
    at_first = 0;
  }
  if (series.first_ms == first_ms) ++at_first;
  const Sym name = series.key[hang_field::kOs];
  // A build's series come in runs of one OS more often than not: the last one first.
  if (!os.empty() && os.back().first == name) {
    ++os.back().second;
    return;
  }
  for (auto& [known, n] : os) {
    if (known == name) {
      ++n;
      return;
    }
  }
  os.emplace_back(name, 1);
}

bool HangListStats::Remove(const SeriesData& series) {
  const Sym name = series.key[hang_field::kOs];
  for (size_t i = 0; i < os.size(); ++i) {
    if (os[i].first != name) continue;
    if (--os[i].second == 0) {
      os[i] = os.back();
      os.pop_back();
    }
    break;
  }
  if (series.first_ms != first_ms) return true;
  return --at_first > 0 || first_ms == INT64_MAX;
}

HangListStats HangListStats::Of(const BuildSeries& hangs) {
  HangListStats stats;
  for (const SeriesData* series : hangs) stats.Add(*series);
  return stats;
}

BuildIndex IndexSnapshot(const Snapshot& snap) {
  BuildIndex index;
  BuildsOf<HangBuild> hang_builds = HangBuildsOf(index);
  IndexAllButHangs(snap, index, hang_builds);
  for (const SeriesData* series : snap.table(Table::kHangs)) hang_builds.AddHang(*series);
  FinishIndex(snap, index);
  return index;
}

BuildIndex IndexSnapshotFrom(const Snapshot& snap, const BuildIndex& before,
                             std::span<const SeriesData* const> removed,
                             std::span<const SeriesData* const> added) {
  BuildIndex index;
  BuildsOf<HangBuild> hang_builds = HangBuildsOf(index);
  IndexAllButHangs(snap, index, hang_builds);
  // Before's build of each removed and added series (added ones of a new build: none).
  SymsMap<2, size_t> was;
  for (size_t i = 0; i < before.hang_builds.size(); ++i) {
    was.try_emplace({before.hang_builds[i].channel, before.hang_builds[i].build}, i);
  }
  constexpr size_t kNone = SIZE_MAX;
  auto build_of = [&was](const SeriesData& series) {
    auto it = was.find({series.key[hang_field::kChannel], series.key[hang_field::kBuildDate]});
    return it == was.end() ? kNone : it->second;
  };
  // Each build's removed and added series (added ones of a build before did not have: by
  // AddHang after). A removed series before's index does not hold, or holds less often than
  // removed, breaks ChangedRows' contract: the index is then made in full, never made wrong.
  std::vector<std::vector<const SeriesData*>> gone(before.hang_builds.size());
  std::vector<std::vector<const SeriesData*>> come(before.hang_builds.size());
  std::vector<const SeriesData*> new_builds;
  for (const SeriesData* series : removed) {
    const size_t at = build_of(*series);
    if (at == kNone) return IndexSnapshot(snap);
    gone[at].push_back(series);
  }
  for (const SeriesData* series : added) {
    const size_t at = build_of(*series);
    (at == kNone ? new_builds : come[at]).push_back(series);
  }
  for (size_t i = 0; i < before.hang_builds.size(); ++i) {
    const HangBuild& was_build = before.hang_builds[i];
    const std::vector<const SeriesData*>& out = gone[i];
    const std::vector<const SeriesData*>& in = come[i];
    if (out.size() > was_build.hangs.size()) return IndexSnapshot(snap);
    if (was_build.hangs.size() == out.size() && in.empty()) continue;  // no hang series left
    HangBuild& build = index.hang_builds[hang_builds.At(was_build.channel, was_build.build)];
    build.hangs.reserve(was_build.hangs.size() - out.size() + in.size());
    if (out.empty()) {
      build.hangs.assign(was_build.hangs.begin(), was_build.hangs.end());
    } else {
      const absl::flat_hash_set<const SeriesData*> left(out.begin(), out.end());
      for (const SeriesData* series : was_build.hangs) {
        if (!left.contains(series)) build.hangs.push_back(series);
      }
      if (build.hangs.size() + out.size() != was_build.hangs.size()) return IndexSnapshot(snap);
    }
    // The added series first: a changed series is removed and added with the same first time,
    // and taken out after its new copy is in, it does not leave its build's earliest time
    // without a series (which would read the whole list again).
    build.hang_stats = was_build.hang_stats;
    for (const SeriesData* series : in) {
      build.hangs.push_back(series);
      build.hang_stats.Add(*series);
    }
    bool known = true;
    for (const SeriesData* series : out) known = build.hang_stats.Remove(*series) && known;
    if (!known) build.hang_stats = HangListStats::Of(build.hangs);
  }
  for (const SeriesData* series : new_builds) hang_builds.AddHang(*series);
  FinishIndex(snap, index);
  return index;
}

const BuildIndex& Snapshot::Builds() const {
  std::call_once(builds_->once, [this] {
    builds_->index = std::make_shared<const BuildIndex>(IndexSnapshot(*this));
    builds_->made.store(true, std::memory_order_release);
  });
  return *builds_->index;
}

bool Snapshot::BuildsFrom(const Snapshot& before, std::span<const SeriesData* const> removed,
                          std::span<const SeriesData* const> added) const {
  if (symbols == nullptr || before.symbols != symbols || &before == this) return false;
  if (!before.builds_->made.load(std::memory_order_acquire)) return false;
  // Most rows changed (another shard set's snapshot): the full index is the cheaper one.
  if (!CheaperThanAWalk(removed.size() + added.size(), before.table(Table::kHangs).size())) return false;
  bool made = false;
  std::call_once(builds_->once, [&] {
    builds_->index =
        std::make_shared<const BuildIndex>(IndexSnapshotFrom(*this, *before.builds_->index, removed, added));
    builds_->made.store(true, std::memory_order_release);
    made = true;
  });
  return made;
}

int64_t CrashWorldTime(const Snapshot& snap) {
  int64_t end = snap.stream_time_ms;
  for (Table table : {Table::kBuildUsage, Table::kCrashes}) {
    const int64_t at = snap.table_time_ms[static_cast<size_t>(table)];
    if (at != INT64_MIN) end = std::min(end, at);
  }
  return end;
}

std::optional<JudgedAge> CrashBuildAge(const Snapshot& snap, const CrashBuild& build) {
  const int64_t stream_ms = snap.stream_time_ms;
  const int64_t end = CrashWorldTime(snap);
  if (build.first_ms == INT64_MAX || end < build.first_ms) return std::nullopt;
  JudgedAge age;
  age.judged = end < stream_ms ? HourRange{false, FloorDiv(build.first_ms, kHourMs), FloorDiv(end, kHourMs)}
                               : HourRange{};
  age.age_hours = FloorDiv(end, kHourMs) - FloorDiv(build.first_ms, kHourMs) + 1;
  age.end_ms = end;
  return age;
}

JudgedAge HangBuildAge(const Snapshot& snap, const HangBuild& build) {
  JudgedAge age;
  age.age_hours = FloorDiv(snap.stream_time_ms, kHourMs) - FloorDiv(build.first_ms, kHourMs) + 1;
  age.end_ms = snap.stream_time_ms;
  return age;
}

}  // namespace seismo

// ------------------------------------------------------------------ comparisons

namespace seismo {
namespace {

// Where a crash class's count of main pings' SUBPROCESS_CRASHES_WITH_DUMP is in a
// kBuildUsage series' values (delta.h); 0 (usage) for the classes main pings do not count.
size_t MainPingValue(CrashClass crash_class) {
  switch (crash_class) {
    case CrashClass::kGpu:
      return 2;
    case CrashClass::kPlugin:
      return 3;
    case CrashClass::kGmplugin:
      return 4;
    default:
      return 0;
  }
}
constexpr CrashClass kMainPingClasses[] = {CrashClass::kGpu, CrashClass::kPlugin, CrashClass::kGmplugin};

size_t ClassIndex(const Snapshot& snap, Sym crash_class) {
  const std::string_view name = snap.Text(crash_class);
  for (size_t c = 0; c < kCrashClassCount; ++c) {
    if (CrashClassName(static_cast<CrashClass>(c)) == name) return c;
  }
  return static_cast<size_t>(CrashClass::kOther);
}

// Adds one hour's (or range's) values of a crash build's series to `counts`.
void AddUsage(CrashCounts& counts, const Values& v) {
  counts.usage_ms += v[0];
  for (CrashClass c : kMainPingClasses) counts.main_pings[static_cast<size_t>(c)] += v[MainPingValue(c)];
}
void AddCrashes(CrashCounts& counts, size_t crash_class, const Values& v) {
  counts.reports[crash_class] += v[0];
  counts.startup += v[1];
}
void AddHangUsage(HangCounts& counts, const Values& v) { counts.usage_ms += v[0]; }
void AddHangs(HangCounts& counts, const Values& v) {
  counts.hang_us += v[0];
  counts.hang_count += v[1];
}

// `series` summed over `range`, all its values.
Values SumValues(const SeriesData& series, const HourRange& range) {
  Values v{};
  for (size_t i = 0; i < kMaxValues; ++i) v[i] = Sum(series, i, range);
  return v;
}

// Each of `series`' hours within `hours` of `first` (an hour index) given to `add` with its
// age (0 for the first hour).
template <typename Add>
void EachHourOfAge(const SeriesData& series, int64_t first, int64_t hours, const Add& add) {
  for (const auto& chunk : series.hours) {
    const int64_t k = chunk->hour - first;
    if (k >= 0 && k < hours) add(static_cast<size_t>(k), chunk->sum());
  }
}

bool InScope(Sym signature, SignatureScope scope) { return !scope || *scope == signature; }

double UsageHours(const CrashBuild& build, const HourRange& range) {
  double ms = 0;
  for (const SeriesData* usage : build.usage) ms += static_cast<double>(Sum(*usage, 0, range));
  return ms / kHourMs;
}

}  // namespace

void CrashCounts::Add(const CrashCounts& other) {
  usage_ms += other.usage_ms;
  for (size_t c = 0; c < kCrashClassCount; ++c) {
    reports[c] += other.reports[c];
    main_pings[c] += other.main_pings[c];
  }
  startup += other.startup;
}

CrashTotals CrashTotals::Of(const CrashCounts& counts) {
  CrashTotals t;
  t.usage_ms = counts.usage_ms;
  for (size_t c = 0; c < kCrashClassCount; ++c) {
    t.by_class[c] = SubprocessCrashCount(counts.reports[c], counts.main_pings[c]);
    t.total += t.by_class[c];
  }
  t.startup = counts.startup;
  return t;
}

void CrashTotals::Add(const CrashTotals& other) {
  usage_ms += other.usage_ms;
  for (size_t c = 0; c < kCrashClassCount; ++c) by_class[c] += other.by_class[c];
  startup += other.startup;
  total += other.total;
}

CrashCounts CountCrashes(const Snapshot& snap, const CrashBuild& build, const HourRange& range,
                         SignatureScope signature) {
  CrashCounts counts;
  for (const SeriesData* usage : build.usage) {
    AddUsage(counts, SumValues(*usage, range));
    if (signature) counts.main_pings = {};  // they count no signature
  }
  for (const SeriesData* crash : build.crashes) {
    if (!InScope(crash->key[crash_field::kSignature], signature)) continue;
    AddCrashes(counts, ClassIndex(snap, crash->key[crash_field::kClass]), SumValues(*crash, range));
  }
  return counts;
}

std::optional<CrashComparison> CompareCrashBuild(const Snapshot& snap, const BuildIndex& index, size_t at,
                                                 const BaselinePolicy& policy, SignatureScope signature) {
  const CrashBuild& build = index.crash_builds[at];
  const std::optional<JudgedAge> age = CrashBuildAge(snap, build);
  if (!age) return std::nullopt;
  const auto baselines = SelectBaselines(snap, index.crash_builds, at, policy, age->age_hours,
                                         policy.min_baseline_usage_hours, UsageHours);
  if (baselines.builds.empty()) return std::nullopt;
  CrashComparison out;
  out.age = *age;
  out.build = CrashTotals::Of(CountCrashes(snap, build, age->judged, signature));
  // Each baseline build's sub-process counts are settled before they are added (ADR 0026).
  for (const auto& base : baselines.builds) {
    out.baseline.Add(CrashTotals::Of(CountCrashes(snap, *base.build, base.range, signature)));
  }
  out.baseline_builds = baselines.ids;
  return out;
}

void HangCounts::Add(const HangCounts& other) {
  usage_ms += other.usage_ms;
  hang_us += other.hang_us;
  hang_count += other.hang_count;
}

HangCounts CountHangs(const HangBuild& build, Sym source, const HourRange& range, SignatureScope signature) {
  HangCounts counts;
  for (const SeriesData* usage : build.usage) {
    if (usage->key[usage_field::kSource] == source) AddHangUsage(counts, SumValues(*usage, range));
  }
  for (const SeriesData* hang : build.hangs) {
    if (hang->key[hang_field::kSource] != source || !InScope(hang->key[hang_field::kSignature], signature))
      continue;
    AddHangs(counts, SumValues(*hang, range));
  }
  return counts;
}

std::optional<HangComparison> CompareHangBuild(const Snapshot& snap, const BuildIndex& index, size_t at,
                                               Sym source, const BaselinePolicy& policy,
                                               SignatureScope signature) {
  const HangBuild& build = index.hang_builds[at];
  if (build.first_ms == INT64_MAX || snap.stream_time_ms == INT64_MIN) return std::nullopt;
  const JudgedAge age = HangBuildAge(snap, build);
  const auto baselines =
      SelectBaselines(snap, index.hang_builds, at, policy, age.age_hours, policy.min_baseline_usage_hours,
                      [source](const HangBuild& b, const HourRange& range) {
                        return static_cast<double>(CountHangs(b, source, range).usage_ms) / kHourMs;
                      });
  if (baselines.builds.empty()) return std::nullopt;
  HangComparison out;
  out.age = age;
  out.build = CountHangs(build, source, age.judged, signature);
  for (const auto& base : baselines.builds)
    out.baseline.Add(CountHangs(*base.build, source, base.range, signature));
  out.baseline_builds = baselines.ids;
  out.baselines = baselines.builds;
  return out;
}

std::optional<size_t> FindHangBuild(const Snapshot& snap, const BuildIndex& index, std::string_view channel,
                                    std::string_view date) {
  std::optional<size_t> at;  // builds are in (channel, build date) text order: the last is the newest
  for (size_t i = 0; i < index.hang_builds.size(); ++i) {
    const HangBuild& b = index.hang_builds[i];
    if (snap.Text(b.channel) == channel && (date.empty() || snap.Text(b.build) == date)) at = i;
  }
  return at;
}

std::optional<Sym> ShownHangSource(const Snapshot& snap, const HangBuild& build,
                                   const std::optional<std::string>& want) {
  std::optional<Sym> main, bhr;
  for (const SeriesData* usage : build.usage) {
    const Sym source = usage->key[usage_field::kSource];
    (snap.Text(source) == "bhr" ? bhr : main) = source;
  }
  if (want) return *want == "bhr" ? bhr : main;
  return bhr ? bhr : main;
}

std::vector<CrashCounts> CrashCountsByAge(const Snapshot& snap, const CrashBuild& build, int64_t hours,
                                          SignatureScope signature) {
  std::vector<CrashCounts> out(static_cast<size_t>(std::max<int64_t>(hours, 0)));
  if (build.first_ms == INT64_MAX) return out;
  const int64_t first = FloorDiv(build.first_ms, kHourMs);
  for (const SeriesData* usage : build.usage) {
    EachHourOfAge(*usage, first, hours, [&](size_t k, const Values& v) {
      AddUsage(out[k], v);
      if (signature) out[k].main_pings = {};  // they count no signature
    });
  }
  for (const SeriesData* crash : build.crashes) {
    if (!InScope(crash->key[crash_field::kSignature], signature)) continue;
    const size_t c = ClassIndex(snap, crash->key[crash_field::kClass]);
    EachHourOfAge(*crash, first, hours, [&](size_t k, const Values& v) { AddCrashes(out[k], c, v); });
  }
  return out;
}

std::vector<HangCounts> HangCountsByAge(const HangBuild& build, Sym source, int64_t hours,
                                        SignatureScope signature) {
  std::vector<HangCounts> out(static_cast<size_t>(std::max<int64_t>(hours, 0)));
  if (build.first_ms == INT64_MAX) return out;
  const int64_t first = FloorDiv(build.first_ms, kHourMs);
  for (const SeriesData* usage : build.usage) {
    if (usage->key[usage_field::kSource] != source) continue;
    EachHourOfAge(*usage, first, hours, [&](size_t k, const Values& v) { AddHangUsage(out[k], v); });
  }
  for (const SeriesData* hang : build.hangs) {
    if (hang->key[hang_field::kSource] != source || !InScope(hang->key[hang_field::kSignature], signature))
      continue;
    EachHourOfAge(*hang, first, hours, [&](size_t k, const Values& v) { AddHangs(out[k], v); });
  }
  return out;
}

}  // namespace seismo
