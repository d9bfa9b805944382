// ChangedRows (ADR 0034): between two snapshots of one shard set, the rows removed and added
// are exactly the difference of their row multisets, found from what changed; and between
// snapshots that share nothing, every row.
#include "seismo/aggregate/row_changes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "seismo/aggregate/releases.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/core/hash.h"
#include "support/keys.h"

namespace seismo {
namespace {

constexpr int64_t kT0 = 1'795'000'000'000;
constexpr int64_t kMinute = 60'000;

using Counted = std::map<const SeriesData*, int>;

Counted Count(const std::vector<const SeriesData*>& rows) {
  Counted out;
  for (const SeriesData* s : rows) ++out[s];
  return out;
}

// Two shards as the daemon routes them: a hang or usage delta by its key, a crash by its
// document (so one crash key lives in both); few series each, so the tail folds into
// "(other)" series that both shards hold too.
class TwoShards {
 public:
  // `varied`: hang keys of several build dates (keys under 80: six, one without usage; from 80
  // on: three more, none with usage) and three OSes, not one of each.
  explicit TwoShards(bool varied = false) : varied_(varied) {
    AggregateOptions o;
    o.bucket_ms = kMinute;
    o.windows_ms = {60 * kMinute};
    o.retention_ms = 24 * 60 * kMinute;
    o.max_series = 120;
    options_ = o;
    for (auto& shard : shards_) shard = std::make_unique<ShardState>(o, &symbols_);
  }

  // `n` random deltas at stream time `t`: of the hang keys [from, keys), 20 crash keys, 5 usage keys.
  void Apply(int n, int keys, int64_t t, int from = 0) {
    for (int i = 0; i < n; ++i) {
      const uint64_t x = Next();
      Delta d;
      switch (x % 4) {
        case 0: {
          const std::string sig = "Sig" + std::to_string((x >> 8) % 20);
          d = test::MakeDelta(
              symbols_, Table::kCrashes,
              {"release", "Firefox", "146.0", "20261117090501", "Linux", "parent", "parent", sig}, t, {1});
          d.doc_hash = Next() | 1;
          d.install_hash = Next() | 1;
          shards_[Next() % 2]->Apply(d);
          continue;
        }
        case 1:
          d = test::MakeDelta(symbols_, Table::kUsage,
                              {"bhr", "release", "Linux", "2026111" + std::to_string((x >> 8) % 5)}, t,
                              {1000, 1});
          break;
        default: {
          const uint64_t h = static_cast<uint64_t>(from) + (x >> 8) % static_cast<uint64_t>(keys - from);
          const std::string k = std::to_string(h);
          const std::string date =
              h < 80 ? "2026111" + std::to_string(h % 6) : "2026112" + std::to_string(h % 3);
          const char* os[] = {"Linux", "Windows_NT", "Darwin"};
          d = test::MakeDelta(symbols_, Table::kHangs,
                              {"bhr", "release", varied_ ? os[(h / 6) % 3] : "Linux",
                               varied_ ? date : "20261117", "parent", "T" + k, "S" + k,
                               "root\x1e"
                               "f" +
                                   k},
                              t, {static_cast<int64_t>(1000 + x % 5000), 1});
          break;
        }
      }
      shards_[d.hash % 2]->Apply(d);
    }
  }

  std::shared_ptr<const Snapshot> Snap(bool swapped = false) {
    std::vector<std::shared_ptr<const ShardSnapshot>> parts = {shards_[0]->Snapshot(),
                                                               shards_[1]->Snapshot()};
    if (swapped) std::swap(parts[0], parts[1]);
    return MergeSnapshots(parts, symbols_, options_.bucket_ms, options_.windows_ms, options_.retention_ms);
  }

 private:
  uint64_t Next() {
    x_ = x_ * 6364136223846793005ull + 1442695040888963407ull;
    return x_ >> 17;
  }

