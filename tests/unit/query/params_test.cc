#include "seismo/query/params.h"

#include <gtest/gtest.h>

#include "query_fixture.h"

namespace seismo {
namespace {

using testing::kDay;
using testing::kHour;

struct BadCase {
  Endpoint endpoint;
  const char* query;
  const char* error;
};

class BadParams : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadParams, AnswerNamesTheParameter) {
  const BadCase& c = GetParam();
  auto params = ParseQueryString(c.query);
  std::string message;
  if (!params) {
    message = params.error().message();
  } else {
    auto q = ParseQuery(c.endpoint, *params, {kHour, kDay, 7 * kDay});
    ASSERT_FALSE(q.has_value()) << c.query;
    message = q.error().message();
  }
  EXPECT_EQ(message, c.error) << c.query;
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadParams,
    ::testing::Values(
        BadCase{Endpoint::kHangs, "window=2h", "window: unknown window '2h' (one of 1h, 24h, 7d, all)"},
        BadCase{Endpoint::kHangs, "window=yesterday", "window: unknown window 'yesterday' (one of 1h, 24h, 7d, all)"},
        BadCase{Endpoint::kHangs, "window=", "window: unknown window '' (one of 1h, 24h, 7d, all)"},
        BadCase{Endpoint::kCrashesTop, "limit=abc", "limit: 'abc' is not an integer in 1..1000"},
        BadCase{Endpoint::kCrashesTop, "limit=0", "limit: '0' is not an integer in 1..1000"},
        BadCase{Endpoint::kCrashesTop, "limit=1001", "limit: '1001' is not an integer in 1..1000"},
        BadCase{Endpoint::kCrashesTop, "limit=-1", "limit: '-1' is not an integer in 1..1000"},
        BadCase{Endpoint::kCrashesTop, "limit=5x", "limit: '5x' is not an integer in 1..1000"},
        BadCase{Endpoint::kCrashesTop, "limit=", "limit: '' is not an integer in 1..1000"},
        BadCase{Endpoint::kCrashesTop, "limit=99999999999999999999999", "limit: '99999999999999999999999' is not an integer in 1..1000"},
        BadCase{Endpoint::kHangs, "by=stack", "by: unknown grouping 'stack' (signature, thread or build_date)"},
        BadCase{Endpoint::kCrashesTop, "by=thread", "by: unknown parameter"},
        BadCase{Endpoint::kHangsFlamegraph, "format=svg", "format: unknown format 'svg' (tree or collapsed)"},
        BadCase{Endpoint::kHangs, "format=tree", "format: unknown parameter"},
        BadCase{Endpoint::kHangs, "colour=red", "colour: unknown parameter"},
        BadCase{Endpoint::kHangs, "os=", "os: empty value"},
        BadCase{Endpoint::kHangs, "source=crash", "source: unknown source 'crash' (main or bhr)"},
        BadCase{Endpoint::kHangs, "os=Linux&os=Darwin", "os: given more than once"},
        BadCase{Endpoint::kStatus, "window=1h", "window: unknown parameter"},
        BadCase{Endpoint::kAlerts, "limit=5", "limit: unknown parameter"},
        BadCase{Endpoint::kCrashesSignature, "window=1h", "signature: required"},
        BadCase{Endpoint::kHangs, "os=%zz", "os: malformed percent-encoding"},
        BadCase{Endpoint::kHangs, "os=abc%4", "os: malformed percent-encoding"}));

TEST(Params, DefaultsAreTheMiddleWindowFiftyRowsBySignature) {
  auto q = ParseQuery(Endpoint::kHangs, {}, {kHour, kDay, 7 * kDay});
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->window_ms, kDay);
  EXPECT_EQ(q->limit, 50u);
  EXPECT_EQ(q->by, HangsBy::kSignature);
  EXPECT_EQ(DefaultWindow({kHour, 2 * kHour, 3 * kHour}), 2 * kHour);
  EXPECT_EQ(DefaultWindow({7 * kDay, kHour, kDay}), kDay);
}

TEST(Params, ValuesAreDecodedAndKept) {
  auto params = ParseQueryString("signature=OOM+%7C+small&window=all&limit=1000&process=any&os=Windows_NT&&by=thread");
  ASSERT_TRUE(params.has_value());
  auto q = ParseQuery(Endpoint::kCrashesSignature, {(*params)[0], (*params)[1], (*params)[2], (*params)[3], (*params)[4]},
                      {kHour, kDay});
  ASSERT_TRUE(q.has_value()) << q.error().message();
  EXPECT_EQ(*q->filters[Dim::kSignature], "OOM | small");
  EXPECT_EQ(q->window_ms, 0);
  EXPECT_EQ(q->limit, 1000u);
  EXPECT_FALSE(q->filters[Dim::kProcess].has_value());  // "any" = no filter
  EXPECT_EQ(*q->filters[Dim::kOs], "Windows_NT");
  auto h = ParseQuery(Endpoint::kHangs, {(*params)[5]}, {kHour});
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->by, HangsBy::kThread);
}

TEST(Params, EquivalentDurationsNameTheSameWindow) {
  auto q = ParseQuery(Endpoint::kHangs, {{"window", "1d"}}, {kHour, kDay});
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->window_ms, kDay);
}

TEST(Params, WindowAndBucketNames) {
  EXPECT_EQ(WindowName(kHour), "1h");
  EXPECT_EQ(WindowName(kDay), "24h");
  EXPECT_EQ(WindowName(7 * kDay), "7d");
  EXPECT_EQ(WindowName(36 * kHour), "36h");
  EXPECT_EQ(WindowName(0), "all");
  EXPECT_EQ(BucketName(60'000), "60s");
  EXPECT_EQ(BucketName(kHour), "1h");
}

TEST(Params, EndpointPathsRoundTrip) {
  for (Endpoint e : {Endpoint::kStatus, Endpoint::kBuilds, Endpoint::kHangs, Endpoint::kHangsTimeseries,
                     Endpoint::kHangsFlamegraph, Endpoint::kCrashesTop, Endpoint::kCrashesTimeseries,
                     Endpoint::kCrashesSignature, Endpoint::kAlerts}) {
    EXPECT_EQ(EndpointFromPath(EndpointPath(e)), e);
  }
  EXPECT_FALSE(EndpointFromPath("/api/v1/hangs/").has_value());
  EXPECT_FALSE(EndpointFromPath("/api/v1").has_value());
}

}  // namespace
}  // namespace seismo
