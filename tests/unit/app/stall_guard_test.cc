#include "seismo/app/stall_guard.h"

#include <gtest/gtest.h>

namespace seismo {
namespace {

using std::chrono::milliseconds;
using T = StallGuard::Clock::time_point;

T At(int64_t ms) { return T{} + milliseconds(1'000'000 + ms); }

TEST(StallGuard, TurnsWithinTheSessionHoldNothing) {
  StallGuard g(milliseconds(6000));
  EXPECT_FALSE(g.Turn(At(0)));  // the first turn has nothing to compare with
  EXPECT_FALSE(g.Turn(At(100)));
  EXPECT_FALSE(g.Turn(At(6100)));  // exactly one session: still a member
  EXPECT_FALSE(g.Holding(At(6100)));
  EXPECT_EQ(g.last_stall(), milliseconds(0));
}

TEST(StallGuard, ATurnLongerThanTheSessionHoldsForOneSessionMore) {
  StallGuard g(milliseconds(6000));
  g.Turn(At(0));
  EXPECT_TRUE(g.Turn(At(6101)));
  EXPECT_EQ(g.last_stall(), milliseconds(6101));
  EXPECT_TRUE(g.Holding(At(6101)));
  EXPECT_FALSE(g.Turn(At(6200)));  // turning normally again does not end the hold...
  EXPECT_TRUE(g.Holding(At(12100)));
  EXPECT_FALSE(g.Holding(At(12101)));  // ...one more session does
}

TEST(StallGuard, ARebalanceCallbackEndsTheHold) {
  StallGuard g(milliseconds(6000));
  g.Turn(At(0));
  ASSERT_TRUE(g.Turn(At(20000)));
  g.MembershipKnown();
  EXPECT_FALSE(g.Holding(At(20001)));
  // A later stall holds again.
  EXPECT_TRUE(g.Turn(At(40000)));
  EXPECT_TRUE(g.Holding(At(40001)));
}

TEST(StallGuard, TheSessionTimeoutIsLibrdkafkasProperty) {
  EXPECT_EQ(SessionTimeoutOf({}), milliseconds(45000));
  EXPECT_EQ(SessionTimeoutOf({{"session.timeout.ms", "6000"}}), milliseconds(6000));
  for (const char* bad : {"", "6s", "-1", "0", "99999999999999999999"})
    EXPECT_EQ(SessionTimeoutOf({{"session.timeout.ms", bad}}), milliseconds(45000)) << bad;
}

}  // namespace
}  // namespace seismo
