#include "seismo/query/hangs_json.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <iterator>
#include <limits>

#include "seismo/core/huge_pages.h"
#include "seismo/core/json_writer.h"
#include "seismo/core/syms_map.h"
#include "seismo/core/time.h"
#include "seismo/query/answer_bound.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/heaviest.h"
#include "seismo/query/id_sums.h"
#include "seismo/query/replay_output.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

constexpr size_t kTopStacks = 5;

// A row's grouping fields: (process, thread, signature), (process, thread) or (build_date,
// channel): a build date's builds differ by channel, and so do their hang rates.
using GroupKey = Syms<3>;

using DateKey = Syms<2>;  // build_date, channel

// Usage (ms) of the selected (source, channel, os, build_date) groups, per (build date, channel).
SymsMap<2, int64_t> UsageByDate(const Snapshot& snap, const Query& q, const WindowSel& win,
                                const std::string& source) {
  SymsMap<2, int64_t> out;
  RowFilter filter(snap, Table::kUsage, HangFilters(q, source));
  for (const SeriesData* s : snap.table(Table::kUsage)) {
    if (!filter.Matches(s->key)) continue;
    out[{s->key[usage_field::kBuildDate], s->key[usage_field::kChannel]}] += ValuesIn(*s, win)[0];
  }
  return out;
}

void WriteRates(JsonWriter& w, const HangSums& s, int64_t usage_ms) {
  w.Key("hang_ms").Double(static_cast<double>(s.hang_us) / 1000.0);
  w.Key("hang_count").Int(s.hang_count);
  w.Key("hang_ms_per_hour").OptDouble(PerUsageHour(s.hang_us, usage_ms));
  w.Key("hang_count_per_hour").OptDouble(PerUsageHour(s.hang_count * 1000, usage_ms));
}

}  // namespace

std::string HangSource(const Snapshot& snap, const Query& q) {
  if (q.filters[Dim::kSource]) return *q.filters[Dim::kSource];
  for (const SeriesData* s : snap.table(Table::kUsage)) {
    if (snap.Text(s->key[usage_field::kSource]) == "bhr") return "bhr";
  }
  return "main";
}

Filters HangFilters(const Query& q, const std::string& source) {
  Filters filters = q.filters;
  filters[Dim::kSource] = source;
  return filters;
}

