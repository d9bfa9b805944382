#include "seismo/aggregate/shard_state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "seismo/aggregate/aggregates.h"
#include "seismo/aggregate/delta.h"
#include "seismo/core/hash.h"

namespace seismo {
namespace {

Delta Crash(const std::string& sig, uint64_t doc, uint64_t install) {
  Delta d;
  d.table = Table::kCrashes;
  d.key = JoinKey({"release", "Firefox", "146.0", "20261117090501", "Linux", "parent", "parent", sig});
  d.values[0] = 1;
  d.doc_hash = doc;
  d.install_hash = install;
  return d;
}

TEST(ShardState, SumsValuesPerSeries) {
  ShardState s;
  Delta u;
  u.table = Table::kUsage;
  u.key = JoinKey({"main", "release", "Linux", "20261117"});
  u.values = {3'600'000, 1};
  s.Apply(u);
  u.values = {1'800'000, 1};
  s.Apply(u);
  const SeriesValues v = s.Totals(Table::kUsage).at(u.key);  // Totals() is a temporary
  EXPECT_EQ(v.v[0], 5'400'000);
  EXPECT_EQ(v.v[1], 2);
}

TEST(ShardState, DuplicateCrashDocumentsCountOnce) {
  ShardState s;
  s.Apply(Crash("sig", 11, Hash64("a")));
  s.Apply(Crash("sig", 11, Hash64("a")));
  s.Apply(Crash("sig", 12, Hash64("a")));
  s.Apply(Crash("sig", 0, Hash64("b")));  // no id: cannot be de-duplicated
  s.Apply(Crash("sig", 0, Hash64("b")));
  EXPECT_EQ(s.counters().duplicates, 1u);
  SeriesValues v = s.Totals(Table::kCrashes).begin()->second;
  EXPECT_EQ(v.v[0], 4);
  EXPECT_NEAR(v.installs.Estimate(), 2.0, 0.01);
}

TEST(Aggregates, MergeOfShardsEqualsOneShard) {
  ShardState one, a, b;
  for (int i = 0; i < 100; ++i) {
    Delta d = Crash("sig" + std::to_string(i % 7), 1000 + i, Hash64(std::to_string(i % 13)));
    one.Apply(d);
    (Hash64(d.key) % 2 ? a : b).Apply(d);
  }
  Aggregates whole, split;
  whole.Merge(one);
  split.Merge(a);
  split.Merge(b);
  ASSERT_EQ(whole.table(Table::kCrashes).size(), split.table(Table::kCrashes).size());
  for (const auto& [k, v] : whole.table(Table::kCrashes)) {
    EXPECT_EQ(v.v, split.table(Table::kCrashes).at(k).v);
    EXPECT_EQ(v.installs.Estimate(), split.table(Table::kCrashes).at(k).installs.Estimate());
  }
}

// Hang series estimate the distinct installs behind them from the pings' clientIds, as
// crash series do; build usage only from main pings that reported sub-process crashes.
TEST(ShardState, HangSeriesCountDistinctInstallsOfTheirPings) {
  ShardState s;
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
    HangRecord h;
    h.process = "parent";
    h.thread = "Gecko";
    h.stack = {"a", "b"};
    h.signature = "b";
    h.hang_us = 200'000;
    h.hang_count = 1;
    d.hangs.push_back(h);
    return d;
  };
  const EventTime t{1'795'000'000'000};
  for (int i = 0; i < 300; ++i) {  // a storm from one install
    DocumentToDeltas(ping(DocKind::kBhr, "storm", 0), t, [&](Delta&& d) { s.Apply(d); });
  }
  for (int i = 0; i < 40; ++i) {
    DocumentToDeltas(ping(DocKind::kMain, "client-" + std::to_string(i % 20), i % 4 == 0 ? 1 : 0), t,
                     [&](Delta&& d) { s.Apply(d); });
  }
  DocumentToDeltas(ping(DocKind::kBhr, "", 0), t, [&](Delta&& d) { s.Apply(d); });  // no clientId
  for (const auto& [key, v] : s.Totals(Table::kHangs)) {
    const bool bhr = key.rfind("bhr", 0) == 0;
    EXPECT_EQ(v.v[1], bhr ? 301 : 40) << key;
    EXPECT_NEAR(v.installs.Estimate(), bhr ? 1.0 : 20.0, 0.5) << key;
  }
  // Main pings with a sub-process crash: clients 0, 4, 8, 12, 16.
  const SeriesValues build = s.Totals(Table::kBuildUsage).begin()->second;
  EXPECT_EQ(build.v[2], 10);
  EXPECT_NEAR(build.installs.Estimate(), 5.0, 0.5);
  for (const auto& [key, v] : s.Totals(Table::kUsage)) EXPECT_TRUE(v.installs.empty()) << key;
}

TEST(KeyEncoding, SplitsWhatJoinJoined) {
  std::string key = JoinKey({"a", "", "c d"});
  auto f = SplitKey(key);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1], "");
  EXPECT_EQ(f[2], "c d");
  EXPECT_TRUE(SplitStack("").empty());
  const std::string stack = JoinStack({"x", "y"});  // SplitStack returns views into it
  auto s = SplitStack(stack);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1], "y");
}

// Every stack comes back as it was joined, the one-empty-frame stack [""] included
// (joined with separators only, it would read as the empty stack []).
TEST(KeyEncoding, EveryStackRoundTripsAndEmptyFramesAreFrames) {
  const std::vector<std::vector<std::string>> stacks = {{},    {""},      {"", ""},  {"", "", ""},
                                                        {"a"}, {"a", ""}, {"", "a"}, {"a", "b"}};
  std::set<std::string> joined;
  for (const auto& stack : stacks) {
    const std::string key = JoinStack(stack);
    joined.insert(key);
    std::vector<std::string> back;
    for (std::string_view frame : SplitStack(key)) back.emplace_back(frame);
    EXPECT_EQ(back, stack) << testing::PrintToString(stack);
  }
  EXPECT_EQ(joined.size(), stacks.size()) << "two stacks share a key";
}

}  // namespace
}  // namespace seismo
