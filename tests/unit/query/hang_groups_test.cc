// HangGroups (the warm-up's /hangs groups, ADR 0034, issue 19): brought from round to round
// with what the hang rows' update changed, they are the groups and stacks a walk of the rows
// finds, the answers reading them are byte for byte the answers that walk the table, and they
// stay within their memory bound.
#include "seismo/query/hang_groups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "query_fixture.h"
#include "seismo/aggregate/row_changes.h"
#include "seismo/query/flamegraph.h"
#include "seismo/query/hangs_json.h"
#include "seismo/query/id_sums.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

using testing::kHour;
using testing::kMin;
using testing::Q;
using testing::World;

using GroupSums = std::map<HangGroupKey, std::pair<int64_t, int64_t>>;
using StackSums = std::map<std::pair<HangGroupKey, StackId>, std::pair<int64_t, int64_t>>;

// A walk of the rows: each group's sums, and each (group, stack)'s.
std::pair<GroupSums, StackSums> Walk(std::span<const HangRow> rows, HangsBy by, Sym source) {
  GroupSums groups;
  StackSums stacks;
  for (const HangRow& r : rows) {
    if (r.key[hang_field::kSource] != source) continue;
    const HangGroupKey g = HangGroupOf(by, r.key);
    groups[g].first += r.sums.hang_us;
    groups[g].second += r.sums.hang_count;
    if (by == HangsBy::kSignature) continue;
    stacks[{g, r.key[hang_field::kStack]}].first += r.sums.hang_us;
    stacks[{g, r.key[hang_field::kStack]}].second += r.sums.hang_count;
  }
  return {groups, stacks};
}

// What the groups hold, as the walk gives it; and whether each group's stacks are in id order.
std::pair<GroupSums, StackSums> Held(const HangGroups& kept, HangsBy by, bool* stacks_in_order) {
  GroupSums groups;
  StackSums stacks;
  *stacks_in_order = true;
  kept.ForEachGroup([&](const HangGroupKey& g, const HangSums& s, size_t at) {
    EXPECT_TRUE(groups.emplace(g, std::pair(s.hang_us, s.hang_count)).second) << "a group once";
    if (by == HangsBy::kSignature) {
      EXPECT_TRUE(kept.StacksOf(at).empty());
      return;
    }
    const std::span<const IdSums::Entry> of = kept.StacksOf(at);
    EXPECT_FALSE(of.empty()) << "a group has a stack";
    for (size_t i = 0; i < of.size(); ++i) {
      if (i > 0 && of[i - 1].id >= of[i].id) *stacks_in_order = false;
      stacks[{g, of[i].id}] = {of[i].sums.hang_us, of[i].sums.hang_count};
    }
  });
  return {groups, stacks};
}

const char* Name(HangsBy by) {
  return by == HangsBy::kSignature ? "signature" : by == HangsBy::kThread ? "thread" : "build_date";
}