std::string HangsJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits,
                      const HangRows* shared) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  const std::string source = HangSource(snap, q);
  const SymsMap<2, int64_t> usage_by_date = UsageByDate(snap, q, win, source);
  int64_t usage_ms = 0;
  for (const auto& [date, ms] : usage_by_date) usage_ms += ms;

  auto group_of = [by = q.by](const SeriesKey& k) -> GroupKey {
    switch (by) {
      case HangsBy::kSignature:
        return {k[hang_field::kProcess], k[hang_field::kThread], k[hang_field::kSignature]};
      case HangsBy::kThread:
        return {k[hang_field::kProcess], k[hang_field::kThread], kNoId};
      case HangsBy::kBuildDate:
        return {k[hang_field::kBuildDate], k[hang_field::kChannel], kNoId};
    }
    return {};
  };
  // By signature the groups can be as many as the series: two passes, the groups' sums
  // (summed by (process and thread, signature id) through IdSums), then the stacks of the
  // rows shown only (a stack table per group would cost a hash map per series). The other
  // groupings have few groups: one pass sums the groups (in a hash map) and their stacks at
  // once, so the rows are walked and their windows summed once, not twice.
  // A million of each by signature at 10⁶ series: blocks of huge pages (huge_pages.h).
  std::vector<std::pair<GroupKey, HangSums>, HugePageAllocator<std::pair<GroupKey, HangSums>>> groups;
  const Filters filters = HangFilters(q, source);
  // Each selected row with a value in the window (a row without one has no stack of its own),
  // those of the shown groups only when `shown` is given: both passes' rows.
  auto for_each_row = [&](const SymsMap<3, size_t>* shown, auto&& add) {
    size_t row = 0;
    ForEachHangRow(
        snap, win, filters, shared,
        [&](const SeriesKey& k) {
          if (shown == nullptr) return true;
          const auto it = shown->find(group_of(k));
          if (it == shown->end()) return false;
          row = it->second;
          return true;
        },
        [&](const SeriesKey& k, const HangSums& v) { add(k, v, row); });
  };
  // The stacks by (group, stack): by signature a group is a shown row, else one of `groups`.
  IdSums stack_sums;
  if (q.by == HangsBy::kSignature) {
    SymsMap<2, uint32_t> thread_of;  // (process, thread) -> group
    std::vector<std::array<Sym, 2>> threads;
    IdSums sums;
    for_each_row(nullptr, [&](const SeriesKey& k, const HangSums& v, size_t) {
      const std::array<Sym, 2> thread{k[hang_field::kProcess], k[hang_field::kThread]};
      const auto [it, added] = thread_of.try_emplace(thread, static_cast<uint32_t>(threads.size()));
      if (added) threads.push_back(thread);
      sums.Add(it->second, k[hang_field::kSignature], v);
    });
    const std::span<const IdSums::Entry> reduced = sums.Reduce();
    groups.reserve(reduced.size());
    for (const IdSums::Entry& e : reduced)
      groups.push_back({{threads[e.group][0], threads[e.group][1], e.id}, e.sums});
  } else {
    SymsMap<3, uint32_t> group_at;  // index in `groups`
    for_each_row(nullptr, [&](const SeriesKey& k, const HangSums& v, size_t) {
      const auto [it, added] = group_at.try_emplace(group_of(k), static_cast<uint32_t>(groups.size()));
      if (added) groups.push_back({it->first, HangSums{}});
      groups[it->second].second.Add(v);
      stack_sums.Add(it->second, k[hang_field::kStack], v);
    });
  }

  struct Row {
    const GroupKey* key;
    const HangSums* sums;
    int64_t usage_ms;
    std::optional<double> rate;
    uint32_t group;  // index in `groups`
  };
  // The groups that can be shown. By signature and by thread every rate divides a group's
  // hang time by one usage: a rate is monotone in the hang time, and without usage no group
  // has one, so the order below ranks by hang time first and only the groups at or above the
  // limit-th heaviest can be in its first `limit` (query/heaviest.h). By build date each
  // group has a usage of its own: every group.
  const int64_t least = q.by == HangsBy::kBuildDate
                            ? std::numeric_limits<int64_t>::min()
                            : NthHeaviest(groups.begin(), groups.end(), q.limit,
                                          [](const auto& g) { return g.second.hang_us; });
  std::vector<Row, HugePageAllocator<Row>> rows;
  if (q.by == HangsBy::kBuildDate) rows.reserve(groups.size());  // every group
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& [k, g] = groups[i];
    if (g.hang_us < least) continue;
    int64_t u = usage_ms;
    if (q.by == HangsBy::kBuildDate) {
      auto it = usage_by_date.find(DateKey{k[0], k[1]});
      u = it == usage_by_date.end() ? 0 : it->second;
    }
    rows.push_back({&k, &g, u, PerUsageHour(g.hang_us, u), static_cast<uint32_t>(i)});
  }
  // By hang_ms_per_hour descending, rows without usage last, then by hang ms; ties in
  // the grouping fields' order.
  const size_t shown = std::min(rows.size(), q.limit);
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown), rows.end(),
                    [&snap](const Row& a, const Row& b) {
                      if (a.rate.has_value() != b.rate.has_value()) return a.rate.has_value();
                      if (a.rate && *a.rate != *b.rate) return *a.rate > *b.rate;
                      if (a.sums->hang_us != b.sums->hang_us) return a.sums->hang_us > b.sums->hang_us;
                      return TextsLess(snap, *a.key, *b.key);
                    });
  rows.resize(shown);

  // By signature, the second pass: the shown rows' stacks, a group per row.
  if (q.by == HangsBy::kSignature) {
    SymsMap<3, size_t> row_of;
    for (size_t i = 0; i < rows.size(); ++i) {
      row_of[*rows[i].key] = i;
      rows[i].group = static_cast<uint32_t>(i);
    }
    for_each_row(&row_of, [&](const SeriesKey& k, const HangSums& v, size_t row) {
      stack_sums.Add(static_cast<uint32_t>(row), k[hang_field::kStack], v);
    });
  }
  // Each group's stacks: a run of the reduced entries (sorted by group first).
  const std::span<const IdSums::Entry> stack_entries = stack_sums.Reduce();
  absl::flat_hash_map<uint32_t, std::span<const IdSums::Entry>> group_stacks;
  for (size_t begin = 0, end = 0; begin < stack_entries.size(); begin = end) {
    end = begin;
    while (end < stack_entries.size() && stack_entries[end].group == stack_entries[begin].group) ++end;
    group_stacks[stack_entries[begin].group] = stack_entries.subspan(begin, end - begin);
  }
  std::vector<std::span<const IdSums::Entry>> row_stacks(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto it = group_stacks.find(rows[i].group);
    if (it != group_stacks.end()) row_stacks[i] = it->second;
  }

  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("by").String(q.by == HangsBy::kSignature ? "signature" : q.by == HangsBy::kThread ? "thread" : "build_date");
  w.Key("source").String(source);
  w.Key("usage_hours").Double(UsageHours(usage_ms));
  w.Key("rows").BeginArray();
  const ByteBound bound(w, limits.max_bytes);
  size_t rows_written = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const GroupKey& k = *r.key;
    size_t head = 256;  // the row without its texts and stacks
    for (Sym text : k) head += text == kNoId ? 0 : JsonTextBound(snap.Text(text));
    if (!bound.Fits(head)) break;
    ++rows_written;
    w.BeginObject();
    if (q.by == HangsBy::kBuildDate) {
      w.Key("build_date").String(snap.Text(k[0]));
      w.Key("channel").String(snap.Text(k[1]));
      w.Key("usage_hours").Double(UsageHours(r.usage_ms));
    } else {
      if (q.by == HangsBy::kSignature) w.Key("signature").String(snap.Text(k[2]));
      w.Key("thread").String(snap.Text(k[1]));
      w.Key("process").String(snap.Text(k[0]));
    }
    WriteRates(w, *r.sums, r.usage_ms);
    // Top stacks by hang ms, ties in stack order (by text: ids' order never shows); the
    // texts compared only among the stacks that can be in the top (query/heaviest.h).
    const std::span<const IdSums::Entry> all = row_stacks[i];
    const int64_t least_us = NthHeaviest(all.begin(), all.end(), kTopStacks,
                                         [](const IdSums::Entry& e) { return e.sums.hang_us; });
    std::vector<IdSums::Entry> contenders;
    if (least_us != std::numeric_limits<int64_t>::min()) {
      std::copy_if(all.begin(), all.end(), std::back_inserter(contenders),
                   [least_us](const IdSums::Entry& e) { return e.sums.hang_us >= least_us; });
    }
    const std::span<const IdSums::Entry> ranked = contenders.empty() ? all : std::span(contenders);
    std::vector<IdSums::Entry> stacks(std::min(kTopStacks, ranked.size()));
    std::partial_sort_copy(ranked.begin(), ranked.end(), stacks.begin(), stacks.end(),
                           [&snap](const IdSums::Entry& a, const IdSums::Entry& b) {
                             return a.sums.hang_us != b.sums.hang_us
                                        ? a.sums.hang_us > b.sums.hang_us
                                        : CompareStacks(a.id, b.id, *snap.symbols) < 0;
                           });
    w.Key("stacks").BeginArray();
    for (const IdSums::Entry& e : stacks) {
      const StackId stack = e.id;
      const HangSums& sums = e.sums;
      w.BeginObject();
      w.Key("stack").BeginArray();
      const std::span<const Sym> frames = snap.symbols->Frames(stack);
      size_t written = 0;
      while (written < frames.size() && bound.Fits(JsonTextBound(snap.Text(frames[written])) + 1)) {
        w.String(snap.Text(frames[written++]));
      }
      w.EndArray();
      if (written < frames.size()) w.Key("frames_omitted").Uint(frames.size() - written);
      w.Key("hang_ms").Double(static_cast<double>(sums.hang_us) / 1000.0);
      w.Key("hang_count").Int(sums.hang_count);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  if (rows_written < rows.size()) {
    w.Key("truncated").Bool(true);
    w.Key("rows_omitted").Uint(rows.size() - rows_written);
  }
  w.EndObject();
  return w.Take();
}

