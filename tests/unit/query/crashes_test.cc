#include "seismo/query/crashes_json.h"

#include <gtest/gtest.h>

#include "query_fixture.h"
#include "seismo/query/builds_json.h"

namespace seismo {
namespace {

using namespace seismo::testing;

// release Firefox 146.0 build 20261117090501, Linux; t0 = 2026-11-20T12:00Z.
//   build usage 2 h (4 pings, 1 gpu sub-process crash) at t0-1h
//   current day (t0-2h):    X parent x3 (installs a,b,c), Y content x2 (install d twice),
//                           Z content_shutdown x1 (startup)
//   previous day (t0-30h):  Y x5, W parent x2, X x1
//   ranks now: X 1, Y 2, Z 3; the day before: Y 1, W 2, X 3
class CrashesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    world_.BuildUsage("Linux", 2 * kHour, 4, 1, kHour);
    for (const char* install : {"a", "b", "c"}) world_.Crash("X", "parent", "parent", install, 2 * kHour);
    for (int i = 0; i < 2; ++i) world_.Crash("Y", "content", "content", "d", 2 * kHour);
    world_.Crash("Z", "content", "content_shutdown", "e", 2 * kHour, /*startup=*/true);
    for (int i = 0; i < 5; ++i) world_.Crash("Y", "content", "content", "f" + std::to_string(i), 30 * kHour);
    for (int i = 0; i < 2; ++i) world_.Crash("W", "parent", "parent", "g", 30 * kHour);
    world_.Crash("X", "parent", "parent", "h", 30 * kHour);
    snap_ = world_.Build();
  }
  std::string Top(std::string_view qs) { return CrashesTopJson(*snap_, Q(Endpoint::kCrashesTop, qs)); }

  World world_;
  std::shared_ptr<const Snapshot> snap_;
};

TEST_F(CrashesTest, TopCrashersRankShareRateAndRankChange) {
  EXPECT_EQ(
      Top(""),
      R"({"window":"24h","total":6,"usage_hours":2,"previous_total":8,"rows":[)"
      R"({"rank":1,"signature":"X","count":3,"share":50,"rate_per_1000h":1500,"installs":3,"startup_share":0,)"
      R"("first_build":"20261117090501","first_seen":"2026-11-19T06:00:00.000Z",)"
      R"("previous_rank":3,"rank_change":2,"is_new":false},)"
      R"({"rank":2,"signature":"Y","count":2,"share":33.333333333333336,"rate_per_1000h":1000,"installs":1,)"
      R"("startup_share":0,"first_build":"20261117090501","first_seen":"2026-11-19T06:00:00.000Z",)"
      R"("previous_rank":1,"rank_change":-1,"is_new":false},)"
      R"({"rank":3,"signature":"Z","count":1,"share":16.666666666666668,"rate_per_1000h":500,"installs":1,)"
      R"("startup_share":100,"first_build":"20261117090501","first_seen":"2026-11-20T10:00:00.000Z",)"
      R"("previous_rank":null,"rank_change":null,"is_new":true}]})");
}

