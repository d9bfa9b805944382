// The burst rule's numbers by hand (SPEC §5, docs/adr/0006-alerts.md): the window is the last
// complete hour of the crash world, the baseline the day before it, each unit counted once.
// Crashes and usage sit on both sides of every edge, one minute bucket apart, so a window or
// a baseline moved by one bucket changes a count.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/alert/engine.h"
#include "support/keys.h"

namespace seismo {
namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 3'600'000;
constexpr int64_t kEnd = 498'611 * kHour;  // an hour's start: the crash world's time

class BurstNumbers : public ::testing::Test {
 protected:
  // `count` crashes of `signature`, each from its own install.
  void Crashes(int64_t t_ms, int count, const std::string& signature = "burst_sig") {
    for (int i = 0; i < count; ++i) {
      Delta d =
          test::MakeDelta(*symbols_, Table::kCrashes,
                          {"release", "Firefox", "150.0", "20261101000000", "Linux", "parent", "", signature},
                          t_ms, Values{1});
      d.install_hash = InstallHash("install-" + std::to_string(++installs_));
      state_.Apply(d);
    }
  }
  void Usage(int64_t t_ms, int64_t usage_ms) {
    Delta d =
        test::MakeDelta(*symbols_, Table::kBuildUsage,
                        {"release", "Firefox", "150.0", "20261101000000", "Linux"}, t_ms, Values{usage_ms});
    d.install_hash = InstallHash("usage-install");
    state_.Apply(d);
  }
  // The window is [kEnd - 1 h, kEnd), the baseline the `baseline_ms` before it. Crashes and
  // usage in the window's first and last units, the baseline's last and first, the unit before
  // the baseline and the crash world's own (incomplete) one: 12 crashes and 2 usage hours in
  // the window, 3 and 30 in the baseline.
  void PlantAtTheEdges(int64_t baseline_ms) {
    const int64_t start = kEnd - kHour - baseline_ms;
    Crashes(kEnd - kHour, 5);
    Crashes(kEnd - 1, 7);
    Crashes(kEnd - kHour - 1, 2);
    Crashes(start, 1);
    Crashes(start - 1, 40);
    Crashes(kEnd, 50);
    Usage(kEnd - kHour, kHour);
    Usage(kEnd - 1, kHour);
    Usage(kEnd - kHour - 1, 10 * kHour);
    Usage(start, 20 * kHour);
    Usage(start - 1, 1000 * kHour);
    Usage(kEnd, 500 * kHour);
  }
  const AlertCandidate* Burst(const std::vector<AlertCandidate>& candidates) const {
    for (const AlertCandidate& c : candidates) {
      if (c.key.rule == AlertRule::kBurst && c.key.signature == "burst_sig") return &c;
    }
    return nullptr;
  }
  std::shared_ptr<const Snapshot> Snap() {
    state_.AdvanceTo(EventTime{kEnd});
    return MergeSnapshots({state_.Snapshot()}, *symbols_, options_.bucket_ms, options_.windows_ms,
                          options_.retention_ms, true, symbols_);
  }

  AggregateOptions options_;
  std::shared_ptr<Symbols> symbols_ = std::make_shared<Symbols>();
  ShardState state_{options_, symbols_.get()};
  int installs_ = 0;
};

TEST_F(BurstNumbers, TheLastCompleteHourAgainstTheDayBeforeItEdgeByEdge) {
  ASSERT_EQ(options_.bucket_ms, kMinute);
  PlantAtTheEdges(24 * kHour);
  Crashes(kEnd - 30 * kMinute, 3);  // and one inside the window

  const std::vector<AlertCandidate> candidates = EvaluateRules(*Snap(), AlertOptions{});
  const AlertCandidate* burst = Burst(candidates);
  ASSERT_NE(burst, nullptr);
  EXPECT_EQ(burst->key.channel, "release");
  EXPECT_EQ(burst->key.os, "Linux");
  EXPECT_EQ(burst->numbers.count_new, 5 + 3 + 7);
  EXPECT_EQ(burst->numbers.count_base, 2 + 1);
  EXPECT_EQ(burst->numbers.exposure, ExposureMode::kUsageHours);
  EXPECT_DOUBLE_EQ(burst->numbers.exposure_new, 2.0);
  EXPECT_DOUBLE_EQ(burst->numbers.exposure_base, 30.0);
  // (15 / 2 h) / (3 / 30 h) = 75.
  ASSERT_TRUE(burst->numbers.ratio.has_value());
  EXPECT_DOUBLE_EQ(*burst->numbers.ratio, 75.0);
  EXPECT_DOUBLE_EQ(burst->numbers.age_hours, 1.0);
  EXPECT_TRUE(burst->holds);
}

// A baseline longer than the buckets a snapshot keeps is counted in whole hours: the same edges.
TEST_F(BurstNumbers, ABaselineBeyondTheBucketsIsCountedInHours) {
  AlertOptions o;
  o.burst_baseline = std::chrono::hours(7 * 24);  // with the window, past the 7-day buckets
  PlantAtTheEdges(7 * 24 * kHour);
  const std::vector<AlertCandidate> candidates = EvaluateRules(*Snap(), o);
  const AlertCandidate* burst = Burst(candidates);
  ASSERT_NE(burst, nullptr);
  EXPECT_EQ(burst->numbers.count_new, 5 + 7);
  EXPECT_EQ(burst->numbers.count_base, 2 + 1);
  EXPECT_DOUBLE_EQ(burst->numbers.exposure_new, 2.0);
  EXPECT_DOUBLE_EQ(burst->numbers.exposure_base, 30.0);
}

// Under min_count crashes in the window, nothing is tested; at it, the rule holds.
TEST_F(BurstNumbers, MinCountIsTheWindowsCountAtItsEdges) {
  Crashes(kEnd - kHour, 4);
  Crashes(kEnd - 1, 5);
  Crashes(kEnd - kHour - 1, 1);  // the baseline's: not the window's
  Crashes(kEnd, 30);             // incomplete: not the window's
  Usage(kEnd - 30 * kMinute, kHour);
  Usage(kEnd - 12 * kHour, 24 * kHour);
  Usage(kEnd, kHour);
  AlertOptions o;
  o.min_count = 10;
  EXPECT_EQ(Burst(EvaluateRules(*Snap(), o)), nullptr);
  o.min_count = 9;
  const std::vector<AlertCandidate> candidates = EvaluateRules(*Snap(), o);
  const AlertCandidate* burst = Burst(candidates);
  ASSERT_NE(burst, nullptr);
  EXPECT_EQ(burst->numbers.count_new, 9);
  EXPECT_EQ(burst->numbers.count_base, 1);
  EXPECT_TRUE(burst->holds);  // (9 / 1 h) / (1 / 24 h) = 216
}

}  // namespace
}  // namespace seismo