// Over rounds of new keys, changed keys, keys outside the window, quiet rounds, the window
// moving on and series folded into "(other)" (rows that leave), with many equal hang times
// (ties ranked by text): the groups brought with each update's delta are those of a walk of
// the rows, and every
// /hangs answer reading them is the answer that walks the table.
TEST(HangGroups, BroughtFromWhatChangedAreTheGroupsOfAWalk) {
  World w(/*max_series=*/300);
  testing::Lcg next(11);
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  w.Usage("main", "Linux", kHour, 10 * kMin, "beta", "20261118");
  auto hangs = [&](int n, uint64_t keys) {
    for (int i = 0; i < n; ++i) {
      const uint64_t k = next(keys);
      const std::string sig = "Sig" + std::to_string(k % 150);  // most entries of a row or two
      const std::vector<std::string> stack = {"root", "f" + std::to_string(k % 9), sig};
      w.Hang(
          k % 4 == 0 ? "main" : "bhr", k % 3 == 0 ? "Windows" : "Linux", k % 5 == 0 ? "content" : "parent",
          "T" + std::to_string(k % 4), stack, static_cast<int64_t>(1000 * (1 + next(3))), 1,
          next(4) == 0 ? static_cast<int64_t>(70 + next(2000)) * kMin : static_cast<int64_t>(next(59)) * kMin,
          k % 2 == 0 ? "release" : "beta", "202611" + std::to_string(10 + k % 6));
    }
  };
  hangs(300, 200);
  std::shared_ptr<const Snapshot> before = w.Build();
  HangRows rows(*before, kHour, Filters{});
  struct Kept {
    HangsBy by;
    std::string source;
    std::optional<HangGroups> groups;
    std::string os;  // a view's filter (its selection), or none
  };
  // A view's selection: the rows of one OS (compared as the filter compares, any case).
  auto selection_of = [](const Snapshot& snap, const std::string& os, std::optional<RowFilter>& filter) {
    Filters also;
    also[Dim::kOs] = os;
    filter.emplace(snap, Table::kHangs, also);
    return HangGroups::Selection{also, [&filter](const SeriesKey& k) { return filter->Matches(k); }};
  };
  std::vector<Kept> kept;
  for (HangsBy by : {HangsBy::kSignature, HangsBy::kThread, HangsBy::kBuildDate}) {
    for (const char* source : {"bhr", "main"}) {
      for (const char* os : {"", "windows"}) {
        const Sym id = before->symbols->text().Find(source).value_or(kNoId);
        std::optional<RowFilter> filter;
        const HangGroups::Selection selection = selection_of(*before, os, filter);
        kept.push_back(
            {by, source,
             HangGroups::Make(by, kHour, before->symbols, id, rows.rows(), *os ? &selection : nullptr), os});
        ASSERT_TRUE(kept.back().groups.has_value());
      }
    }
  }
  // The flame graph's sums by stack, of each source.
  std::vector<std::pair<std::string, std::optional<HangGroups>>> by_stack;
  for (const char* source : {"bhr", "main"}) {
    by_stack.emplace_back(
        source, HangGroups::MakeByStack(kHour, before->symbols, SourceId(*before, source), rows.rows()));
    ASSERT_TRUE(by_stack.back().second.has_value());
  }
  size_t most_rows = rows.rows().size();
  size_t entries_came_or_went = 0;          // rounds whose delta added or removed rows
  size_t groups_gone = 0, stacks_gone = 0;  // of the walk, from one round to the next
  std::pair<GroupSums, StackSums> walked =
      Walk(rows.rows(), HangsBy::kThread, before->symbols->text().Find("bhr").value_or(kNoId));
  GroupSums signatures =
      Walk(rows.rows(), HangsBy::kSignature, before->symbols->text().Find("bhr").value_or(kNoId)).first;
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    w.Advance(round % 3 == 2 ? 4 * kMin : 0);  // the window moves on: rows change from no delta
    hangs(round % 4 == 0 ? 0 : round % 4 == 1 ? 2 : 70, round < 15 ? 200 : 700);
    const std::shared_ptr<const Snapshot> after = w.Build();
    RowDelta delta;
    const size_t rows_before = rows.rows().size();
    ASSERT_TRUE(rows.Update(*before, *after, ChangedRows(*before, *after, Table::kHangs), &delta));
    entries_came_or_went +=
        delta.left.size() != delta.came.size() || rows.rows().size() != rows_before ? 1 : 0;
    most_rows = std::max(most_rows, rows.rows().size());
    {
      const Sym bhr = after->symbols->text().Find("bhr").value_or(kNoId);
      const std::pair<GroupSums, StackSums> now = Walk(rows.rows(), HangsBy::kThread, bhr);
      const GroupSums now_signatures = Walk(rows.rows(), HangsBy::kSignature, bhr).first;
      for (const auto& [key, sums] : walked.second) stacks_gone += now.second.contains(key) ? 0 : 1;
      for (const auto& [key, sums] : signatures) groups_gone += now_signatures.contains(key) ? 0 : 1;
      walked = now;
      signatures = now_signatures;
    }
    for (Kept& k : kept) {
      SCOPED_TRACE(::testing::Message() << "by " << Name(k.by) << ", source " << k.source << ", os " << k.os);
      const Sym source = after->symbols->text().Find(k.source).value_or(kNoId);
      Filters filters;
      filters[Dim::kSource] = k.source;
      if (!k.os.empty()) filters[Dim::kOs] = k.os;
      ASSERT_TRUE(k.groups->Serves(k.by, kHour, filters, after->symbols, source));
      std::optional<RowFilter> filter;
      const HangGroups::Selection selection = selection_of(*after, k.os, filter);
      ASSERT_TRUE(k.groups->Apply(delta, k.os.empty() ? nullptr : selection.keeps));
      bool in_order = false;
      std::vector<HangRow> selected;
      for (const HangRow& r : rows.rows()) {
        if (k.os.empty() || selection.keeps(r.key)) selected.push_back(r);
      }
      EXPECT_EQ(Held(*k.groups, k.by, &in_order), Walk(selected, k.by, source));
      EXPECT_TRUE(in_order) << "a group's stacks in id order";
      EXPECT_LE(k.groups->MemoryBytes(), HangGroups::KeptBytesFor(most_rows));
      for (const char* limit : {"2", "100"}) {
        const Query q =
            Q(Endpoint::kHangs, std::string("window=1h&by=") + Name(k.by) + "&source=" + k.source +
                                    "&limit=" + limit + (k.os.empty() ? "" : "&os=" + k.os));
        EXPECT_EQ(HangsJson(*after, q, {}, &rows, &*k.groups), HangsJson(*after, q)) << limit;
      }
    }
    for (auto& [source, kept] : by_stack) {
      SCOPED_TRACE(::testing::Message() << "by stack, source " << source);
      Filters filters;
      filters[Dim::kSource] = source;
      const Sym id = SourceId(*after, source);
      ASSERT_TRUE(kept->ServesStacks(kHour, filters, after->symbols, id));
      ASSERT_TRUE(kept->Apply(delta));
      // A walk of the rows, summed by stack as the flame graph sums them.
      IdSums walked;
      for (const HangRow& r : rows.rows()) {
        if (r.key[hang_field::kSource] == id) walked.Add(0, r.key[hang_field::kStack], r.sums);
      }
      const std::span<const IdSums::Entry> want = walked.Reduce();
      const std::span<const IdSums::Entry> got = kept->Stacks();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].group, 0u);
        EXPECT_EQ(got[i].id, want[i].id) << i;
        EXPECT_EQ(got[i].sums.hang_us, want[i].sums.hang_us) << i;
        EXPECT_EQ(got[i].sums.hang_count, want[i].sums.hang_count) << i;
      }
      EXPECT_LE(kept->MemoryBytes(), HangGroups::KeptBytesFor(most_rows, /*by_stack=*/true));
      const Query q = Q(Endpoint::kHangsFlamegraph, std::string("window=1h&source=") + source);
      FlameCarry carry{.by_stack = &*kept};
      EXPECT_EQ(FlamegraphTreeJson(*after, q, {}, &rows, &carry), FlamegraphTreeJson(*after, q));
      EXPECT_TRUE(carry.by_stack_read);
    }
    before = after;
  }
  EXPECT_GE(entries_came_or_went, 10u) << "rows came and went, not only changed";
  EXPECT_GE(groups_gone, 5u) << "groups went";
  EXPECT_GE(stacks_gone, 5u) << "groups' stacks went";
}

