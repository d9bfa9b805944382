#include "seismo/aggregate/shard_state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/series_data.h"
#include "seismo/aggregate/shard_image.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/core/hash.h"
#include "support/keys.h"

namespace seismo {
namespace {

using test::MakeDelta;
using test::Totals;

Delta Crash(Symbols& sym, const std::string& sig, uint64_t doc, uint64_t install) {
  Delta d = MakeDelta(sym, Table::kCrashes,
                      {"release", "Firefox", "146.0", "20261117090501", "Linux", "parent", "parent", sig}, 0,
                      {1});
  d.doc_hash = doc;
  d.install_hash = install;
  return d;
}

TEST(ShardState, SumsValuesPerSeries) {
  Symbols sym;
  ShardState s({}, &sym);
  Delta u = MakeDelta(sym, Table::kUsage, {"main", "release", "Linux", "20261117"}, 0, {3'600'000, 1});
  s.Apply(u);
  u.values = {1'800'000, 1};
  s.Apply(u);
  const auto totals = Totals(s, Table::kUsage, sym);
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals.begin()->first, "main\x1frelease\x1fLinux\x1f" "20261117");
  EXPECT_EQ(totals.begin()->second.total[0], 5'400'000);
  EXPECT_EQ(totals.begin()->second.total[1], 2);
}

// The index holds refs and half a hash, and compares keys through the series: keys whose
// hashes are equal (forced here) stay apart, each is found again, and releasing one (its
// only bucket expires) leaves the other where it was.
TEST(ShardState, KeysWithOneHashStayApartThroughReleaseAndReuse) {
  Symbols sym;
  AggregateOptions o;
  o.retention_ms = 3'600'000;
  ShardState s(o, &sym);
  constexpr uint64_t kHash = 0x1234'5678'9abc'def0;
  auto usage = [&](std::string_view os, int64_t t_ms) {
    Delta d = MakeDelta(sym, Table::kUsage, {"main", "release", os, "20261117"}, t_ms, {1000, 1});
    d.hash = kHash;
    return d;
  };
  constexpr int64_t kT0 = 1'795'000'000'000;
  s.Apply(usage("Linux", kT0));
  s.Apply(usage("Darwin", kT0 + 1'800'000));
  s.Apply(usage("Linux", kT0 + 60'000));
  auto totals = Totals(s, Table::kUsage, sym);
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals
                .at("main\x1frelease\x1fLinux\x1f"
                    "20261117")
                .total[1],
            2);
  EXPECT_EQ(totals
                .at("main\x1frelease\x1f"
                    "Darwin\x1f"
                    "20261117")
                .total[1],
            1);

  // Linux's buckets leave the retention, Darwin's does not.
  s.AdvanceTo(EventTime{kT0 + 3'600'000 + 120'000});
  EXPECT_EQ(s.series_count(), 1u);
  s.Apply(usage("Darwin", kT0 + 3'600'000 + 130'000));
  s.Apply(usage("Linux", kT0 + 3'600'000 + 130'000));  // a new series, maybe in the old slot
  totals = Totals(s, Table::kUsage, sym);
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals
                .at("main\x1frelease\x1fLinux\x1f"
                    "20261117")
                .total[1],
            1);
  EXPECT_EQ(totals
                .at("main\x1frelease\x1f"
                    "Darwin\x1f"
                    "20261117")
                .total[1],
            2);
  EXPECT_EQ(s.MemoryBytes(), s.RecountMemoryBytes());
}

TEST(ShardState, DuplicateCrashDocumentsCountOnce) {
  Symbols sym;
  ShardState s({}, &sym);
  s.Apply(Crash(sym, "sig", 11, Hash64("a")));
  s.Apply(Crash(sym, "sig", 11, Hash64("a")));
  s.Apply(Crash(sym, "sig", 12, Hash64("a")));
  s.Apply(Crash(sym, "sig", 0, Hash64("b")));  // no id: cannot be de-duplicated
  s.Apply(Crash(sym, "sig", 0, Hash64("b")));
  EXPECT_EQ(s.counters().duplicates, 1u);
  const auto v = Totals(s, Table::kCrashes, sym).begin()->second;
  EXPECT_EQ(v.total[0], 4);
  EXPECT_NEAR(v.installs.Estimate(), 2.0, 0.01);
}

// Images restored into one state (another shard count, a partition's shards) line their id
// generations up by epoch, in any order, as time would have moved them; an image that never
// remembered an id changes nothing.
TEST(ShardState, RestoredCrashIdsLineUpByEpochInAnyOrder) {
  ShardImage newer, older, none;
  newer.dedup_epoch = 10;
  newer.seen_docs = {1};
  newer.seen_previous = {2};
  older.dedup_epoch = 9;
  older.seen_docs = {3};
  older.seen_previous = {4};  // expired by epoch 10
  for (const std::vector<const ShardImage*>& order :
       {std::vector<const ShardImage*>{&older, &newer, &none},
        std::vector<const ShardImage*>{&newer, &none, &older}}) {
    Symbols sym;
    ShardState s({}, &sym);
    for (const ShardImage* image : order)
      s.RestoreBegin(*image, /*with_dedup=*/true, /*with_counters=*/false);
    const ShardImage out = s.Image();
    EXPECT_EQ(out.dedup_epoch, 10);
    EXPECT_EQ(out.seen_docs, (std::vector<uint64_t>{1}));
    EXPECT_EQ(out.seen_previous, (std::vector<uint64_t>{2, 3}));
  }
}

// Local state -> combine: two shards' snapshots merge to what one shard holds.
TEST(ShardState, MergeOfShardsEqualsOneShard) {
  Symbols sym;
  ShardState one({}, &sym), a({}, &sym), b({}, &sym);
  for (int i = 0; i < 100; ++i) {
    Delta d = Crash(sym, "sig" + std::to_string(i % 7), 1000 + i, Hash64(std::to_string(i % 13)));
    d.time = EventTime{1'795'000'000'000 + i * 60'000};
    one.Apply(d);
    (i % 2 ? a : b).Apply(d);  // crash series are routed by document: any split must merge
  }
  const AggregateOptions o;
  auto whole = MergeSnapshots({one.Snapshot()}, sym, o.bucket_ms, o.windows_ms, o.retention_ms);
  auto split = MergeSnapshots({a.Snapshot(), b.Snapshot()}, sym, o.bucket_ms, o.windows_ms, o.retention_ms);
  const auto w = Totals(*whole, Table::kCrashes), s = Totals(*split, Table::kCrashes);
  ASSERT_EQ(w.size(), 7u);
  ASSERT_EQ(split->table(Table::kCrashes).size(), 7u);  // each key once
  for (const auto& [k, v] : w) {
    EXPECT_EQ(v.total, s.at(k).total);
    EXPECT_EQ(v.installs.Estimate(), s.at(k).installs.Estimate());
  }
  for (const SeriesData* x : split->table(Table::kCrashes)) {
    const SeriesData* y = nullptr;
    for (const SeriesData* z : whole->table(Table::kCrashes)) {
      if (z->key == x->key) y = z;
    }
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(HourlyOf(*x).size(), HourlyOf(*y).size());
    for (size_t i = 0; i < split->spans_ms.size(); ++i) {
      EXPECT_EQ(split->Span(*x, i), whole->Span(*y, i));
      EXPECT_EQ(split->SpanInstalls(*x, i).Estimate(), whole->SpanInstalls(*y, i).Estimate());
    }
  }
}

// Hang series estimate the distinct installs behind them from the pings' clientIds, as
// crash series do; build usage only from main pings that reported sub-process crashes.
TEST(ShardState, HangSeriesCountDistinctInstallsOfTheirPings) {
  Symbols sym;
  ShardState s({}, &sym);
  DeltaEncoder encoder(&sym);
  auto ping = [](DocKind kind, std::string client, uint64_t gpu) {
    ParsedDocument d;
    d.kind = kind;
    d.dims.channel = "nightly";
    d.dims.build_id = "20261117090501";
    d.dims.build_date = "20261117";
    d.dims.os = "Linux";
    d.usage_ms = 3'600'000;
    d.install_id = std::move(client);
    d.subprocess_crashes.gpu = gpu;
    d.AddHang("parent", "Gecko", {"a", "b"}, "b", 200'000, 1);
    return d;
  };
  const EventTime t{1'795'000'000'000};
  std::vector<Delta> deltas;
  auto apply = [&](const ParsedDocument& doc) {
    deltas.clear();
    encoder.Encode(doc, t, deltas);
    for (const Delta& d : deltas) s.Apply(d);
  };
  for (int i = 0; i < 300; ++i) apply(ping(DocKind::kBhr, "storm", 0));  // a storm from one install
  for (int i = 0; i < 40; ++i) apply(ping(DocKind::kMain, "client-" + std::to_string(i % 20), i % 4 == 0 ? 1 : 0));
  apply(ping(DocKind::kBhr, "", 0));  // no clientId
  for (const auto& [key, v] : Totals(s, Table::kHangs, sym)) {
    const bool bhr = key.rfind("bhr", 0) == 0;
    EXPECT_EQ(v.total[1], bhr ? 301 : 40) << key;
    EXPECT_NEAR(v.installs.Estimate(), bhr ? 1.0 : 20.0, 0.5) << key;
  }
  // The build's installs are every main ping's (ADR 0031); its hours hold those with a
  // sub-process crash: clients 0, 4, 8, 12, 16.
  const auto build = Totals(s, Table::kBuildUsage, sym).begin()->second;
  EXPECT_EQ(build.total[2], 10);
  EXPECT_NEAR(build.installs.Estimate(), 20.0, 0.5);
  s.Snapshot()->ForEach(Table::kBuildUsage,
                        [](const SeriesData& x) { EXPECT_NEAR(InstallsOfHours(x).Estimate(), 5.0, 0.5); });
  for (const auto& [key, v] : Totals(s, Table::kUsage, sym)) EXPECT_TRUE(v.installs.empty()) << key;
}

// A snapshot shares what did not change and never sees a later change: the shard
// copies a series (and the hour) a snapshot holds before changing it.
TEST(ShardState, SnapshotsNeverChangeAndShareWhatDidNotChange) {
  Symbols sym;
  ShardState s({}, &sym);
  const int64_t t0 = 1'795'000'000'000;
  for (int i = 0; i < 600; ++i) {
    s.Apply(MakeDelta(sym, Table::kUsage, {"main", "release", "Linux", std::to_string(20261100 + i)}, t0, {1, 1}));
  }
  auto first = s.Snapshot();
  s.Apply(MakeDelta(sym, Table::kUsage, {"main", "release", "Linux", "20261100"}, t0 + 1, {10, 1}));
  auto second = s.Snapshot();
  std::vector<const SeriesData*> a, b;
  first->ForEach(Table::kUsage, [&](const SeriesData& x) { a.push_back(&x); });
  second->ForEach(Table::kUsage, [&](const SeriesData& x) { b.push_back(&x); });
  ASSERT_EQ(a.size(), 600u);
  ASSERT_EQ(b.size(), 600u);
  size_t shared = 0;
  int64_t before = 0, after = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    shared += a[i] == b[i];
    before += a[i]->total()[0];
    after += b[i]->total()[0];
  }
  EXPECT_EQ(shared, 599u);  // only the changed series was copied
  EXPECT_EQ(before, 600);   // the first snapshot did not see the change
  EXPECT_EQ(after, 610);
  // Pages without a change are the same objects.
  EXPECT_EQ(first->pages[0].size(), 3u);
  EXPECT_EQ(first->pages[0][1], second->pages[0][1]);
  EXPECT_NE(first->pages[0][0], second->pages[0][0]);
}

// Every stack comes back as it was interned, the one-empty-frame stack [""] included
// (joined with separators only, it would read as the empty stack []): stacks are
// sequences of frame ids, never joined strings.
TEST(KeyEncoding, EveryStackRoundTripsAndEmptyFramesAreFrames) {
  const std::vector<std::vector<std::string>> stacks = {{},    {""},      {"", ""},  {"", "", ""},
                                                        {"a"}, {"a", ""}, {"", "a"}, {"a", "b"}};
  Symbols symbols;
  std::set<StackId> ids;
  for (const auto& stack : stacks) {
    const StackId id = symbols.InternStack(stack);
    ids.insert(id);
    std::vector<std::string> back;
    for (Sym frame : symbols.Frames(id)) back.emplace_back(symbols.Text(frame));
    EXPECT_EQ(back, stack) << testing::PrintToString(stack);
  }
  EXPECT_EQ(ids.size(), stacks.size()) << "two stacks share an id";
  EXPECT_EQ(symbols.InternStack(std::vector<std::string>{}), symbols.empty_stack());
}

}  // namespace
}  // namespace seismo