  uint64_t x_ = 11;
  bool varied_;
  AggregateOptions options_;
  Symbols symbols_;
  std::unique_ptr<ShardState> shards_[2];
};

// rows(before) − removed + added = rows(after), with every removed row one of before's and
// every added one of after's.
void ExpectChangesAreTheDifference(const Snapshot& before, const Snapshot& after) {
  for (size_t t = 0; t < kTableCount; ++t) {
    SCOPED_TRACE(::testing::Message() << "table " << t);
    const RowChanges changes = ChangedRows(before, after, static_cast<Table>(t));
    Counted rows = Count(before.table(static_cast<Table>(t)));
    for (const SeriesData* s : changes.removed) {
      ASSERT_GT(rows[s], 0) << "removed a row before did not hold";
      if (--rows[s] == 0) rows.erase(s);
    }
    for (const SeriesData* s : changes.added) ++rows[s];
    EXPECT_EQ(rows, Count(after.table(static_cast<Table>(t))));
  }
}

TEST(ChangedRows, AreTheDifferenceOfTheRowsOverRandomRounds) {
  TwoShards world;
  std::shared_ptr<const Snapshot> before = world.Snap();
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    // Quiet rounds, a few changes, many new keys (folding), time moving on (expiry).
    const int n = round % 5 == 0 ? 0 : round % 5 == 1 ? 3 : round % 5 == 2 ? 400 : 40;
    world.Apply(n, round < 20 ? 80 : 400, kT0 + round * 7 * kMinute);
    std::shared_ptr<const Snapshot> after = world.Snap();
    ExpectChangesAreTheDifference(*before, *after);
    before = std::move(after);
  }
}

// The index of (t, field) as RowsWithTextHash must give it: for each text the table holds,
// the rows holding it, in address order; none for one it does not hold, nor for the texts of
// `gone` (rows of `before`, whose texts may have left the table with them).
void ExpectTextIndex(const Snapshot& snap, Table t, size_t field, const Snapshot* before = nullptr,
                     const std::vector<const SeriesData*>& gone = {}) {
  std::map<uint64_t, std::vector<const SeriesData*>> expected;
  for (const SeriesData* s : snap.table(t)) {
    expected[s->key[field] == kNoId ? 0 : Hash64(snap.Text(s->key[field]))].push_back(s);
  }
  expected[Hash64("a text no row holds")];
  for (const SeriesData* s : gone) expected[s->key[field] == kNoId ? 0 : Hash64(before->Text(s->key[field]))];
  size_t rows = 0;
  for (auto& [hash, holding] : expected) {
    std::sort(holding.begin(), holding.end(), std::less<const SeriesData*>());
    const auto got = snap.RowsWithTextHash(t, field, hash);
    EXPECT_EQ(std::vector<const SeriesData*>(got.begin(), got.end()), holding);
    rows += got.size();
  }
  EXPECT_EQ(rows, snap.table(t).size());
}

// A snapshot's text index made from the previous snapshot's and the rows they differ by
// (Snapshot::IndexTextsFrom, the warm-up's round) is the index RowsWithTextHash makes from
// the table, round after round, each made from the one before.
TEST(ChangedRows, MakeEachTextIndexFromThePreviousOne) {
  TwoShards world;
  world.Apply(300, 80, kT0);
  std::shared_ptr<const Snapshot> before = world.Snap();
  const std::pair<Table, size_t> indexes[] = {{Table::kHangs, hang_field::kSignature},
                                              {Table::kHangs, hang_field::kThread},
                                              {Table::kCrashes, crash_field::kSignature}};
  for (const auto& [t, field] : indexes) {
    const auto next = world.Snap();
    const RowChanges changes = ChangedRows(*before, *next, t);
    EXPECT_FALSE(next->IndexTextsFrom(*before, t, field, changes.removed, changes.added))
        << "made from an index before had not made";
    ExpectTextIndex(*next, t, field);  // made in full by its first use
    ExpectTextIndex(*before, t, field);
  }
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const int n = round % 5 == 0 ? 0 : round % 5 == 1 ? 3 : round % 5 == 2 ? 400 : 40;
    world.Apply(n, round < 20 ? 80 : 400, kT0 + round * 7 * kMinute);
    std::shared_ptr<const Snapshot> after = world.Snap();
    for (const auto& [t, field] : indexes) {
      const RowChanges changes = ChangedRows(*before, *after, t);
      EXPECT_TRUE(after->IndexTextsFrom(*before, t, field, changes.removed, changes.added));
      EXPECT_FALSE(after->IndexTextsFrom(*before, t, field, changes.removed, changes.added)) << "made twice";
      ExpectTextIndex(*after, t, field, before.get(), changes.removed);
    }
    before = std::move(after);
  }
  // From a snapshot that shares no pages: every row changed, the same index (made from
  // before's here, where the table is under a thousand rows; in full past that).
  const auto swapped = world.Snap(/*swapped=*/true);
  const RowChanges all = ChangedRows(*before, *swapped, Table::kHangs);
  ASSERT_LT(before->table(Table::kHangs).size(), 500u);
  EXPECT_TRUE(
      swapped->IndexTextsFrom(*before, Table::kHangs, hang_field::kSignature, all.removed, all.added));
  ExpectTextIndex(*swapped, Table::kHangs, hang_field::kSignature, before.get(), all.removed);
}

