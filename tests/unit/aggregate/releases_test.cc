// Releases: a build beside its baseline builds at equal age (aggregate/releases.h), with
// hand-computed numbers: the comparison the alert rules make and the API shows.
#include "seismo/aggregate/releases.h"

#include <gtest/gtest.h>

#include <string>

#include "seismo/aggregate/shard_state.h"
#include "seismo/core/time.h"
#include "support/keys.h"

namespace seismo {
namespace {

constexpr int64_t kH = kHourMs;

// Three builds of "beta", 48 h apart, the newest two hours old at stream time:
//
//   build  hour 1 (of its age)            hour 2                          hour 10
//   A      50 h usage, 5 content          100 h, 5 content                100 h, 20 content
//   B      150 h, 6 parent                150 h, 3 gpu reports; main      -
//                                         pings counted 5 gpu crashes
//   C      20 h, 3 content                10 h, 1 parent (a startup one)  -
class Releases : public ::testing::Test {
 protected:
  static constexpr const char* kA = "20261110000000";
  static constexpr const char* kB = "20261112000000";
  static constexpr const char* kC = "20261114000000";

  void SetUp() override {
    t0_ = ParseTimestamp("2026-11-10T00:00:00Z")->ms;
    Usage(kA, 0, 1, 50);
    Crashes(kA, 0, 1, "content", 5);
    Usage(kA, 0, 2, 100);
    Crashes(kA, 0, 2, "content", 5);
    Usage(kA, 0, 10, 100);
    Crashes(kA, 0, 10, "content", 20);
    Usage(kB, 48, 1, 150);
    Crashes(kB, 48, 1, "parent", 6);
    Usage(kB, 48, 2, 150, /*gpu=*/5);
    Crashes(kB, 48, 2, "gpu", 3);
    Usage(kC, 96, 1, 20);
    Crashes(kC, 96, 1, "content", 3);
    Usage(kC, 96, 2, 10);
    Crashes(kC, 96, 2, "parent", 1, /*startup=*/true);
    state_.AdvanceTo(EventTime{t0_ + 97 * kH + 30 * 60'000});  // C's second hour
    snap_ = MergeSnapshots({state_.Snapshot()}, symbols_, 60'000, {kH, 24 * kH}, 14 * 24 * kH);
    index_ = IndexSnapshot(*snap_);
  }

  // Deltas in hour `hour` of the build's age (1 = the hour of its first ping, which is
  // `first_hour` hours after t0), ten minutes into it.
  int64_t At(int64_t first_hour, int hour) const { return t0_ + (first_hour + hour - 1) * kH + 10 * 60'000; }
  void Usage(const char* build, int64_t first_hour, int hour, int64_t usage_hours, int64_t gpu = 0) {
    Delta d = test::MakeDelta(symbols_, Table::kBuildUsage, {"beta", "Firefox", "1", build, "Linux"},
                              At(first_hour, hour), {usage_hours * kH, 1, gpu, 0, 0});
    state_.Apply(d);
  }
  void Crashes(const char* build, int64_t first_hour, int hour, std::string_view cls, int64_t n,
               bool startup = false) {
    Delta d =
        test::MakeDelta(symbols_, Table::kCrashes, {"beta", "Firefox", "1", build, "Linux", cls, cls, "sig"},
                        At(first_hour, hour), {n, startup ? n : 0});
    state_.Apply(d);
  }
  size_t CrashBuildAt(const char* id) const {
    for (size_t i = 0; i < index_.crash_builds.size(); ++i) {
      if (snap_->Text(index_.crash_builds[i].build) == id) return i;
    }
    ADD_FAILURE() << id;
    return 0;
  }

  int64_t t0_ = 0;
  Symbols symbols_;
  ShardState state_{AggregateOptions{}, &symbols_};
  std::shared_ptr<const Snapshot> snap_;
  BuildIndex index_;
};

TEST_F(Releases, ANewBuildIsComparedWithItsBaselinesAtItsOwnAge) {
  const auto c = CompareCrashBuild(*snap_, index_, CrashBuildAt(kC), BaselinePolicy{});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->age.age_hours, 2);
  EXPECT_EQ(c->baseline_builds, (std::vector<std::string>{kB, kA})) << "newest first";
  // C over its life: 30 usage hours, 3 content + 1 parent (a startup crash).
  EXPECT_EQ(c->build.usage_ms, 30 * kH);
  EXPECT_EQ(c->build.total, 4);
  EXPECT_EQ(c->build.by_class[static_cast<size_t>(CrashClass::kContent)], 3);
  EXPECT_EQ(c->build.startup, 1);
  // A and B over their first two hours: A 150 h and 10 content; B 300 h, 6 parent and
  // gpu the larger of 3 reports and 5 main-ping counts: 5. A's hour 10 is past the age.
  EXPECT_EQ(c->baseline.usage_ms, 450 * kH);
  EXPECT_EQ(c->baseline.by_class[static_cast<size_t>(CrashClass::kContent)], 10);
  EXPECT_EQ(c->baseline.by_class[static_cast<size_t>(CrashClass::kParent)], 6);
  EXPECT_EQ(c->baseline.by_class[static_cast<size_t>(CrashClass::kGpu)], 5);
  EXPECT_EQ(c->baseline.total, 21);
  // Rates per 1000 usage hours: 4 / 30 h = 133.3 against 21 / 450 h = 46.7, x2.86. Over
  // their whole lives the baselines' rate would be 41 / 550 h = 74.5 (x1.79).
  EXPECT_NEAR(1000.0 * c->build.total / (c->build.usage_ms / kH) /
                  (1000.0 * c->baseline.total / (c->baseline.usage_ms / kH)),
              (4.0 / 30) / (21.0 / 450), 1e-12);
}

TEST_F(Releases, WithoutAgeMatchingBaselinesCountTheirWholeLives) {
  BaselinePolicy policy;
  policy.age_matched = false;
  const auto c = CompareCrashBuild(*snap_, index_, CrashBuildAt(kC), policy);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->baseline.usage_ms, 550 * kH);
  EXPECT_EQ(c->baseline.total, 41);
}

TEST_F(Releases, TooFewQualifyingBaselinesGiveNoComparison) {
  BaselinePolicy policy;
  policy.min_baseline_usage_hours = 260;  // A (250 h) no longer qualifies; B alone is too few
  EXPECT_FALSE(CompareCrashBuild(*snap_, index_, CrashBuildAt(kC), policy).has_value());
  policy.min_baseline_builds = 1;
  const auto c = CompareCrashBuild(*snap_, index_, CrashBuildAt(kC), policy);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->baseline_builds, std::vector<std::string>{kB});
  // The oldest build has nothing before it.
  EXPECT_FALSE(CompareCrashBuild(*snap_, index_, CrashBuildAt(kA), BaselinePolicy{}).has_value());
}

TEST_F(Releases, CountsByAgeGiveEachHourOfABuildsLifeItsOwnCounts) {
  const auto a = CrashCountsByAge(*snap_, index_.crash_builds[CrashBuildAt(kA)], 10);
  ASSERT_EQ(a.size(), 10u);
  EXPECT_EQ(a[0].usage_ms, 50 * kH);
  EXPECT_EQ(a[0].reports[static_cast<size_t>(CrashClass::kContent)], 5);
  EXPECT_EQ(a[1].usage_ms, 100 * kH);
  for (size_t k = 2; k < 9; ++k) EXPECT_EQ(a[k].usage_ms, 0) << k;
  EXPECT_EQ(a[9].usage_ms, 100 * kH);
  EXPECT_EQ(a[9].reports[static_cast<size_t>(CrashClass::kContent)], 20);
  const auto b = CrashCountsByAge(*snap_, index_.crash_builds[CrashBuildAt(kB)], 2);
  EXPECT_EQ(b[1].reports[static_cast<size_t>(CrashClass::kGpu)], 3);
  EXPECT_EQ(b[1].main_pings[static_cast<size_t>(CrashClass::kGpu)], 5);
  EXPECT_EQ(CrashTotals::Of(b[1]).total, 5) << "gpu: the larger of reports and main pings";
  // The hours add up to the comparison's: B's first two hours.
  CrashCounts two = b[0];
  two.Add(b[1]);
  EXPECT_EQ(CrashTotals::Of(two).total, 11);
}

TEST(ReleasesHangs, HangRatesAreComparedAtEqualAgeBySource) {
  Symbols symbols;
  ShardState state({}, &symbols);
  const int64_t t0 = ParseTimestamp("2026-11-10T00:00:00Z")->ms;
  auto usage = [&](const char* date, int64_t at_hour, int64_t hours) {
    state.Apply(test::MakeDelta(symbols, Table::kUsage, {"bhr", "nightly", "Linux", date},
                                t0 + at_hour * kH + 60'000, {hours * kH, 1}));
  };
  auto hang = [&](const char* date, int64_t at_hour, int64_t ms, int64_t count) {
    state.Apply(test::MakeDelta(symbols, Table::kHangs,
                                {"bhr", "nightly", "Linux", date, "parent", "Gecko", "f",
                                 "root\x1e"
                                 "f"},
                                t0 + at_hour * kH + 60'000, {ms * 1000, count}));
  };
  usage("20261110", 0, 200);  // two earlier build dates: 200 h and 300 h in their first hour,
  hang("20261110", 0, 1000, 4);
  usage("20261110", 5, 400);  // and more later, past the new one's age
  hang("20261110", 5, 9000, 9);
  usage("20261111", 24, 300);
  hang("20261111", 24, 2000, 6);
  usage("20261112", 48, 50);  // the new one: 50 h, 1500 ms of hangs in its only hour
  hang("20261112", 48, 1500, 3);
  state.AdvanceTo(EventTime{t0 + 48 * kH + 30 * 60'000});
  const auto snap = MergeSnapshots({state.Snapshot()}, symbols, 60'000, {kH}, 14 * 24 * kH);
  const BuildIndex index = IndexSnapshot(*snap);
  ASSERT_EQ(index.hang_builds.size(), 3u);
  const Sym bhr = *symbols.text().Find("bhr");
  const auto c = CompareHangBuild(*snap, index, 2, bhr, BaselinePolicy{});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->age.age_hours, 1);
  EXPECT_EQ(c->baseline_builds, (std::vector<std::string>{"20261111", "20261110"}));
  EXPECT_EQ(c->build.usage_ms, 50 * kH);
  EXPECT_EQ(c->build.hang_us, 1'500'000);
  EXPECT_EQ(c->baseline.usage_ms, 500 * kH) << "each baseline's first hour only";
  EXPECT_EQ(c->baseline.hang_us, 3'000'000);
  EXPECT_EQ(c->baseline.hang_count, 10);
  // 30 ms per usage hour against 6: x5.
  const auto by_age = HangCountsByAge(index.hang_builds[0], bhr, 6);
  EXPECT_EQ(by_age[0].hang_us, 1'000'000);
  EXPECT_EQ(by_age[5].usage_ms, 400 * kH);
  EXPECT_EQ(by_age[5].hang_count, 9);
}

// A build's OS names: each once, in text order, however many series name them and in
// whatever order (they are kept few as the series are added, not sorted by text at the end).
TEST(ReleasesOsNames, EachOsOnceInTextOrderOverManySeries) {
  Symbols symbols;
  ShardState state({}, &symbols);
  const int64_t t0 = ParseTimestamp("2026-11-10T00:00:00Z")->ms;
  const std::vector<std::string> os = {"Windows_NT", "Linux", "Darwin", "Linux", "Android", "Windows_NT"};
  for (int i = 0; i < 3000; ++i) {
    const std::string& name = os[static_cast<size_t>(i * 7 + i / 11) % os.size()];
    state.Apply(
        test::MakeDelta(symbols, Table::kHangs,
                        {"bhr", "nightly", name, "20261110", "parent", "Gecko", "f" + std::to_string(i),
                         "root\x1e"
                         "f" +
                             std::to_string(i)},
                        t0 + 60'000, {1000, 1}));
    state.Apply(test::MakeDelta(symbols, Table::kBuildUsage, {"beta", "Firefox", "1", "20261110000000", name},
                                t0 + 60'000, {kH, 1, 0, 0, 0}));
  }
  const auto snap = MergeSnapshots({state.Snapshot()}, symbols, 60'000, {kH}, 14 * 24 * kH);
  const BuildIndex index = IndexSnapshot(*snap);
  const std::vector<std::string> want = {"Android", "Darwin", "Linux", "Windows_NT"};
  for (const auto* names : {&index.hang_builds.at(0).os_names, &index.crash_builds.at(0).os_names}) {
    std::vector<std::string> got;
    for (Sym s : *names) got.emplace_back(snap->Text(s));
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace seismo