// Triage as release management does it (issue 20): the signatures commonly left out, the
// startup share of each row, and the build each signature was first seen in.
TEST(CrashesTriage, ExcludedSignaturesLeaveTheRanksTotalsAndSharesAndAreCounted) {
  World world;
  world.BuildUsage("Linux", 2 * kHour, 4, 0, kHour);
  for (int i = 0; i < 4; ++i)
    world.Crash("OOM | small", "parent", "parent", "a" + std::to_string(i), 2 * kHour);
  for (int i = 0; i < 3; ++i)
    world.Crash("EMPTY: no crashing thread identified", "parent", "parent", "b", 2 * kHour);
  world.Crash("IPCError-browser | ShutDownKill", "content", "content_shutdown", "c", 2 * kHour);
  world.Crash("IPCError-content | ShutDownKill", "content", "content_shutdown", "c", 2 * kHour);
  world.Crash("Real", "parent", "parent", "d", 2 * kHour, /*startup=*/true);
  world.Crash("Real", "parent", "parent", "e", 2 * kHour);
  world.Crash("Real", "parent", "parent", "f", 30 * kHour, false, "Linux", "20261110090501");
  const auto snap = world.Build();
  Json all(CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "")));
  EXPECT_EQ(all.root["total"].get_int64().value(), 11);
  EXPECT_TRUE(all.root["excluded"].error() == simdjson::NO_SUCH_FIELD) << "nothing asked to be left out";
  Json j(CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "exclude=oom,empty,shutdownkill")));
  EXPECT_EQ(j.root["total"].get_int64().value(), 2);
  EXPECT_EQ(j.root["excluded"]["count"].get_int64().value(), 9);
  EXPECT_EQ(j.root["excluded"]["signatures"].get_int64().value(), 4);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.at(0)["signature"].get_string().value(), "Real");
  EXPECT_DOUBLE_EQ(rows.at(0)["share"].get_double().value(), 100);
  EXPECT_DOUBLE_EQ(rows.at(0)["startup_share"].get_double().value(), 50)
      << "1 of its 2 crashes in the window";
  // First seen a day earlier in another build: the window does not hide where it started.
  EXPECT_EQ(rows.at(0)["first_build"].get_string().value(), "20261110090501");
  Json oom(CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "exclude=oom")));
  EXPECT_EQ(oom.root["total"].get_int64().value(), 7);
}

// Builds equally early (as after the retention evicted a signature's first buckets): the
// older build id is where it was first seen, whatever the order of the series.
TEST(CrashesTriage, EquallyEarlyBuildsGiveTheOlderBuild) {
  for (const bool older_first : {true, false}) {
    World world;
    world.BuildUsage("Linux", kHour, 1, 0, kHour);
    const char* older = "20261101090000";
    const char* newer = "20261105090000";
    world.Crash("S", "parent", "parent", "a", 3 * kHour, false, "Linux", older_first ? older : newer);
    world.Crash("S", "parent", "parent", "b", 3 * kHour, false, "Linux", older_first ? newer : older);
    const auto snap = world.Build();
    Json j(CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "")));
    EXPECT_EQ(j.root["rows"].at(0)["first_build"].get_string().value(), older);
  }
}

// The sparklines start at the first crash shown: a left-out signature's earlier crashes do not
// stretch the other rows' bins.
TEST(CrashesTriage, TheTrendStartsAtTheFirstCrashNotLeftOut) {
  World world;
  world.BuildUsage("Linux", kHour, 1, 0, kHour);
  world.Crash("OOM | small", "parent", "parent", "a", 20 * kHour);
  world.Crash("Real", "parent", "parent", "b", 2 * kHour);
  const auto snap = world.Build();
  Json all(CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "sparklines=1")));
  Json left(CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "sparklines=1&exclude=oom")));
  EXPECT_EQ(all.root["trend_from"].get_string().value(), "2026-11-19T16:00:00.000Z");
  EXPECT_EQ(left.root["trend_from"].get_string().value(), "2026-11-20T10:00:00.000Z");
}

TEST_F(CrashesTest, LimitCutsRowsNotTheTotal) {
  Json j(Top("limit=1"));
  EXPECT_EQ(j.root["total"].get_int64().value(), 6);
  EXPECT_EQ(j.root["rows"].get_array().value().size(), 1u);
}

TEST_F(CrashesTest, ProcessFilterRanksWithinTheProcess) {
  Json j(Top("process=content"));
  EXPECT_EQ(j.root["total"].get_int64().value(), 3);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(0)["signature"].get_string().value(), "Y");
  EXPECT_EQ(rows.at(0)["previous_rank"].get_int64().value(), 1);
  EXPECT_EQ(rows.at(0)["rank_change"].get_int64().value(), 0);
  EXPECT_TRUE(rows.at(1)["is_new"].get_bool().value());
  // The denominator is all usage of the selected builds.
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 2.0);
}

// Right after start the previous window is empty: no previous data, so nothing is "new".
TEST_F(CrashesTest, WeekWithEmptyPreviousWeekHasNoPreviousData) {
  Json j(Top("window=7d"));
  EXPECT_EQ(j.root["total"].get_int64().value(), 14);
  EXPECT_EQ(j.root["previous_total"].get_int64().value(), 0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 4u);
  const char* order[] = {"Y", "X", "W", "Z"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rows.at(i)["signature"].get_string().value(), order[i]);
    EXPECT_EQ(rows.at(i)["rank"].get_int64().value(), static_cast<int64_t>(i + 1));
    EXPECT_FALSE(rows.at(i)["is_new"].get_bool().value());
    EXPECT_TRUE(rows.at(i)["previous_rank"].is_null());
  }
}