std::string HangsTimeseriesJson(const Snapshot& snap, const Query& q) {
  const std::string source = HangSource(snap, q);
  const TimeAxis axis = AxisFor(snap, q.window_ms);
  std::vector<std::array<int64_t, 2>> hangs(axis.size()), usage(axis.size());
  const Filters filters = HangFilters(q, source);
  RowFilter hangs_filter(snap, Table::kHangs, filters);
  for (const SeriesData* s : CandidateRows(snap, Table::kHangs, filters)) {
    if (!hangs_filter.Matches(s->key)) continue;
    AddPoints(*s, axis, hangs);
  }
  RowFilter usage_filter(snap, Table::kUsage, filters);
  for (const SeriesData* s : snap.table(Table::kUsage)) {
    if (!usage_filter.Matches(s->key)) continue;
    AddPoints(*s, axis, usage);
  }
  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("bucket").String(BucketName(axis.PointMs()));
  w.Key("source").String(source);
  w.Key("points").BeginArray();
  for (size_t i = 0; i < axis.size(); ++i) {
    w.BeginObject();
    w.Key("t").String(FormatTimestamp(EventTime{axis.PointStartMs(i)}));
    w.Key("hang_ms").Double(static_cast<double>(hangs[i][0]) / 1000.0);
    w.Key("hang_count").Int(hangs[i][1]);
    w.Key("usage_hours").Double(UsageHours(usage[i][0]));
    w.Key("hang_ms_per_hour").OptDouble(PerUsageHour(hangs[i][0], usage[i][0]));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