// Groups answer only the query they were made for; another one reads the rows.
TEST(HangGroups, ServeOnlyTheirGroupingWindowAndSource) {
  World w;
  w.Usage("bhr", "Linux", kHour, 10 * kMin);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "Sig1"}, 2000, 1, 5 * kMin);
  w.Hang("main", "Linux", "parent", "Gecko", {"root", "Sig2"}, 3000, 1, 5 * kMin);
  const auto snap = w.Build();
  const HangRows rows(*snap, kHour, Filters{});
  const Sym bhr = snap->symbols->text().Find("bhr").value_or(kNoId);
  const Sym main_source = snap->symbols->text().Find("main").value_or(kNoId);
  const std::optional<HangGroups> g =
      HangGroups::Make(HangsBy::kThread, kHour, snap->symbols, bhr, rows.rows());
  ASSERT_TRUE(g.has_value());
  Filters filters;
  filters[Dim::kSource] = "bhr";
  EXPECT_TRUE(g->Serves(HangsBy::kThread, kHour, filters, snap->symbols, bhr));
  EXPECT_FALSE(g->Serves(HangsBy::kSignature, kHour, filters, snap->symbols, bhr)) << "another grouping";
  EXPECT_FALSE(g->Serves(HangsBy::kThread, 0, filters, snap->symbols, bhr)) << "another window";
  EXPECT_FALSE(g->Serves(HangsBy::kThread, kHour, filters, snap->symbols, main_source)) << "another source";
  EXPECT_FALSE(g->Serves(HangsBy::kThread, kHour, filters, nullptr, bhr)) << "other symbols";
  Filters os = filters;
  os[Dim::kOs] = "Linux";
  EXPECT_FALSE(g->Serves(HangsBy::kThread, kHour, os, snap->symbols, bhr)) << "another filter";
  EXPECT_FALSE(g->ServesStacks(kHour, filters, snap->symbols, bhr)) << "not a flame graph's";
  // A query they do not serve is answered from the rows, as without them.
  const Query q = Q(Endpoint::kHangs, "window=1h&by=thread&source=bhr&os=linux");
  EXPECT_EQ(HangsJson(*snap, q, {}, &rows, &*g), HangsJson(*snap, q));
  // Sums by stack serve only a flame graph of their window, source and symbols, without
  // other filters.
  const std::optional<HangGroups> s = HangGroups::MakeByStack(kHour, snap->symbols, bhr, rows.rows());
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->ServesStacks(kHour, filters, snap->symbols, bhr));
  for (HangsBy by : {HangsBy::kSignature, HangsBy::kThread, HangsBy::kBuildDate})
    EXPECT_FALSE(s->Serves(by, kHour, filters, snap->symbols, bhr)) << "not a /hangs answer's";
  EXPECT_FALSE(s->ServesStacks(0, filters, snap->symbols, bhr)) << "another window";
  EXPECT_FALSE(s->ServesStacks(kHour, filters, snap->symbols, main_source)) << "another source";
  EXPECT_FALSE(s->ServesStacks(kHour, os, snap->symbols, bhr)) << "another filter";
  const Query flame = Q(Endpoint::kHangsFlamegraph, "window=1h&source=bhr&os=linux");
  FlameCarry carry{.by_stack = &*s};
  EXPECT_EQ(FlamegraphTreeJson(*snap, flame, {}, &rows, &carry), FlamegraphTreeJson(*snap, flame));
  EXPECT_FALSE(carry.by_stack_read);
  // A view's groups (a selection: its other filters) serve its query only, and answer it as
  // the rows do.
  RowFilter linux_rows(*snap, Table::kHangs, os);
  HangGroups::Selection selection{os, [&linux_rows](const SeriesKey& k) { return linux_rows.Matches(k); }};
  selection.also[Dim::kSource].reset();
  const std::optional<HangGroups> v =
      HangGroups::Make(HangsBy::kThread, kHour, snap->symbols, bhr, rows.rows(), &selection);
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->Serves(HangsBy::kThread, kHour, os, snap->symbols, bhr));
  EXPECT_FALSE(v->Serves(HangsBy::kThread, kHour, filters, snap->symbols, bhr)) << "without the filter";
  Filters os_and_thread = os;
  os_and_thread[Dim::kThread] = "Gecko";
  EXPECT_FALSE(v->Serves(HangsBy::kThread, kHour, os_and_thread, snap->symbols, bhr)) << "one more filter";
  const Query linux_q = Q(Endpoint::kHangs, "window=1h&by=thread&source=bhr&os=Linux");
  EXPECT_EQ(HangsJson(*snap, linux_q, {}, &rows, &*v), HangsJson(*snap, linux_q));
  const std::optional<HangGroups> vs =
      HangGroups::MakeByStack(kHour, snap->symbols, bhr, rows.rows(), &selection);
  ASSERT_TRUE(vs.has_value());
  EXPECT_TRUE(vs->ServesStacks(kHour, os, snap->symbols, bhr));
  EXPECT_FALSE(vs->ServesStacks(kHour, filters, snap->symbols, bhr));
  const Query linux_flame = Q(Endpoint::kHangsFlamegraph, "window=1h&source=bhr&os=Linux");
  FlameCarry view{.by_stack = &*vs};
  EXPECT_EQ(FlamegraphTreeJson(*snap, linux_flame, {}, &rows, &view), FlamegraphTreeJson(*snap, linux_flame));
  EXPECT_TRUE(view.by_stack_read);
}

