#include "seismo/query/params.h"

#include <gtest/gtest.h>

#include "bad_params.h"
#include "query_fixture.h"

namespace seismo {
namespace {

using testing::BadCase;
using testing::kDay;
using testing::kHour;
using testing::LoadBadParams;

class BadParams : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadParams, AnswerNamesTheParameter) {
  const BadCase& c = GetParam();
  auto endpoint = EndpointFromPath(c.path);
  ASSERT_TRUE(endpoint.has_value()) << c.path;
  auto params = ParseQueryString(c.query);
  std::string message;
  if (!params) {
    message = params.error().message();
  } else {
    auto q = ParseQuery(*endpoint, *params, {kHour, kDay, 7 * kDay});
    ASSERT_FALSE(q.has_value()) << c.query;
    message = q.error().message();
  }
  EXPECT_EQ(message, c.error) << c.query;
}

INSTANTIATE_TEST_SUITE_P(Table, BadParams, ::testing::ValuesIn(LoadBadParams()));

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

TEST(Params, AlertsTakeFiltersRuleAndState) {
  auto q = ParseQuery(Endpoint::kAlerts,
                      {{"channel", "beta"},
                       {"os", "Linux"},
                       {"build_id", "20261117090501"},
                       {"signature", "S"},
                       {"rule", "hang_spike"},
                       {"state", "firing"}},
                      {kHour});
  ASSERT_TRUE(q.has_value()) << q.error().message();
  EXPECT_EQ(*q->filters[Dim::kChannel], "beta");
  EXPECT_EQ(*q->filters[Dim::kBuildId], "20261117090501");
  EXPECT_EQ(*q->alert_rule, "hang_spike");
  EXPECT_EQ(*q->alert_state, "firing");
  EXPECT_FALSE(ParseQuery(Endpoint::kHangs, {{"state", "firing"}}, {kHour}).has_value());
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

// Each class Top Crashers can leave out, rule by rule (issue 20 triage).
TEST(Excluded, EachClassMatchesItsSignaturesOnly) {
  EXPECT_TRUE(Excluded(kExcludeOom, "OOM | small"));
  EXPECT_TRUE(Excluded(kExcludeOom, "OOM | large | mozalloc_abort"));
  EXPECT_FALSE(Excluded(kExcludeOom, "OOMish | x"));
  EXPECT_FALSE(Excluded(kExcludeEmpty, "OOM | small"));
  EXPECT_TRUE(Excluded(kExcludeEmpty, "EMPTY: no crashing thread identified; ERROR_NO_MINIDUMP_HEADER"));
  EXPECT_FALSE(Excluded(kExcludeEmpty, "mozilla::EMPTY:"));
  EXPECT_TRUE(Excluded(kExcludeShutdownKill, "IPCError-browser | ShutDownKill"));
  EXPECT_TRUE(Excluded(kExcludeShutdownKill, "IPCError-content | ShutDownKill"));
  EXPECT_TRUE(Excluded(kExcludeShutdownKill, "IPCError-content | ShutDownKill | IPC_Message_Name=M"));
  EXPECT_FALSE(Excluded(kExcludeShutdownKill, "IPCError-browser | ShutDownKillX"));
  EXPECT_FALSE(Excluded(kExcludeShutdownKill, "IPCError-browser | CannotSend"));
  EXPECT_FALSE(Excluded(0, "OOM | small"));
  EXPECT_TRUE(Excluded(kExcludeOom | kExcludeShutdownKill, "IPCError-content | ShutDownKill"));
}

// Refusals are rows of tests/data/api/bad_params.tsv; here the bits a list sets.
TEST(Excluded, AListSetsItsBits) {
  auto q = ParseQuery(Endpoint::kCrashesTop, *ParseQueryString("exclude=oom,shutdownkill"),
                      {kHour, kDay, 7 * kDay});
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->exclude, kExcludeOom | kExcludeShutdownKill);
}

}  // namespace
}  // namespace seismo