// Two build indexes are the same but for the order of each build's hang series (BuildSeries).
void ExpectSameBuilds(const BuildIndex& got, const BuildIndex& want) {
  EXPECT_EQ(got.channels_with_usage, want.channels_with_usage);
  ASSERT_EQ(got.crash_builds.size(), want.crash_builds.size());
  for (size_t i = 0; i < want.crash_builds.size(); ++i) {
    const CrashBuild &g = got.crash_builds[i], &w = want.crash_builds[i];
    EXPECT_EQ(std::tie(g.channel, g.build, g.version, g.first_ms, g.usage, g.crashes, g.os_names),
              std::tie(w.channel, w.build, w.version, w.first_ms, w.usage, w.crashes, w.os_names));
  }
  ASSERT_EQ(got.hang_builds.size(), want.hang_builds.size());
  auto sorted = [](auto list) {
    std::sort(list.begin(), list.end());
    return list;
  };
  for (size_t i = 0; i < want.hang_builds.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "hang build " << i);
    const HangBuild &g = got.hang_builds[i], &w = want.hang_builds[i];
    EXPECT_EQ(std::tie(g.channel, g.build, g.first_ms, g.usage, g.os_names),
              std::tie(w.channel, w.build, w.first_ms, w.usage, w.os_names));
    EXPECT_EQ(sorted(g.hangs), sorted(w.hangs));
    EXPECT_EQ(std::tie(g.hang_stats.first_ms, g.hang_stats.at_first),
              std::tie(w.hang_stats.first_ms, w.hang_stats.at_first));
    EXPECT_EQ(sorted(g.hang_stats.os), sorted(w.hang_stats.os));
  }
}

// A snapshot's build index made from the previous snapshot's and the hang rows they differ by
// (Snapshot::BuildsFrom, the warm-up's round) is the index made in full, round after round,
// each made from the one before: while series fold and hours expire (the earliest series of a
// build leaves, and its first time is found again), and builds come (from round 20, the keys
// from 80 on, of three new build dates) and go (the keys under 80 are no longer written from
// round 20 on: a day later their hours have expired, and the build date without usage is gone).
TEST(ChangedRows, MakeEachBuildIndexFromThePreviousOne) {
  TwoShards world(/*varied=*/true);
  world.Apply(300, 80, kT0);
  std::shared_ptr<const Snapshot> before = world.Snap();
  {
    const auto next = world.Snap();
    const RowChanges changes = ChangedRows(*before, *next, Table::kHangs);
    EXPECT_FALSE(next->BuildsFrom(*before, changes.removed, changes.added)) << "before made no index";
  }
  before->Builds();
  int recounted = 0;  // rounds where a build's earliest hang series left
  int came = 0, went = 0;  // builds that came and went
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const int n = round % 5 == 0 ? 0 : round % 5 == 1 ? 3 : round % 5 == 2 ? 400 : 40;
    // 97 minutes a round: past the 24 hours' retention from round 15 on.
    world.Apply(n, round < 20 ? 80 : 400, kT0 + round * 97 * kMinute, round < 20 ? 0 : 80);
    std::shared_ptr<const Snapshot> after = world.Snap();
    const RowChanges changes = ChangedRows(*before, *after, Table::kHangs);
    EXPECT_TRUE(after->BuildsFrom(*before, changes.removed, changes.added));
    EXPECT_FALSE(after->BuildsFrom(*before, changes.removed, changes.added)) << "made twice";
    const BuildIndex full = IndexSnapshot(*after);
    ExpectSameBuilds(after->Builds(), full);
    auto holds = [](const BuildIndex& index, Sym build) {
      return std::any_of(index.hang_builds.begin(), index.hang_builds.end(),
                         [build](const HangBuild& b) { return b.build == build; });
    };
    for (const HangBuild& b : full.hang_builds) came += !holds(before->Builds(), b.build);
    for (const HangBuild& b : before->Builds().hang_builds) went += !holds(full, b.build);
    for (const HangBuild& b : before->Builds().hang_builds) {
      for (const SeriesData* s : changes.removed) {
        recounted += s->key[hang_field::kBuildDate] == b.build && s->first_ms == b.hang_stats.first_ms &&
                     b.hang_stats.at_first == 1;
      }
    }
    before = std::move(after);
  }
  EXPECT_GT(recounted, 0) << "no build lost its earliest hang series: the recount is untested";
  EXPECT_GT(came, 0) << "no build came after the first round";
  EXPECT_GT(went, 0) << "no build went";
  // From a snapshot that shares no pages: every row changed, the same index.
  const auto swapped = world.Snap(/*swapped=*/true);
  const RowChanges all = ChangedRows(*before, *swapped, Table::kHangs);
  ASSERT_LT(before->table(Table::kHangs).size(), 500u);
  EXPECT_TRUE(swapped->BuildsFrom(*before, all.removed, all.added));
  ExpectSameBuilds(swapped->Builds(), IndexSnapshot(*swapped));
}