SeriesKey HangKey(Sym source, Sym thread, StackId stack) {
  SeriesKey k;
  k.table = Table::kHangs;
  k.f[hang_field::kSource] = source;
  k.f[hang_field::kProcess] = 2;
  k.f[hang_field::kThread] = thread;
  k.f[hang_field::kSignature] = 3;
  k.f[hang_field::kStack] = stack;
  return k;
}

// A delta whose rows that left are not in the groups is refused, as is one that takes more
// group numbers than kMaxGroupNumbers; Make refuses such rows too.
TEST(HangGroups, RefuseOtherRowsAndTooManyGroups) {
  std::vector<HangRow> rows;
  for (uint32_t t = 0; t < HangGroups::kMaxGroupNumbers; ++t)
    rows.push_back({HangKey(1, 100 + t, t), {5, 1}});
  std::optional<HangGroups> g = HangGroups::Make(HangsBy::kThread, kHour, nullptr, 1, rows);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->StacksOf(7).size(), 1u);
  RowDelta other;
  other.left.push_back({HangKey(1, 100, 99), {5, 1}});  // its group is there, its stack is not
  EXPECT_FALSE(std::optional<HangGroups>(g)->Apply(other));
  RowDelta more;
  more.came.push_back({HangKey(1, 100 + HangGroups::kMaxGroupNumbers, 1), {5, 1}});
  EXPECT_FALSE(std::optional<HangGroups>(g)->Apply(more)) << "past the group numbers";
  RowDelta fine;
  fine.left.push_back(rows[3]);
  fine.came.push_back({HangKey(1, 100 + 3, 3), {9, 2}});
  ASSERT_TRUE(g->Apply(fine));
  EXPECT_EQ(g->StacksOf(3)[0].sums.hang_us, 9);
  rows.push_back({HangKey(1, 100 + HangGroups::kMaxGroupNumbers, 1), {5, 1}});
  EXPECT_FALSE(HangGroups::Make(HangsBy::kThread, kHour, nullptr, 1, rows).has_value());
  EXPECT_FALSE(HangGroups::Make(HangsBy::kSignature, kHour, nullptr, 1, rows).has_value())
      << "by signature a number is a (process, thread): as many here";
  rows.pop_back();
  EXPECT_TRUE(HangGroups::Make(HangsBy::kSignature, kHour, nullptr, 1, rows).has_value());
}

}  // namespace
}  // namespace seismo

