#include "seismo/core/time.h"

#include <gtest/gtest.h>

namespace seismo {
namespace {

TEST(ParseTimestamp, ReadsUtcWithMilliseconds) {
  auto t = ParseTimestamp("2017-06-01T12:34:56.789Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->ms, 1496320496789);
}

TEST(ParseTimestamp, AppliesOffsetAndTruncatesMicroseconds) {
  auto t = ParseTimestamp("2026-09-18T12:34:56.123456+00:00");
  ASSERT_TRUE(t);
  EXPECT_EQ(FormatTimestamp(*t), "2026-09-18T12:34:56.123Z");
  auto plus_two = ParseTimestamp("2026-09-18T14:34:56.123+02:00");
  ASSERT_TRUE(plus_two);
  EXPECT_EQ(plus_two->ms, t->ms);
}

TEST(ParseTimestamp, AcceptsDateOnlyAndSpaceSeparator) {
  EXPECT_EQ(ParseTimestamp("1970-01-02")->ms, 86400000);
  EXPECT_EQ(ParseTimestamp("1970-01-01 00:00:01")->ms, 1000);
}

TEST(ParseTimestamp, RejectsGarbage) {
  for (const char* bad : {"", "yesterday", "2026-13-01", "2026-01-01T25:00:00Z", "2026-01-01Tx",
                          "2026-01-01T10:00:00Zjunk"}) {
    EXPECT_FALSE(ParseTimestamp(bad)) << bad;
  }
}

TEST(FormatTimestamp, RoundTrips) {
  EventTime t{1795000123456};
  EXPECT_EQ(ParseTimestamp(FormatTimestamp(t))->ms, t.ms);
}

TEST(ParseDuration, ReadsUnits) {
  EXPECT_EQ(ParseDuration("500ms")->count(), 500);
  EXPECT_EQ(ParseDuration("60s")->count(), 60000);
  EXPECT_EQ(ParseDuration("10m")->count(), 600000);
  EXPECT_EQ(ParseDuration("1h")->count(), 3600000);
  EXPECT_EQ(ParseDuration("14d")->count(), 14 * 86400000LL);
  EXPECT_FALSE(ParseDuration("1 h"));
  EXPECT_FALSE(ParseDuration("h"));
  EXPECT_FALSE(ParseDuration("5y"));
  EXPECT_EQ(FormatDuration(std::chrono::hours(24 * 7)), "7d");
}

}  // namespace
}  // namespace seismo
