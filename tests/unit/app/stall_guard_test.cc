#include "seismo/app/stall_guard.h"

#include <gtest/gtest.h>

namespace seismo {
namespace {

using std::chrono::milliseconds;
using T = StallGuard::Clock::time_point;

T At(int64_t ms) { return T{} + milliseconds(1'000'000 + ms); }

TEST(StallGuard, ReadingsWithinTheSessionHoldNothing) {
  StallGuard g(milliseconds(6000));
  EXPECT_FALSE(g.Tick(At(0)));  // the first reading has nothing to compare with
  EXPECT_FALSE(g.Tick(At(100)));
  EXPECT_FALSE(g.Tick(At(6100)));  // exactly one session: still a member
  EXPECT_FALSE(g.Check(At(6100)));
  EXPECT_FALSE(g.Check(At(12100)));  // a reader exactly one session after the last reading
  EXPECT_EQ(g.last_stall(), milliseconds(0));
}

TEST(StallGuard, AGapLongerThanTheSessionHoldsForOneSessionMore) {
  StallGuard g(milliseconds(6000));
  g.Tick(At(0));
  EXPECT_TRUE(g.Tick(At(6101)));
  EXPECT_EQ(g.last_stall(), milliseconds(6101));
  EXPECT_TRUE(g.Check(At(6101)));
  EXPECT_FALSE(g.Tick(At(6200)));  // reading normally again does not end the hold...
  EXPECT_TRUE(g.Check(At(12100)));
  g.Tick(At(12000));
  EXPECT_FALSE(g.Check(At(12101)));  // ...one more session does
}

TEST(StallGuard, AReaderFindsAStallTheWatchHasNotSeenYet) {
  StallGuard g(milliseconds(6000));
  g.Tick(At(0));
  // The process resumes; a barrier looks before the watch has run again.
  EXPECT_TRUE(g.Check(At(20000)));
  EXPECT_EQ(g.last_stall(), milliseconds(20000));
  EXPECT_TRUE(g.Tick(At(20010)));  // the watch then finds it too: the hold runs from there
  g.Tick(At(26000));
  EXPECT_TRUE(g.Check(At(26009)));
  EXPECT_FALSE(g.Check(At(26011)));
}

TEST(StallGuard, ARebalanceCallbackEndsTheHold) {
  StallGuard g(milliseconds(6000));
  g.Tick(At(0));
  ASSERT_TRUE(g.Tick(At(20000)));
  g.MembershipKnown();
  EXPECT_FALSE(g.Check(At(20001)));
  // A later stall holds again.
  EXPECT_TRUE(g.Tick(At(40000)));
  EXPECT_TRUE(g.Check(At(40001)));
}

TEST(StallGuard, WithoutAWatchNothingIsLate) {
  StallGuard g(milliseconds(6000));
  EXPECT_FALSE(g.Check(At(0)));  // never read
  g.StartWatch();
  EXPECT_FALSE(g.Check(StallGuard::Clock::now()));
  g.StopWatch();
  EXPECT_FALSE(g.Check(StallGuard::Clock::now() + std::chrono::hours(1)));
}

TEST(StallGuard, TheSessionTimeoutIsLibrdkafkasProperty) {
  EXPECT_EQ(SessionTimeoutOf({}), milliseconds(45000));
  EXPECT_EQ(SessionTimeoutOf({{"session.timeout.ms", "6000"}}), milliseconds(6000));
  for (const char* bad : {"", "6s", "-1", "0", "99999999999999999999"})
    EXPECT_EQ(SessionTimeoutOf({{"session.timeout.ms", bad}}), milliseconds(45000)) << bad;
}

}  // namespace
}  // namespace seismo