TEST(ChangedRows, CostWhatChangedPlusTheRepeatableRows) {
  TwoShards world;
  world.Apply(2000, 400, kT0);
  const auto before = world.Snap();
  const auto same = world.Snap();
  // Nothing applied: only the rows that may repeat across shards (crash and "(other)"
  // series) count as changed, removed and added again.
  const RowChanges none = ChangedRows(*before, *same, Table::kHangs);
  size_t repeatable = 0;
  for (const SeriesData* s : same->table(Table::kHangs)) repeatable += s->level > 0 ? 1 : 0;
  EXPECT_GT(repeatable, 0u) << "no series folded into \"(other)\"";
  EXPECT_EQ(none.added.size(), repeatable);
  EXPECT_EQ(none.removed.size(), repeatable);
  EXPECT_EQ(ChangedRows(*before, *same, Table::kUsage).added.size(), 0u);
  EXPECT_EQ(ChangedRows(*before, *same, Table::kCrashes).added.size(), same->table(Table::kCrashes).size());
  // One usage delta: one usage row changes.
  world.Apply(0, 100, kT0);
  const auto one = [&] {
    for (;;) {  // the next random delta that is a usage one
      const size_t rows = same->table(Table::kUsage).size();
      world.Apply(1, 100, kT0);
      auto snap = world.Snap();
      if (ChangedRows(*same, *snap, Table::kUsage).added.size() > 0 ||
          snap->table(Table::kUsage).size() != rows)
        return snap;
    }
  }();
  const RowChanges usage = ChangedRows(*same, *one, Table::kUsage);
  EXPECT_EQ(usage.added.size(), 1u);
  EXPECT_LE(usage.removed.size(), 1u);
  ExpectChangesAreTheDifference(*same, *one);
}

TEST(ChangedRows, SnapshotsThatShareNoPagesChangeEveryRow) {
  TwoShards world;
  world.Apply(1500, 100, kT0);
  const auto before = world.Snap();
  const auto swapped = world.Snap(/*swapped=*/true);
  ExpectChangesAreTheDifference(*before, *swapped);
  const RowChanges all = ChangedRows(*before, *swapped, Table::kHangs);
  EXPECT_EQ(all.added.size(), swapped->table(Table::kHangs).size());
  EXPECT_EQ(all.removed.size(), before->table(Table::kHangs).size());
  // A snapshot of no shards: before's rows all leave.
  Symbols symbols;
  const auto empty = MergeSnapshots({}, symbols, kMinute, {60 * kMinute}, 24 * 60 * kMinute);
  ExpectChangesAreTheDifference(*before, *empty);
  ExpectChangesAreTheDifference(*empty, *before);
}

// A page of the shard emptied (its series folded or expired) is left out of the shard's
// snapshot: the pages after it are still compared with themselves, by page number, so the
// change is that page's series and nothing else.
TEST(ChangedRows, AnEmptiedPageChangesOnlyItsOwnRows) {
  std::vector<std::shared_ptr<SeriesData>> series;
  auto page_of = [&series](uint32_t first) {
    auto page = std::make_shared<SeriesPage>();
    for (uint32_t i = 0; i < 3; ++i) {
      auto s = std::make_shared<SeriesData>();
      s->key.table = Table::kHangs;
      s->key.f[0] = first + i;
      series.push_back(s);
      page->series[i] = s;
    }
    return std::shared_ptr<const SeriesPage>(std::move(page));
  };
  const auto p0 = page_of(100), p1 = page_of(200), p2 = page_of(300);
  const size_t hangs = static_cast<size_t>(Table::kHangs);
  auto shard = [hangs](std::vector<std::shared_ptr<const SeriesPage>> pages, std::vector<uint32_t> numbers) {
    auto s = std::make_shared<ShardSnapshot>();
    s->pages[hangs] = std::move(pages);
    s->page_numbers[hangs] = std::move(numbers);
    return std::shared_ptr<const ShardSnapshot>(std::move(s));
  };
  Symbols symbols;
  auto merge = [&symbols](std::shared_ptr<const ShardSnapshot> s) {
    return MergeSnapshots({std::move(s)}, symbols, kMinute, {60 * kMinute}, 24 * 60 * kMinute);
  };
  const auto three = merge(shard({p0, p1, p2}, {0, 1, 2}));
  const auto emptied = merge(shard({p0, p2}, {0, 2}));
  const RowChanges out = ChangedRows(*three, *emptied, Table::kHangs);
  EXPECT_TRUE(out.added.empty());
  ASSERT_EQ(out.removed.size(), 3u) << "page 1's series only";
  for (const SeriesData* s : out.removed) EXPECT_EQ(s->key[0] / 100, 2u);
  const RowChanges back = ChangedRows(*emptied, *three, Table::kHangs);
  EXPECT_TRUE(back.removed.empty());
  EXPECT_EQ(back.added.size(), 3u) << "page 1's series again";
  ExpectChangesAreTheDifference(*three, *emptied);
  ExpectChangesAreTheDifference(*emptied, *three);
}

}  // namespace
}  // namespace seismo