TEST_F(CrashesTest, AllHasNoPreviousWindow) {
  Json j(Top("window=all"));
  EXPECT_TRUE(j.root["previous_total"].is_null());
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 4u);
  for (auto row : rows) {
    EXPECT_TRUE(row["previous_rank"].is_null());
    EXPECT_TRUE(row["rank_change"].is_null());
    EXPECT_FALSE(row["is_new"].get_bool().value());
  }
}

// sparklines=1: each row's counts in 48 bins of the 24 h axis (1440 one-minute points),
// from the selection's first crash at t0-2h: 121 points, point i in bin i*48/121, so
// t0-2h -> bin 0, t0-61m (point 59) -> bin 23, t0 (point 120) -> bin 47.
TEST(CrashSparklines, RowsCarryTheirCountsPerBinFromTheFirstCrash) {
  World w;
  w.Crash("A", "parent", "parent", "a", 2 * kHour);
  for (int i = 0; i < 2; ++i) w.Crash("A", "parent", "parent", "b", 61 * kMin);
  w.Crash("A", "parent", "parent", "c", 0);
  w.Crash("B", "content", "content", "d", 61 * kMin);
  auto snap = w.Build();
  const std::string body = CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "sparklines=1"));
  Json j(body);
  ASSERT_EQ(j.root["rows"].get_array().value().size(), 2u) << body;
  EXPECT_EQ(j.root["trend_from"].get_string().value(), "2026-11-20T10:00:00.000Z");
  EXPECT_EQ(j.root["trend_bins"].get_int64().value(), 48);
  auto rows = j.root["rows"].get_array().value();
  auto trend = [&rows](size_t row) {
    std::vector<int64_t> out;
    simdjson::dom::array values;
    EXPECT_EQ(rows.at(row)["trend"].get(values), simdjson::SUCCESS);
    for (auto v : values) out.push_back(v.get_int64().value());
    return out;
  };
  std::vector<int64_t> a(48), b(48);
  a[0] = 1, a[23] = 2, a[47] = 1;
  b[23] = 1;
  EXPECT_EQ(trend(0), a);
  EXPECT_EQ(trend(1), b);
  // Without the parameter the answer has no trends.
  Json plain(CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "")));
  EXPECT_TRUE(plain.root["trend_bins"].error());
}

// A gpu crash is counted once: the build's crash reports and its main pings'
// SUBPROCESS_CRASHES_WITH_DUMP count the same crashes, so gpu is the larger, not the sum.
//   build A: 2 gpu reports, main pings 1  -> gpu 2;  build B: 1 report, main pings 3 -> gpu 3
//   A total = 2 (gpu) + 1 (parent) = 3, rate 3 per 2 h = 1500 per 1000 h; B total 3.
TEST(BuildsGpu, GpuCrashesAreNotCountedTwice) {
  World w;
  w.BuildUsage("Linux", 2 * kHour, 4, 1, kHour, "20261117090501");
  w.Crash("G", "gpu", "gpu", "a", kHour, false, "Linux", "20261117090501");
  w.Crash("G", "gpu", "gpu", "b", kHour, false, "Linux", "20261117090501");
  w.Crash("P", "parent", "parent", "c", kHour, false, "Linux", "20261117090501");
  w.BuildUsage("Linux", kHour, 2, 3, kHour, "20261118090501");
  w.Crash("G", "gpu", "gpu", "d", kHour, false, "Linux", "20261118090501");
  auto snap = w.Build();
  Json j(BuildsJson(*snap, Q(Endpoint::kBuilds, "")));
  auto builds = j.root["builds"].get_array().value();
  ASSERT_EQ(builds.size(), 2u);
  auto b = builds.at(0);  // newest first: 20261118090501
  EXPECT_EQ(b["crashes"]["gpu"].get_int64().value(), 3);
  EXPECT_EQ(b["crashes"]["total"].get_int64().value(), 3);
  auto a = builds.at(1);
  EXPECT_EQ(a["crashes"]["gpu"].get_int64().value(), 2);
  EXPECT_EQ(a["crashes"]["parent"].get_int64().value(), 1);
  EXPECT_EQ(a["crashes"]["total"].get_int64().value(), 3);
  EXPECT_EQ(a["crash_rate_per_1000h"]["total"].get_double().value(), 1500.0);
}