namespace seismo {
namespace {

// Rows in any order (not HangRows' stack order) are sorted by (group number, id) in full: the
// same groups as from the rows in stack order, and those of a walk.
TEST(HangGroups, MadeFromRowsInAnyOrder) {
  std::vector<HangRow> rows;
  for (uint32_t i = 0; i < 600; ++i) {
    rows.push_back({HangKey(1 + i % 2, 100 + i % 7, 1000 + (i * 37) % 97), {static_cast<int64_t>(i % 5), 1}});
  }
  std::vector<HangRow> by_stack = rows;
  std::stable_sort(by_stack.begin(), by_stack.end(), [](const HangRow& a, const HangRow& b) {
    return a.key[hang_field::kStack] < b.key[hang_field::kStack];
  });
  for (HangsBy by : {HangsBy::kSignature, HangsBy::kThread}) {
    const std::optional<HangGroups> any = HangGroups::Make(by, kHour, nullptr, 1, rows);
    const std::optional<HangGroups> ordered = HangGroups::Make(by, kHour, nullptr, 1, by_stack);
    ASSERT_TRUE(any && ordered);
    bool in_order = false, also = false;
    const auto held = Held(*any, by, &in_order);
    EXPECT_EQ(held, Held(*ordered, by, &also)) << Name(by);
    EXPECT_EQ(held, Walk(rows, by, 1)) << Name(by);
    EXPECT_TRUE(in_order && also);
  }
}

}  // namespace
}  // namespace seismo
