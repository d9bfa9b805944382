#include "seismo/query/alerts_json.h"

#include <gtest/gtest.h>

#include "query_fixture.h"
#include "seismo/alert/engine.h"
#include "seismo/query/metrics.h"

namespace seismo {
namespace {

using testing::Q;

Alert MakeAlert(AlertRule rule, std::string_view state, std::string channel, std::string os,
                std::string build, std::string signature, std::string scope = "") {
  Alert a;
  a.key = {rule, std::move(channel), std::move(os), std::move(build), std::move(signature), std::move(scope)};
  a.state = state == "firing"    ? AlertState::kFiring
            : state == "pending" ? AlertState::kPending
                                 : AlertState::kResolved;
  a.numbers.count_new = 12;
  a.numbers.baseline_builds = {"20261110090501", "20261103090501"};
  return a;
}

// The alert engine's own rendering of five alerts.
std::string Alerts() {
  const std::vector<Alert> alerts = {
      MakeAlert(AlertRule::kCrashSignatureSpike, "firing", "release", "all", "20261117090501", "OOM | small"),
      MakeAlert(AlertRule::kCrashRateRegression, "pending", "beta", "all", "20261113151200", "", "content"),
      MakeAlert(AlertRule::kHangSpike, "firing", "release", "all", "20261117", "nsThread::Run", "bhr"),
      MakeAlert(AlertRule::kBurst, "pending", "release", "Linux", "", "Quote \" and \\u00e9 é"),
      MakeAlert(AlertRule::kNewCrashSignature, "resolved", "release", "Windows_NT", "20261104101522",
                "mozilla::New"),
  };
  std::string out = "[";
  for (const Alert& a : alerts) out += (out.size() > 1 ? ",\n " : "") + AlertJson(a);
  return out + "]";
}

// "rule/signature" of every alert the filter keeps.
std::vector<std::string> Kept(std::string_view query) {
  std::vector<std::string> out;
  const std::string json = FilterAlertsJson(Alerts(), Q(Endpoint::kAlerts, query));
  auto items = SplitJsonArray(json);
  EXPECT_TRUE(items.has_value()) << json;
  for (std::string_view a : items.value_or(std::vector<std::string_view>{})) {
    out.push_back(*TopLevelString(a, "rule") + "/" + TopLevelString(a, "signature").value_or("-"));
  }
  return out;
}

TEST(AlertsFilter, NoFilterKeepsEveryAlertInOrder) {
  EXPECT_EQ(FilterAlertsJson(Alerts(), Q(Endpoint::kAlerts, "")).size(),
            Alerts().size() - 8);  // ",\n " -> ","
  EXPECT_EQ(Kept("").size(), 5u);
}

TEST(AlertsFilter, EachDimensionNarrowsAlertsThatSplitByIt) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Kept("channel=beta"), V{"crash_rate_regression/-"});
  // os "all" is not split by OS: kept; per-OS alerts must match.
  EXPECT_EQ(Kept("os=Linux"), (V{"crash_signature_spike/OOM | small", "crash_rate_regression/-",
                                 "hang_spike/nsThread::Run", "burst/Quote \" and \\u00e9 é"}));
  // OS names compare case-insensitively (a hand-typed "linux" finds "Linux").
  EXPECT_EQ(Kept("os=linux"), Kept("os=Linux"));
  // A build id matches crash alerts of that build and hang alerts of its date; burst has no build.
  EXPECT_EQ(Kept("build_id=20261117090501"), (V{"crash_signature_spike/OOM | small",
                                                "hang_spike/nsThread::Run", "burst/Quote \" and \\u00e9 é"}));
  EXPECT_EQ(Kept("build_date=20261104"),
            (V{"burst/Quote \" and \\u00e9 é", "new_crash_signature/mozilla::New"}));
  // Alerts without a signature (rate regressions) are not narrowed by it.
  EXPECT_EQ(Kept("signature=mozilla%3A%3ANew"),
            (V{"crash_rate_regression/-", "new_crash_signature/mozilla::New"}));
  EXPECT_EQ(Kept("signature=Quote+%22+and+%5Cu00e9+%C3%A9&channel=release"),
            V{"burst/Quote \" and \\u00e9 é"});
  EXPECT_EQ(Kept("source=bhr&rule=hang_spike"), V{"hang_spike/nsThread::Run"});
  EXPECT_EQ(Kept("process=content&channel=beta"), V{"crash_rate_regression/-"});
}

TEST(AlertsFilter, RuleAndStateAreExact) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Kept("state=firing"), (V{"crash_signature_spike/OOM | small", "hang_spike/nsThread::Run"}));
  EXPECT_EQ(Kept("state=pending&rule=burst"), V{"burst/Quote \" and \\u00e9 é"});
  EXPECT_EQ(Kept("rule=hang"), V{});
  EXPECT_EQ(Kept("state=firing&channel=beta"), V{});
}

TEST(AlertsFilter, MalformedArrayGivesEmptyList) {
  const Query q = Q(Endpoint::kAlerts, "");
  for (const char* bad : {"", "{}", "[", "[{\"a\":1}", "[{\"a\":}]", "[1,]", "[{\"a\":\"x}]", "[] x"}) {
    EXPECT_EQ(FilterAlertsJson(bad, q), "[]") << bad;
  }
  EXPECT_EQ(FilterAlertsJson(" [ ] ", q), "[]");
}

TEST(JsonReader, TopLevelStringSkipsNestedValuesAndDecodesEscapes) {
  const std::string obj = R"({"x":{"state":"nested"},"list":["state",{"state":1}],"n":-1.5e3,"t":true,)"
                          R"("z":null,"state":"fir\u0069ng \ud83d\ude00 \"q\" \/"})";
  EXPECT_EQ(TopLevelString(obj, "state"), "firing \xF0\x9F\x98\x80 \"q\" /");
  EXPECT_EQ(TopLevelString(obj, "z"), std::nullopt);
  EXPECT_EQ(TopLevelString(obj, "n"), std::nullopt);
  EXPECT_EQ(TopLevelString(obj, "missing"), std::nullopt);
  EXPECT_EQ(TopLevelString("[]", "state"), std::nullopt);
  auto items = SplitJsonArray(R"([ {"a":"],["} , 2 ,"s" ,[[]],null])");
  ASSERT_TRUE(items.has_value());
  EXPECT_EQ(*items, (std::vector<std::string_view>{R"({"a":"],["})", "2", "\"s\"", "[[]]", "null"}));
}

TEST(JsonReader, AlertStateCountsReadTopLevelStatesOnly) {
  auto counts = AlertStateCounts(Alerts());
  EXPECT_EQ(counts,
            (std::vector<std::pair<std::string, uint64_t>>{{"firing", 2}, {"pending", 2}, {"resolved", 1}}));
}

}  // namespace
}  // namespace seismo
