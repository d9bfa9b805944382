// HangRows (the hang rows a warm-up round's answers share, issue 19): the rows a walk of the
// table selects, with their window sums, in stack order; shared only with queries of their
// window whose filters include theirs; and every answer that reads them is byte for byte the
// answer that walks the table.
#include "seismo/query/hang_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "query_fixture.h"
#include "seismo/query/builds_json.h"
#include "seismo/query/flamegraph.h"
#include "seismo/query/hangs_json.h"

namespace seismo {
namespace {

using testing::kDay;
using testing::kHour;
using testing::kMin;
using testing::Q;
using testing::World;

// Hangs of two sources, three OSes, processes, threads, channels, build dates and shared
// stacks; a third older than an hour, some older than a day; and usage of both sources.
std::shared_ptr<const Snapshot> MixedWorld(uint64_t seed) {
  World w;
  testing::Lcg next(seed);
  for (const char* source : {"bhr", "main"}) {
    for (const char* os : {"Linux", "Windows"})
      w.Usage(source, os, 2 * kHour, 10 * kMin, "release", "20261117");
  }
  w.Usage("bhr", "Linux", kHour, 5 * kMin, "beta", "20261118");
  for (int i = 0; i < 600; ++i) {
    const std::string source = next(3) == 0 ? "main" : "bhr";
    const std::string os = std::vector<std::string>{"Linux", "Windows", "Darwin"}[next(3)];
    const std::string process = next(3) == 0 ? "content" : "parent";
    const std::string thread = std::vector<std::string>{"Gecko", "Gecko_Child", "Renderer"}[next(3)];
    const std::string signature = "Sig" + std::to_string(next(30));
    const std::vector<std::string> stack = {"root", "f" + std::to_string(next(8)), signature};
    const std::string channel = next(2) == 0 ? "release" : "beta";
    const std::string date = "202611" + std::to_string(10 + next(9));
    const int64_t ago =
        next(3) == 0 ? static_cast<int64_t>(70 + next(3000)) * kMin : static_cast<int64_t>(next(59)) * kMin;
    w.Hang(source, os, process, thread, stack, static_cast<int64_t>(128'000 + next(90) * 1000),
           static_cast<int64_t>(1 + next(3)), ago, channel, date);
  }
  return w.Build();
}

bool KeyBytesLess(const SeriesKey& a, const SeriesKey& b) { return std::memcmp(&a, &b, sizeof a) < 0; }

TEST(HangRows, HoldTheRowsAWalkOfTheTableSelectsInStackOrder) {
  const auto snap = MixedWorld(7);
  for (int64_t window : {kHour, kDay, int64_t{0}}) {
    for (const char* source : {"", "bhr", "main"}) {
      SCOPED_TRACE(::testing::Message() << "window " << window << ", source '" << source << "'");
      Filters filters;
      if (*source != '\0') filters[Dim::kSource] = source;
      const HangRows rows(*snap, window, filters);
      // Naive: every series of the source with a value in the window, summed over its buckets.
      const WindowSel win = ResolveWindow(*snap, window);
      std::vector<std::tuple<StackId, SeriesKey, int64_t, int64_t>> naive, got;
      for (const SeriesData* s : snap->table(Table::kHangs)) {
        if (*source != '\0' && snap->Text(s->key[hang_field::kSource]) != source) continue;
        Values v{};
        if (window == 0) {
          v = s->total();
        } else {
          for (const BucketPoint& p : snap->Points(*s)) {
            if (p.bucket >= snap->SpanFirstBucket(*win.span)) {
              v[0] += p.v[0];
              v[1] += p.v[1];
            }
          }
        }
        if (v[0] == 0 && v[1] == 0) continue;
        naive.emplace_back(s->key[hang_field::kStack], s->key, v[0], v[1]);
      }
      ASSERT_GT(naive.size(), 10u);
      for (const HangRow& r : rows.rows()) {
        got.emplace_back(r.key[hang_field::kStack], r.key, r.sums.hang_us, r.sums.hang_count);
      }
      EXPECT_TRUE(std::is_sorted(got.begin(), got.end(), [](const auto& a, const auto& b) {
        return std::get<0>(a) < std::get<0>(b);
      })) << "in stack order";
      auto by_key = [](const auto& a, const auto& b) { return KeyBytesLess(std::get<1>(a), std::get<1>(b)); };
      std::sort(naive.begin(), naive.end(), by_key);
      std::sort(got.begin(), got.end(), by_key);
      EXPECT_EQ(got, naive);
    }
  }
}

TEST(HangRows, ServeOnlyQueriesOfTheirWindowWhoseFiltersIncludeTheirs) {
  const auto snap = MixedWorld(3);
  Filters bhr;
  bhr[Dim::kSource] = "bhr";
  Filters bhr_linux = bhr;
  bhr_linux[Dim::kOs] = "Linux";
  Filters main_source;
  main_source[Dim::kSource] = "main";
  const HangRows all(*snap, kDay, Filters{});
  EXPECT_TRUE(all.Serves(kDay, Filters{}));
  EXPECT_TRUE(all.Serves(kDay, bhr_linux)) << "the query's filters are applied to the rows";
  EXPECT_FALSE(all.Serves(kHour, Filters{})) << "another window";
  EXPECT_FALSE(all.Serves(0, Filters{}));
  const HangRows of_bhr(*snap, kDay, bhr);
  EXPECT_TRUE(of_bhr.Serves(kDay, bhr));
  EXPECT_TRUE(of_bhr.Serves(kDay, bhr_linux));
  EXPECT_FALSE(of_bhr.Serves(kDay, Filters{})) << "rows of main are not there";
  EXPECT_FALSE(of_bhr.Serves(kDay, main_source));
}

// Every answer that reads hang rows: given rows that serve it (all sources, or its own), and
// rows that do not (another window or source), it is the answer that walks the table. Rows of
// another snapshot (which Serves cannot tell) change the answers that read them: they are read.
TEST(HangRows, AnswersReadingThemAreThoseOfAWalkOfTheTable) {
  for (uint64_t seed : {1, 2, 3}) {
    const auto snap = MixedWorld(seed);
    const auto other = MixedWorld(seed + 10);
    Filters main_source;
    main_source[Dim::kSource] = "main";
    const std::vector<HangRows> shared = {HangRows(*snap, kDay, Filters{}), HangRows(*snap, kHour, Filters{}),
                                          HangRows(*snap, kDay, main_source), HangRows(*snap, 0, Filters{}),
                                          HangRows(*snap, 2 * kHour, Filters{})};
    const std::vector<HangRows> others = {HangRows(*other, kDay, Filters{}),
                                          HangRows(*other, kHour, Filters{}), HangRows(*other, 0, Filters{})};
    const AnswerLimits small{.max_nodes = 12, .max_bytes = 1500};
    size_t read = 0;  // answers the rows of `other` changed
    for (const std::string window : {"", "window=1h", "window=all"}) {
      for (const std::string filter : {"", "source=main", "os=linux", "thread=Gecko&process=parent",
                                       "signature=Sig3", "build_date=20261112"}) {
        const std::string qs = window + "&" + filter;
        SCOPED_TRACE(::testing::Message() << "seed " << seed << ", " << qs);
        auto changed = [&read](const std::string& walked, const std::string& other_answer) {
          read += other_answer != walked ? 1 : 0;
        };
        for (const char* by : {"signature", "thread", "build_date"}) {
          for (const char* limit : {"3", "100"}) {
            const Query q = Q(Endpoint::kHangs, qs + "&by=" + by + "&limit=" + limit);
            const std::string walked = HangsJson(*snap, q);
            for (const HangRows& rows : shared)
              EXPECT_EQ(HangsJson(*snap, q, {}, &rows), walked) << by << limit;
            for (const HangRows& rows : others) changed(walked, HangsJson(*snap, q, {}, &rows));
          }
        }
        const Query flame = Q(Endpoint::kHangsFlamegraph, qs);
        for (const AnswerLimits& limits : {AnswerLimits{}, small}) {
          const std::string tree = FlamegraphTreeJson(*snap, flame, limits);
          const std::string collapsed = FlamegraphCollapsed(*snap, flame, limits);
          for (const HangRows& rows : shared) {
            EXPECT_EQ(FlamegraphTreeJson(*snap, flame, limits, &rows), tree);
            EXPECT_EQ(FlamegraphCollapsed(*snap, flame, limits, &rows), collapsed);
          }
          for (const HangRows& rows : others) changed(tree, FlamegraphTreeJson(*snap, flame, limits, &rows));
        }
        const Query builds = Q(Endpoint::kBuilds, qs);
        const std::string walked = BuildsJson(*snap, builds);
        for (const HangRows& rows : shared) EXPECT_EQ(BuildsJson(*snap, builds, {}, &rows), walked);
        for (const HangRows& rows : others) changed(walked, BuildsJson(*snap, builds, {}, &rows));
      }
    }
    // Each of the three windows' queries without an indexed filter (4 of the 6 filters) reads
    // one of `others`: 6 /hangs, 2 flame graphs and /builds each.
    EXPECT_GE(read, 3u * 4u * 9u * 8u / 10u) << "most answers read the rows they are given";
  }
}

using RowTuple = std::tuple<SeriesKey, int64_t, int64_t>;

// The rows as (key, sums), by key; and whether they are in stack order.
std::vector<RowTuple> ByKey(const HangRows& rows, bool* stack_order) {
  std::vector<RowTuple> out;
  for (const HangRow& r : rows.rows()) out.emplace_back(r.key, r.sums.hang_us, r.sums.hang_count);
  *stack_order =
      std::is_sorted(rows.rows().begin(), rows.rows().end(), [](const HangRow& a, const HangRow& b) {
        return a.key[hang_field::kStack] < b.key[hang_field::kStack];
      });
  std::sort(out.begin(), out.end(), [](const RowTuple& a, const RowTuple& b) {
    return KeyBytesLess(std::get<0>(a), std::get<0>(b));
  });
  return out;
}

// rows before − left + came, as a multiset of (key, sums): what RowDelta promises.
std::vector<RowTuple> Applied(std::vector<RowTuple> rows, const RowDelta& delta) {
  std::map<RowTuple, int, bool (*)(const RowTuple&, const RowTuple&)> count(
      [](const RowTuple& a, const RowTuple& b) {
        if (std::get<0>(a) != std::get<0>(b)) return KeyBytesLess(std::get<0>(a), std::get<0>(b));
        return std::tie(std::get<1>(a), std::get<2>(a)) < std::tie(std::get<1>(b), std::get<2>(b));
      });
  for (const RowTuple& r : rows) ++count[r];
  for (const HangRow& r : delta.left) --count[{r.key, r.sums.hang_us, r.sums.hang_count}];
  for (const HangRow& r : delta.came) ++count[{r.key, r.sums.hang_us, r.sums.hang_count}];
  std::vector<RowTuple> out;
  for (const auto& [row, n] : count) {
    EXPECT_GE(n, 0) << "a row left that was not there";
    for (int i = 0; i < n; ++i) out.push_back(row);
  }
  return out;
}

// Rows carried from snapshot to snapshot of one world and updated from what changed (ADR
// 0034) are the rows made anew from each snapshot, in stack order, and the answers reading
// them are the answers that walk the table; across rounds of new keys, changed keys, keys
// outside the window, quiet rounds, series folded into "(other)" (rows that leave), and stream
// time moving on by minutes (rows whose window sums the move changed, from no delta) or by
// more (refused when it changed more rows than a walk costs: RefuseAMoveThatChangesMoreThanAWalk).
// Each update's delta takes the rows before to the rows after.
TEST(HangRows, UpdatedFromWhatChangedAreTheRowsMadeAnew) {
  World w(/*max_series=*/250);
  testing::Lcg next(5);
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  w.Usage("main", "Linux", kHour, 10 * kMin);
  auto hangs = [&](int n, uint64_t keys) {
    for (int i = 0; i < n; ++i) {
      const uint64_t k = next(keys);
      const std::string sig = "Sig" + std::to_string(k % 40);
      const std::vector<std::string> stack = {"root", "f" + std::to_string(k % 7), sig};
      // Some series of the same stack differ by thread only: a stack's run holds several rows.
      w.Hang(k % 5 == 0 ? "main" : "bhr", "Linux", "parent", "T" + std::to_string(k % 3), stack,
             static_cast<int64_t>(1000 + next(9000)), 1,
             next(4) == 0 ? static_cast<int64_t>(70 + next(2000)) * kMin
                          : static_cast<int64_t>(next(59)) * kMin);
      // A source ahead of stream time (ADR 0017): hangs past the window's end, of series
      // with values in it and of series with none, that the window's moves bring in.
      if (next(6) == 0) {
        w.HangAhead("T" + std::to_string(k % 3), stack, static_cast<int64_t>(500 + next(500)),
                    static_cast<int64_t>(1 + next(8)) * kMin);
      }
    }
  };
  hangs(300, 200);
  Filters bhr;
  bhr[Dim::kSource] = "bhr";
  std::shared_ptr<const Snapshot> before = w.Build();
  std::vector<std::pair<int64_t, Filters>> kinds;  // (a braced list of these crashes g++ 12)
  kinds.emplace_back(kHour, Filters{});
  kinds.emplace_back(kDay, bhr);
  kinds.emplace_back(0, Filters{});
  std::vector<HangRows> carried;
  for (const auto& [window, filters] : kinds) carried.emplace_back(*before, window, filters);
  size_t moved = 0, refused = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const int64_t step = round % 5 == 2 ? 3 * kMin : round % 10 == 4 ? 40 * kMin : 0;
    w.Advance(step);
    hangs(round % 4 == 0 ? 0 : round % 4 == 1 ? 2 : 60, round < 15 ? 200 : 600);
    const std::shared_ptr<const Snapshot> after = w.Build();
    for (size_t i = 0; i < kinds.size(); ++i) {
      SCOPED_TRACE(::testing::Message() << "window " << kinds[i].first);
      bool sorted = false, fresh_sorted = false;
      const std::vector<RowTuple> was = ByKey(carried[i], &sorted);
      RowDelta delta;
      const bool updated =
          carried[i].Update(*before, *after, ChangedRows(*before, *after, Table::kHangs), &delta);
      if (step == 0) ASSERT_TRUE(updated) << "stream time did not move";
      const std::vector<RowTuple> made =
          ByKey(HangRows(*after, kinds[i].first, kinds[i].second), &fresh_sorted);
      if (updated) {
        moved += step > 0 && kinds[i].first != 0 ? 1 : 0;
        EXPECT_EQ(ByKey(carried[i], &sorted), made);
        EXPECT_TRUE(sorted) << "in stack order";
        EXPECT_EQ(Applied(was, delta), made) << "the delta takes the rows before to the rows after";
        // The series kept aside: those rows made anew keep aside, each of after's table.
        auto aside = [](const HangRows& r) {  // their keys' content hashes
          std::vector<uint64_t> keys;
          for (const SeriesData* s : r.ahead()) keys.push_back(s->hash);
          std::sort(keys.begin(), keys.end());
          return keys;
        };
        EXPECT_EQ(aside(carried[i]), aside(HangRows(*after, kinds[i].first, kinds[i].second)));
        const auto table = after->table(Table::kHangs);
        for (const SeriesData* s : carried[i].ahead()) {
          EXPECT_NE(std::find(table.begin(), table.end(), s), table.end()) << "a series of after's";
        }
      } else {
        ++refused;
        EXPECT_EQ(ByKey(carried[i], &sorted), was) << "left as they were";
        carried[i] = HangRows(*after, kinds[i].first, kinds[i].second);
      }
    }
    for (const char* by : {"signature", "thread", "build_date"}) {
      const Query q = Q(Endpoint::kHangs, std::string("window=1h&by=") + by);
      EXPECT_EQ(HangsJson(*after, q, {}, &carried[0]), HangsJson(*after, q));
    }
    const Query flame = Q(Endpoint::kHangsFlamegraph, "window=1h");
    EXPECT_EQ(FlamegraphTreeJson(*after, flame, {}, &carried[0]), FlamegraphTreeJson(*after, flame, {}));
    before = after;
  }
  EXPECT_GE(moved, 10u) << "updates across a window's move";
  EXPECT_GT(carried[0].ahead().size(), 0u) << "series kept aside as ahead";
  // Stream time moves on with nothing new: the rows whose series had hangs in the window's
  // first minutes change or leave, from no delta.
  w.Advance(5 * kMin);
  const std::shared_ptr<const Snapshot> later = w.Build();
  bool sorted = false;
  const std::vector<RowTuple> was = ByKey(carried[0], &sorted);
  RowDelta delta;
  ASSERT_TRUE(carried[0].Update(*before, *later, ChangedRows(*before, *later, Table::kHangs), &delta));
  EXPECT_FALSE(delta.left.empty()) << "rows the window's move changed";
  EXPECT_EQ(ByKey(carried[0], &sorted), ByKey(HangRows(*later, kHour, Filters{}), &sorted));
  EXPECT_EQ(Applied(was, delta), ByKey(carried[0], &sorted));
  // A window that moved back (a snapshot older than the rows') is refused, the rows untouched.
  const std::vector<RowTuple> now = ByKey(carried[0], &sorted);
  EXPECT_FALSE(carried[0].Update(*later, *before, ChangedRows(*later, *before, Table::kHangs)));
  EXPECT_EQ(ByKey(carried[0], &sorted), now);
}

// A window's move that changes more rows than CheaperThanAWalk allows is refused, the rows
// left as they were: 3 000 rows all in the window's first minutes, which the move takes out.
TEST(HangRows, RefuseAMoveThatChangesMoreThanAWalk) {
  World w;
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  for (int i = 0; i < 3000; ++i) {
    w.Hang("bhr", "Linux", "parent", "T0", {"root", "f" + std::to_string(i)}, 1000, 1, (57 + i % 3) * kMin);
  }
  const std::shared_ptr<const Snapshot> before = w.Build();
  HangRows rows(*before, kHour, Filters{});
  ASSERT_EQ(rows.rows().size(), 3000u);
  bool sorted = false;
  const std::vector<RowTuple> was = ByKey(rows, &sorted);
  w.Advance(5 * kMin);  // all of them leave: 3 000 > 3 000 / 4 + 1 024
  const std::shared_ptr<const Snapshot> after = w.Build();
  EXPECT_FALSE(rows.Update(*before, *after, ChangedRows(*before, *after, Table::kHangs)));
  EXPECT_EQ(ByKey(rows, &sorted), was);
}

// A hang later than stream time (its source ahead of the slowest) is past the window's end
// and in no row; when the window moves on over it with no delta, its series has changed in no
// way the change set shows: the rows kept it aside (ahead()), read it again at the move, and
// hold it as rows made anew do.
TEST(HangRows, AMoveBringsTheValuesPastTheWindowsEnd) {
  World w;
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  w.Hang("bhr", "Linux", "parent", "T0", {"root", "now"}, 1000, 1, 5 * kMin);
  w.HangAhead("T0", {"root", "ahead"}, 2000, 90'000);    // a series of its own
  w.HangAhead("T0", {"root", "later"}, 3000, 5 * kMin);  // past the window after one move too
  w.HangAhead("T0", {"root", "now"}, 4000, 90'000);      // a row's series
  const std::shared_ptr<const Snapshot> before = w.Build();
  HangRows rows(*before, kHour, Filters{});
  ASSERT_EQ(rows.rows().size(), 1u) << "the hangs ahead are past the window's end";
  EXPECT_EQ(rows.ahead().size(), 2u) << "the series with no value in the window";
  bool sorted = false;
  const std::vector<RowTuple> was = ByKey(rows, &sorted);
  w.Advance(2 * kMin);  // nothing new: the window now covers two of the hangs ahead
  const std::shared_ptr<const Snapshot> after = w.Build();
  RowDelta delta;
  ASSERT_TRUE(rows.Update(*before, *after, ChangedRows(*before, *after, Table::kHangs), &delta));
  const std::vector<RowTuple> made = ByKey(HangRows(*after, kHour, Filters{}), &sorted);
  ASSERT_EQ(made.size(), 2u);
  EXPECT_EQ(ByKey(rows, &sorted), made);
  EXPECT_EQ(Applied(was, delta), made) << "the row that changed and the row that came";
  EXPECT_EQ(rows.ahead().size(), 1u) << "the later one, still past the window's end";
  w.Advance(4 * kMin);
  const std::shared_ptr<const Snapshot> last = w.Build();
  ASSERT_TRUE(rows.Update(*after, *last, ChangedRows(*after, *last, Table::kHangs)));
  EXPECT_EQ(ByKey(rows, &sorted), ByKey(HangRows(*last, kHour, Filters{}), &sorted));
  EXPECT_EQ(rows.rows().size(), 3u);
  EXPECT_TRUE(rows.ahead().empty());
}

// More series kept aside than AheadBound: the list is dropped, and a move refuses (the rows
// made anew then hold the hangs ahead), where a round without a move still updates.
TEST(HangRows, AMoveAfterTooManySeriesAheadRefuses) {
  World w;
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  w.Hang("bhr", "Linux", "parent", "T0", {"root", "now"}, 1000, 1, 5 * kMin);
  const size_t too_many = 1200;  // of 1 201 series: AheadBound(1 201) is 1 099
  ASSERT_GT(too_many, HangRows::AheadBound(too_many + 1));
  for (size_t i = 0; i < too_many; ++i) w.HangAhead("T0", {"root", "ahead" + std::to_string(i)}, 500, 90'000);
  const std::shared_ptr<const Snapshot> before = w.Build();
  HangRows rows(*before, kHour, Filters{});
  EXPECT_TRUE(rows.ahead().empty()) << "dropped";
  w.Hang("bhr", "Linux", "parent", "T0", {"root", "now"}, 1000, 1, 4 * kMin);
  const std::shared_ptr<const Snapshot> same = w.Build();
  ASSERT_TRUE(rows.Update(*before, *same, ChangedRows(*before, *same, Table::kHangs))) << "no move";
  w.Advance(2 * kMin);
  const std::shared_ptr<const Snapshot> after = w.Build();
  bool sorted = false;
  const std::vector<RowTuple> was = ByKey(rows, &sorted);
  EXPECT_FALSE(rows.Update(*same, *after, ChangedRows(*same, *after, Table::kHangs)));
  EXPECT_EQ(ByKey(rows, &sorted), was) << "untouched";
  EXPECT_EQ(HangRows(*after, kHour, Filters{}).rows().size(), too_many + 1);
}

}  // namespace
}  // namespace seismo