TEST_F(CrashesTest, UnknownBuildHasNoUsageSoNullRate) {
  Json j(Top("build_id=20990101000000"));
  EXPECT_EQ(j.root["total"].get_int64().value(), 0);
  EXPECT_EQ(j.root["rows"].get_array().value().size(), 0u);
  World w;
  w.Crash("Q", "parent", "parent", "i", 0);
  auto snap = w.Build();
  Json n(CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "")));
  EXPECT_TRUE(n.root["rows"].at(0)["rate_per_1000h"].is_null());
}

TEST_F(CrashesTest, SignaturePageBreaksDown) {
  EXPECT_EQ(CrashSignatureJson(*snap_, Q(Endpoint::kCrashesSignature, "signature=Y")),
            R"({"window":"24h","signature":"Y","count":2,"installs":1,)"
            R"("by_build":[{"build_id":"20261117090501","version":"146.0","channel":"release","product":"Firefox",)"
            R"("count":2,"usage_hours":2,"rate_per_1000h":1000}],)"
            R"("by_os":[{"os":"Linux","count":2}],"by_process":[{"process":"content","class":"content","count":2}]})");
  Json week(CrashSignatureJson(*snap_, Q(Endpoint::kCrashesSignature, "signature=Y&window=7d")));
  EXPECT_EQ(week.root["count"].get_int64().value(), 7);
  EXPECT_EQ(week.root["installs"].get_int64().value(), 6);
  Json none(CrashSignatureJson(*snap_, Q(Endpoint::kCrashesSignature, "signature=nope")));
  EXPECT_EQ(none.root["count"].get_int64().value(), 0);
  EXPECT_EQ(none.root["by_build"].get_array().value().size(), 0u);
}

TEST_F(CrashesTest, TimeseriesCountsAndRates) {
  Json j(CrashesTimeseriesJson(*snap_, Q(Endpoint::kCrashesTimeseries, "")));
  auto points = j.root["points"].get_array().value();
  ASSERT_EQ(points.size(), 1440u);
  auto at10 = points.at(1439 - 120);  // 10:00: the crashes, no usage in that minute
  EXPECT_EQ(at10["t"].get_string().value(), "2026-11-20T10:00:00.000Z");
  EXPECT_EQ(at10["count"].get_int64().value(), 6);
  EXPECT_TRUE(at10["rate_per_1000h"].is_null());
  auto at11 = points.at(1439 - 60);  // 11:00: usage, no crash
  EXPECT_EQ(at11["usage_hours"].get_double().value(), 2.0);
  EXPECT_EQ(at11["rate_per_1000h"].get_double().value(), 0.0);
}

TEST_F(CrashesTest, BuildsRowHasClassesRatesAndHangs) {
  world_.Usage("bhr", "Linux", 3 * kHour, kHour);
  world_.Hang("bhr", "Linux", "parent", "Gecko", {"A"}, 4'500'000, 4, kHour);
  auto snap = world_.Build();
  Json j(BuildsJson(*snap, Q(Endpoint::kBuilds, "")));
  auto rows = j.root["builds"].get_array().value();
  ASSERT_EQ(rows.size(), 1u);
  auto b = rows.at(0);
  EXPECT_EQ(b["build_date"].get_string().value(), "20261117");
  EXPECT_EQ(b["usage_hours"].get_double().value(), 2.0);
  EXPECT_EQ(b["pings"].get_int64().value(), 4);
  EXPECT_EQ(b["crashes"]["parent"].get_int64().value(), 3);
  EXPECT_EQ(b["crashes"]["content"].get_int64().value(), 2);
  EXPECT_EQ(b["crashes"]["content_shutdown"].get_int64().value(), 1);
  EXPECT_EQ(b["crashes"]["gpu"].get_int64().value(), 1);  // SUBPROCESS_CRASHES_WITH_DUMP
  EXPECT_EQ(b["crashes"]["startup"].get_int64().value(), 1);
  EXPECT_EQ(b["crashes"]["total"].get_int64().value(), 7);
  EXPECT_EQ(b["crash_rate_per_1000h"]["parent"].get_double().value(), 1500.0);
  EXPECT_EQ(b["crash_rate_per_1000h"]["total"].get_double().value(), 3500.0);
  EXPECT_EQ(b["hangs"]["bhr"]["hang_ms_per_hour"].get_double().value(), 1500.0);
  EXPECT_EQ(b["hangs"]["bhr"]["hang_count_per_hour"].get_double().value(), 4.0 / 3.0);
  EXPECT_TRUE(b["hangs"]["main"]["hang_ms_per_hour"].is_null());
}

