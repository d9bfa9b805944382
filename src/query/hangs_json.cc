#include "seismo/query/hangs_json.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <span>

#include "seismo/core/huge_pages.h"
#include "seismo/core/json_writer.h"
#include "seismo/core/syms_map.h"
#include "seismo/core/time.h"
#include "seismo/query/answer_bound.h"
#include "seismo/query/bucket_sums.h"
#include "seismo/query/hang_groups.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/heaviest.h"
#include "seismo/query/id_sums.h"
#include "seismo/query/replay_output.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

constexpr size_t kTopStacks = 5;
// The most one of a row's stacks writes besides its frames' texts and their commas:
// {"stack":[],"frames_omitted":N,"hang_ms":D,"hang_count":N}, and a comma (121 bytes at most).
constexpr size_t kStackBytes = 128;

using GroupKey = HangGroupKey;  // a row's grouping fields (hang_groups.h HangGroupOf)

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

Sym SourceId(const Snapshot& snap, std::string_view source) {
  return snap.symbols != nullptr ? snap.symbols->text().Find(source).value_or(kNoId) : kNoId;
}

Filters HangFilters(const Query& q, const std::string& source) {
  Filters filters = q.filters;
  filters[Dim::kSource] = source;
  return filters;
}

std::string HangsJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits,
                      const HangRows* shared, const HangGroups* kept) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  const std::string source = HangSource(snap, q);
  const SymsMap<2, int64_t> usage_by_date = UsageByDate(snap, q, win, source);
  int64_t usage_ms = 0;
  for (const auto& [date, ms] : usage_by_date) usage_ms += ms;

  const Filters filters = HangFilters(q, source);
  // The groups kept by the warm-up (hang_groups.h), when they are this query's.
  if (kept != nullptr) {
    if (!kept->Serves(q.by, win.window_ms, filters, snap.symbols, SourceId(snap, source))) kept = nullptr;
  }
  // Else summed from the rows. By signature the groups can be as many as the series: two
  // passes, the groups' sums (summed by (process and thread, signature id) through IdSums),
  // then the stacks of the rows shown only, read through the signature index (a stack table
  // per group would cost a hash map per series). The other groupings have few groups: one
  // pass sums the groups (in a hash map) and their stacks at once, so the rows are walked and
  // their windows summed once, not twice.
  // A million of each by signature at 10⁶ series: blocks of huge pages (huge_pages.h).
  std::vector<std::pair<GroupKey, HangSums>, HugePageAllocator<std::pair<GroupKey, HangSums>>> groups;
  // Each selected row with a value in the window (a row without one has no stack of its own).
  auto for_each_row = [&](auto&& add) { ForEachHangRow(snap, win, filters, shared, add); };
  // The stacks by (group, stack): by signature a group is a shown row, else one of `groups`.
  IdSums stack_sums;
  // By signature, not kept: the groups are the reduced entries of `signature_sums`, a group
  // per entry, its process and thread those of the entry's `threads` (not copied into
  // `groups`: a million entries at 10⁶ series).
  IdSums signature_sums;
  std::span<const IdSums::Entry> signature_groups;
  std::vector<std::array<Sym, 2>> threads;
  if (kept == nullptr && q.by == HangsBy::kSignature) {
    SymsMap<2, uint32_t> thread_of;  // (process, thread) -> group
    IdSums& sums = signature_sums;
    sums.Reserve(CandidateRows(snap, Table::kHangs, filters).size());  // at most a row each
    for_each_row([&](const SeriesKey& k, const HangSums& v) {
      const std::array<Sym, 2> thread{k[hang_field::kProcess], k[hang_field::kThread]};
      const auto [it, added] = thread_of.try_emplace(thread, static_cast<uint32_t>(threads.size()));
      if (added) threads.push_back(thread);
      sums.Add(it->second, k[hang_field::kSignature], v);
    });
    signature_groups = sums.Reduce();
  } else if (kept == nullptr) {
    SymsMap<3, uint32_t> group_at;  // index in `groups`
    for_each_row([&](const SeriesKey& k, const HangSums& v) {
      const auto [it, added] =
          group_at.try_emplace(HangGroupOf(q.by, k), static_cast<uint32_t>(groups.size()));
      if (added) groups.push_back({it->first, HangSums{}});
      groups[it->second].second.Add(v);
      stack_sums.Add(it->second, k[hang_field::kStack], v);
    });
  }
  // fn(key, sums, group) for each group, summed here or kept.
  auto for_each_group = [&](auto&& fn) {
    if (kept != nullptr) {
      kept->ForEachGroup(fn);
      return;
    }
    if (q.by == HangsBy::kSignature) {
      for (size_t i = 0; i < signature_groups.size(); ++i) {
        const IdSums::Entry& e = signature_groups[i];
        fn(GroupKey{threads[e.group][0], threads[e.group][1], e.id}, e.sums, i);
      }
      return;
    }
    for (size_t i = 0; i < groups.size(); ++i) fn(groups[i].first, groups[i].second, i);
  };

  struct Row {
    GroupKey key;
    const HangSums* sums;
    int64_t usage_ms;
    std::optional<double> rate;
    uint32_t group;  // index of its group: in `groups`, or `signature_groups` by signature
  };
  // The groups that can be shown. By signature and by thread every rate divides a group's
  // hang time by one usage: a rate is monotone in the hang time, and without usage no group
  // has one, so the order below ranks by hang time first and only the groups at or above the
  // limit-th heaviest can be in its first `limit` (query/heaviest.h). By build date each
  // group has a usage of its own: every group.
  const int64_t least = q.by == HangsBy::kBuildDate ? std::numeric_limits<int64_t>::min()
                        : kept != nullptr           ? kept->NthHeaviest(q.limit)
                        : q.by == HangsBy::kSignature
                            ? NthHeaviest(signature_groups.begin(), signature_groups.end(), q.limit,
                                          [](const IdSums::Entry& e) { return e.sums.hang_us; })
                            : NthHeaviest(groups.begin(), groups.end(), q.limit,
                                          [](const auto& g) { return g.second.hang_us; });
  std::vector<Row, HugePageAllocator<Row>> rows;
  if (q.by == HangsBy::kBuildDate) {
    // By build date: every group, each rated over its own usage, then the first `limit` by
    // hang_ms_per_hour descending, groups without usage last, then by hang ms; ties in the
    // grouping fields' order.
    rows.reserve(kept != nullptr ? 0 : groups.size());
    for_each_group([&](const GroupKey& k, const HangSums& g, size_t i) {
      auto it = usage_by_date.find(DateKey{k[0], k[1]});
      const int64_t u = it == usage_by_date.end() ? 0 : it->second;
      rows.push_back({k, &g, u, PerUsageHour(g.hang_us, u), static_cast<uint32_t>(i)});
    });
    const size_t shown = std::min(rows.size(), q.limit);
    std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown), rows.end(),
                      [&snap](const Row& a, const Row& b) {
                        if (a.rate.has_value() != b.rate.has_value()) return a.rate.has_value();
                        if (a.rate && *a.rate != *b.rate) return *a.rate > *b.rate;
                        if (a.sums->hang_us != b.sums->hang_us) return a.sums->hang_us > b.sums->hang_us;
                        return TextsLess(snap, a.key, b.key);
                      });
    rows.resize(shown);
  } else {
    // By signature and by thread every group shares one usage: the rate order is the hang time
    // order (PerUsageHour is monotone in it; without usage no group has a rate), so the first
    // `limit` by hang ms, ties in the grouping fields' order, are kept in a heap of `limit` as
    // the groups go by, and rated once chosen: no row, rate or allocation per candidate (a
    // candidate vector of 10⁵–10⁶ rows cost a quarter of a kept /hangs view at 10⁶).
    auto before = [&snap](const Row& a, const Row& b) {  // a is shown before b
      if (a.sums->hang_us != b.sums->hang_us) return a.sums->hang_us > b.sums->hang_us;
      return TextsLess(snap, a.key, b.key);
    };
    rows.reserve(q.limit);
    for_each_group([&](const GroupKey& k, const HangSums& g, size_t i) {
      if (g.hang_us < least) return;
      const Row row{k, &g, usage_ms, std::nullopt, static_cast<uint32_t>(i)};
      if (rows.size() < q.limit) {
        rows.push_back(row);
        std::push_heap(rows.begin(), rows.end(), before);  // its front: the last shown so far
      } else if (!rows.empty() && before(row, rows.front())) {
        std::pop_heap(rows.begin(), rows.end(), before);
        rows.back() = row;
        std::push_heap(rows.begin(), rows.end(), before);
      }
    });
    std::sort_heap(rows.begin(), rows.end(), before);
    for (Row& r : rows) r.rate = PerUsageHour(r.sums->hang_us, r.usage_ms);
  }

  // By signature, the second pass: the shown rows' stacks, a group per row, read from the
  // snapshot's signature index (the rows holding each shown signature), not a walk of every
  // row: its cost is the shown signatures' rows. The same rows as the first pass read: those
  // that pass the filters with a value in the window.
  if (q.by == HangsBy::kSignature) {
    for (size_t i = 0; i < rows.size(); ++i) rows[i].group = static_cast<uint32_t>(i);
    std::vector<uint32_t> by_signature(rows.size());  // the shown rows, a signature's together
    for (uint32_t i = 0; i < by_signature.size(); ++i) by_signature[i] = i;
    std::sort(by_signature.begin(), by_signature.end(),
              [&rows](uint32_t a, uint32_t b) { return rows[a].key[2] < rows[b].key[2]; });
    RowFilter filter(snap, Table::kHangs, filters);
    for (size_t begin = 0, end = 0; begin < by_signature.size(); begin = end) {
      const Sym signature = rows[by_signature[begin]].key[2];
      end = begin;
      while (end < by_signature.size() && rows[by_signature[end]].key[2] == signature) ++end;
      const std::span<const uint32_t> shown_here(by_signature.data() + begin, end - begin);
      // The index's hash of the text: the intern table's (0 for a row without one).
      const uint64_t hash = signature == kNoId ? 0 : snap.symbols->text().Hash(signature);
      for (const SeriesData* s : snap.RowsWithTextHash(Table::kHangs, hang_field::kSignature, hash)) {
        const SeriesKey& k = s->key;
        if (k[hang_field::kSignature] != signature) continue;  // another text of the same hash
        const auto row = std::find_if(shown_here.begin(), shown_here.end(), [&](uint32_t r) {
          return rows[r].key[0] == k[hang_field::kProcess] && rows[r].key[1] == k[hang_field::kThread];
        });
        if (row == shown_here.end() || !filter.Matches(k)) continue;
        const Values v = ValuesIn(*s, win);
        if (v[0] == 0 && v[1] == 0) continue;
        stack_sums.Add(*row, k[hang_field::kStack], HangSums{v[0], v[1]});
      }
    }
  }
  // Each group's stacks: kept, or a run of the reduced entries (sorted by group first).
  std::vector<std::span<const IdSums::Entry>> row_stacks(rows.size());
  if (kept != nullptr && q.by != HangsBy::kSignature) {
    for (size_t i = 0; i < rows.size(); ++i) row_stacks[i] = kept->StacksOf(rows[i].group);
  }
  const std::span<const IdSums::Entry> stack_entries = stack_sums.Reduce();
  absl::flat_hash_map<uint32_t, std::span<const IdSums::Entry>> group_stacks;
  for (size_t begin = 0, end = 0; begin < stack_entries.size(); begin = end) {
    end = begin;
    while (end < stack_entries.size() && stack_entries[end].group == stack_entries[begin].group) ++end;
    group_stacks[stack_entries[begin].group] = stack_entries.subspan(begin, end - begin);
  }
  for (size_t i = 0; i < rows.size() && !group_stacks.empty(); ++i) {
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
    const GroupKey& k = r.key;
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
    // The row without its texts and stacks' frames: its fields and numbers, and each shown
    // stack's (kStackBytes), reserved before it is written, so the answer stays within the
    // bound whatever its frames (a fuzzer found /hangs answers up to 612 bytes past it).
    size_t head = 256 + stacks.size() * kStackBytes;
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
    w.Key("stacks").BeginArray();
    size_t reserved = stacks.size() * kStackBytes;  // the stacks' own bytes not written yet
    for (const IdSums::Entry& e : stacks) {
      const StackId stack = e.id;
      const HangSums& sums = e.sums;
      w.BeginObject();
      w.Key("stack").BeginArray();
      const std::span<const Sym> frames = snap.symbols->Frames(stack);
      size_t written = 0;
      while (written < frames.size() &&
             bound.Fits(JsonTextBound(snap.Text(frames[written])) + 1 + reserved)) {
        w.String(snap.Text(frames[written++]));
      }
      w.EndArray();
      if (written < frames.size()) w.Key("frames_omitted").Uint(frames.size() - written);
      w.Key("hang_ms").Double(static_cast<double>(sums.hang_us) / 1000.0);
      w.Key("hang_count").Int(sums.hang_count);
      w.EndObject();
      reserved -= kStackBytes;
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  bool truncated = false;
  WriteOmitted(w, "rows_omitted", rows_written, rows.size(), truncated);
  w.EndObject();
  return w.Take();
}

std::string HangsTimeseriesJson(const Snapshot& snap, const Query& q, const BucketSums* kept) {
  const std::string source = HangSource(snap, q);
  const TimeAxis axis = AxisFor(snap, q.window_ms);
  std::vector<std::array<int64_t, 2>> hangs(axis.size()), usage(axis.size());
  const Filters filters = HangFilters(q, source);
  if (kept != nullptr && kept->Serves(filters, snap.symbols, snap.bucket_ms, SourceId(snap, source))) {
    kept->AddTo(axis, hangs);
  } else {
    RowFilter hangs_filter(snap, Table::kHangs, filters);
    for (const SeriesData* s : CandidateRows(snap, Table::kHangs, filters)) {
      if (hangs_filter.Matches(s->key)) AddPoints(*s, axis, hangs);
    }
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