// Affected installs (issue 20, ADR 0031): ten installs send main pings; installs 1 and 2 crash
// in the parent, 2 and 3 in content, and 4's main ping reports a gpu crash. Of the ten, four
// crashed (40 %): two in the parent (20 %), two in content.
TEST(Builds, AffectedInstallsAreTheShareOfTheBuildsInstallsThatCrashed) {
  World w;
  for (int i = 0; i < 10; ++i) {
    w.BuildUsage("Linux", kHour, 1, i == 4 ? 1 : 0, kHour, "20261117090501", "i" + std::to_string(i));
  }
  w.Crash("P", "parent", "parent", "i1", kHour);
  w.Crash("P", "parent", "parent", "i2", kHour);
  w.Crash("C", "content", "content", "i2", kHour);
  w.Crash("C", "content", "content", "i3", 30 * kHour);  // before the window: a build's life counts
  auto snap = w.Build();
  Json j(BuildsJson(*snap, Q(Endpoint::kBuilds, "")));
  const auto a = j.root["builds"].at(0)["affected_installs"];
  EXPECT_EQ(a["installs"].get_int64().value(), 10);
  EXPECT_EQ(a["crashed"]["parent"].get_int64().value(), 2);
  EXPECT_EQ(a["crashed"]["content"].get_int64().value(), 2);
  EXPECT_EQ(a["crashed"]["gpu"].get_int64().value(), 0) << "a main ping's report names no crash class";
  EXPECT_EQ(a["crashed"]["total"].get_int64().value(), 4);
  EXPECT_DOUBLE_EQ(a["share"]["total"].get_double().value(), 40);
  EXPECT_DOUBLE_EQ(a["share"]["parent"].get_double().value(), 20);
  // No install known (documents without clientId): no share rather than 0 %.
  World none;
  none.BuildUsage("Linux", kHour, 1, 0, kHour);
  auto empty = none.Build();
  Json n(BuildsJson(*empty, Q(Endpoint::kBuilds, "")));
  EXPECT_TRUE(n.root["builds"].at(0)["affected_installs"]["installs"].is_null());
  EXPECT_TRUE(n.root["builds"].at(0)["affected_installs"]["share"]["total"].is_null());
}

TEST(Builds, NewestBuildFirstAndOsNarrows) {
  World w;
  w.BuildUsage("Linux", kHour, 1, 0, kHour, "20261101000000");
  w.BuildUsage("Linux", kHour, 1, 0, kHour, "20261115000000");
  w.BuildUsage("Windows", 3 * kHour, 1, 0, kHour, "20261115000000");
  auto snap = w.Build();
  Json j(BuildsJson(*snap, Q(Endpoint::kBuilds, "")));
  auto rows = j.root["builds"].get_array().value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(0)["build_id"].get_string().value(), "20261115000000");
  EXPECT_EQ(rows.at(0)["usage_hours"].get_double().value(), 4.0);
  Json linux_only(BuildsJson(*snap, Q(Endpoint::kBuilds, "os=Linux&build_date=20261115")));
  auto lrows = linux_only.root["builds"].get_array().value();
  ASSERT_EQ(lrows.size(), 1u);
  EXPECT_EQ(lrows.at(0)["usage_hours"].get_double().value(), 1.0);
}

}  // namespace
}  // namespace seismo
