#include "seismo/query/hangs_json.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include "query_fixture.h"
#include "seismo/query/flamegraph.h"

namespace seismo {
namespace {

using namespace seismo::testing;

// bhr, release, build date 20261117 (t0 = 2026-11-20T12:00Z):
//   usage  Linux 2 h at t0-30m; Windows 1 h at t0-3h
//   hangs  Linux   parent  Gecko       [root, mid, A]    1000 ms x2  at t0-30m
//          Windows parent  Gecko       [root, other, A]   500 ms x1  at t0-3h
//          Linux   content Gecko_Child [root, B]         3000 ms x1  at t0-10m
// main: usage Linux 1 h, hang parent Gecko [root, A] 100 ms x1 at t0-30m.
class HangsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    world_.Usage("bhr", "Linux", 2 * kHour, 30 * kMin);
    world_.Usage("bhr", "Windows", kHour, 3 * kHour);
    world_.Hang("bhr", "Linux", "parent", "Gecko", {"root", "mid", "A"}, 1'000'000, 2, 30 * kMin);
    world_.Hang("bhr", "Windows", "parent", "Gecko", {"root", "other", "A"}, 500'000, 1, 3 * kHour);
    world_.Hang("bhr", "Linux", "content", "Gecko_Child", {"root", "B"}, 3'000'000, 1, 10 * kMin);
    world_.Usage("main", "Linux", kHour, 30 * kMin);
    world_.Hang("main", "Linux", "parent", "Gecko", {"root", "A"}, 100'000, 1, 30 * kMin);
    snap_ = world_.Build();
  }
  std::string Hangs(std::string_view qs) { return HangsJson(*snap_, Q(Endpoint::kHangs, qs)); }

  World world_;
  std::shared_ptr<const Snapshot> snap_;
};

TEST_F(HangsTest, BySignatureOverADayDividesBySelectedUsage) {
  EXPECT_EQ(Hangs(""),
            R"({"window":"24h","by":"signature","source":"bhr","usage_hours":3,"rows":[)"
            R"({"signature":"B","thread":"Gecko_Child","process":"content","hang_ms":3000,"hang_count":1,)"
            R"("hang_ms_per_hour":1000,"hang_count_per_hour":0.3333333333333333,)"
            R"("stacks":[{"stack":["root","B"],"hang_ms":3000,"hang_count":1}]},)"
            R"({"signature":"A","thread":"Gecko","process":"parent","hang_ms":1500,"hang_count":3,)"
            R"("hang_ms_per_hour":500,"hang_count_per_hour":1,)"
            R"("stacks":[{"stack":["root","mid","A"],"hang_ms":1000,"hang_count":2},)"
            R"({"stack":["root","other","A"],"hang_ms":500,"hang_count":1}]}]})");
}

TEST_F(HangsTest, OneHourWindowSeesOnlyTheLastHour) {
  Json j(Hangs("window=1h"));
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 2.0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(0)["signature"].get_string().value(), "B");
  EXPECT_EQ(rows.at(0)["hang_ms_per_hour"].get_double().value(), 1500.0);
  EXPECT_EQ(rows.at(1)["hang_ms_per_hour"].get_double().value(), 500.0);
  EXPECT_EQ(rows.at(1)["stacks"].get_array().value().size(), 1u);
}

TEST_F(HangsTest, OsFilterNarrowsNumeratorAndDenominator) {
  Json j(Hangs("os=Linux"));
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 2.0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(1)["hang_ms"].get_double().value(), 1000.0);
  EXPECT_EQ(rows.at(1)["hang_ms_per_hour"].get_double().value(), 500.0);
}

TEST_F(HangsTest, OsFilterIgnoresCase) {
  EXPECT_EQ(Hangs("os=linux"), Hangs("os=Linux"));
  Json j(Hangs("os=LINUX"));
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 2.0);
}

TEST_F(HangsTest, ThreadFilterKeepsTheDenominator) {
  Json j(Hangs("thread=Gecko"));
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 3.0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.at(0)["hang_ms_per_hour"].get_double().value(), 500.0);
}

// Filter values longer than a short string's inline buffer: the hang answers and the
// flame graph keep the query's values alive while they read rows.
TEST(HangFilters, LongFilterValuesSelectTheirRows) {
  const std::string signature = "mozilla::dom::ContentParent::RecvSyncMessage";
  const std::string thread = "DOM Worker thread of a long name";
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "parent", thread, {"root", signature}, 2'000'000, 1, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "Short"}, 1'000'000, 1, 0);
  auto snap = w.Build();
  const std::string by_signature = "signature=mozilla%3A%3Adom%3A%3AContentParent%3A%3ARecvSyncMessage";
  Json rows(HangsJson(*snap, Q(Endpoint::kHangs, by_signature)));
  ASSERT_EQ(rows.root["rows"].get_array().value().size(), 1u);
  EXPECT_EQ(rows.root["rows"].at(0)["signature"].get_string().value(), signature);
  Json threads(HangsJson(*snap, Q(Endpoint::kHangs, "by=thread&thread=DOM+Worker+thread+of+a+long+name")));
  ASSERT_EQ(threads.root["rows"].get_array().value().size(), 1u);
  EXPECT_EQ(threads.root["rows"].at(0)["thread"].get_string().value(), thread);
  EXPECT_EQ(FlamegraphCollapsed(*snap, Q(Endpoint::kHangsFlamegraph, by_signature)),
            "root;" + signature + " 2000\n");
  Json series(HangsTimeseriesJson(*snap, Q(Endpoint::kHangsTimeseries, "window=1h&" + by_signature)));
  EXPECT_EQ(series.root["points"].at(59)["hang_ms"].get_double().value(), 2000.0);
}

TEST_F(HangsTest, ByThreadAndByBuildDate) {
  Json t(Hangs("by=thread&limit=1"));
  auto rows = t.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.at(0)["thread"].get_string().value(), "Gecko_Child");
  EXPECT_TRUE(rows.at(0)["signature"].error() == simdjson::NO_SUCH_FIELD);
  Json d(Hangs("by=build_date"));
  auto drows = d.root["rows"].get_array().value();
  ASSERT_EQ(drows.size(), 1u);
  EXPECT_EQ(drows.at(0)["build_date"].get_string().value(), "20261117");
  EXPECT_EQ(drows.at(0)["channel"].get_string().value(), "release");
  EXPECT_EQ(drows.at(0)["hang_ms"].get_double().value(), 4500.0);
  EXPECT_EQ(drows.at(0)["hang_ms_per_hour"].get_double().value(), 1500.0);
}

// A build date's builds of two channels are two rows, each over its own channel's usage:
//   release 4500 ms / 3 h = 1500 ms/h; beta 600 ms / 0.5 h = 1200 ms/h.
TEST_F(HangsTest, ByBuildDateKeepsChannelsApart) {
  World w;
  w.Usage("bhr", "Linux", 2 * kHour, 30 * kMin);
  w.Usage("bhr", "Windows", kHour, 3 * kHour);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "A"}, 4'500'000, 3, 30 * kMin);
  w.Usage("bhr", "Linux", 30 * kMin, 30 * kMin, "beta");
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "A"}, 600'000, 1, 30 * kMin, "beta");
  auto snap = w.Build();
  Json d(HangsJson(*snap, Q(Endpoint::kHangs, "by=build_date")));
  auto rows = d.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(0)["channel"].get_string().value(), "release");
  EXPECT_EQ(rows.at(0)["usage_hours"].get_double().value(), 3.0);
  EXPECT_EQ(rows.at(0)["hang_ms_per_hour"].get_double().value(), 1500.0);
  EXPECT_EQ(rows.at(1)["channel"].get_string().value(), "beta");
  EXPECT_EQ(rows.at(1)["build_date"].get_string().value(), "20261117");
  EXPECT_EQ(rows.at(1)["usage_hours"].get_double().value(), 0.5);
  EXPECT_EQ(rows.at(1)["hang_ms_per_hour"].get_double().value(), 1200.0);
}

TEST_F(HangsTest, MainSourceIsSeparate) {
  Json j(Hangs("source=main"));
  EXPECT_EQ(j.root["source"].get_string().value(), "main");
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 1.0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.at(0)["hang_ms_per_hour"].get_double().value(), 100.0);
}

TEST_F(HangsTest, NoUsageGivesNullRates) {
  Json j(Hangs("build_date=20990101"));
  EXPECT_EQ(j.root["rows"].get_array().value().size(), 0u);
  World w;
  w.Hang("main", "Linux", "parent", "Gecko", {"A"}, 1000, 1, 0);
  auto snap = w.Build();
  Json n(HangsJson(*snap, Q(Endpoint::kHangs, "")));
  EXPECT_EQ(n.root["source"].get_string().value(), "main");  // no bhr usage at all
  ASSERT_EQ(n.root["rows"].get_array().value().size(), 1u);
  EXPECT_TRUE(n.root["rows"].at(0)["hang_ms_per_hour"].is_null());
}

TEST_F(HangsTest, EmptySnapshotGivesEmptyRows) {
  EXPECT_EQ(HangsJson(Snapshot{}, Q(Endpoint::kHangs, "")),
            R"({"window":"24h","by":"signature","source":"main","usage_hours":0,"rows":[]})");
}

TEST_F(HangsTest, TimeseriesPerMinuteWithinAnHour) {
  Json j(HangsTimeseriesJson(*snap_, Q(Endpoint::kHangsTimeseries, "window=1h")));
  EXPECT_EQ(j.root["bucket"].get_string().value(), "60s");
  auto points = j.root["points"].get_array().value();
  ASSERT_EQ(points.size(), 60u);
  EXPECT_EQ(points.at(0)["t"].get_string().value(), "2026-11-20T11:01:00.000Z");
  EXPECT_EQ(points.at(59)["t"].get_string().value(), "2026-11-20T12:00:00.000Z");
  auto at30 = points.at(29);  // 11:30
  EXPECT_EQ(at30["t"].get_string().value(), "2026-11-20T11:30:00.000Z");
  EXPECT_EQ(at30["hang_ms"].get_double().value(), 1000.0);
  EXPECT_EQ(at30["usage_hours"].get_double().value(), 2.0);
  EXPECT_EQ(at30["hang_ms_per_hour"].get_double().value(), 500.0);
  auto at50 = points.at(49);  // 11:50: hang without usage in that bucket
  EXPECT_EQ(at50["hang_ms"].get_double().value(), 3000.0);
  EXPECT_TRUE(at50["hang_ms_per_hour"].is_null());
  EXPECT_EQ(points.at(0)["hang_count"].get_int64().value(), 0);
}

TEST_F(HangsTest, TimeseriesOverAWeekIsHourly) {
  Json j(HangsTimeseriesJson(*snap_, Q(Endpoint::kHangsTimeseries, "window=7d&os=Windows")));
  EXPECT_EQ(j.root["bucket"].get_string().value(), "1h");
  auto points = j.root["points"].get_array().value();
  ASSERT_EQ(points.size(), 169u);  // 7 x 24 minute-aligned hours plus the partial first one
  auto last_but_3 = points.at(points.size() - 4);  // 09:00
  EXPECT_EQ(last_but_3["t"].get_string().value(), "2026-11-20T09:00:00.000Z");
  EXPECT_EQ(last_but_3["hang_ms"].get_double().value(), 500.0);
  EXPECT_EQ(last_but_3["hang_ms_per_hour"].get_double().value(), 500.0);
}

TEST_F(HangsTest, FlamegraphTreeMergesStacks) {
  EXPECT_EQ(FlamegraphTreeJson(*snap_, Q(Endpoint::kHangsFlamegraph, "")),
            R"J({"name":"(root)","hang_ms":4500,"hang_count":4,"children":[)J"
            R"J({"name":"root","hang_ms":4500,"hang_count":4,"children":[)J"
            R"J({"name":"B","hang_ms":3000,"hang_count":1,"children":[]},)J"
            R"J({"name":"mid","hang_ms":1000,"hang_count":2,"children":[{"name":"A","hang_ms":1000,"hang_count":2,"children":[]}]},)J"
            R"J({"name":"other","hang_ms":500,"hang_count":1,"children":[{"name":"A","hang_ms":500,"hang_count":1,"children":[]}]}]}]})J");
}

TEST_F(HangsTest, FlamegraphCollapsedIsFoldedStacks) {
  EXPECT_EQ(FlamegraphCollapsed(*snap_, Q(Endpoint::kHangsFlamegraph, "format=collapsed")),
            "root;B 3000\nroot;mid;A 1000\nroot;other;A 500\n");
  EXPECT_EQ(FlamegraphCollapsed(*snap_, Q(Endpoint::kHangsFlamegraph, "format=collapsed&window=1h&os=Linux")),
            "root;B 3000\nroot;mid;A 1000\n");
}

TEST(Flamegraph, FrameSeparatorsAreNeutralised) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"a;b", "c\nd"}, 1'499, 1, 0);
  auto snap = w.Build();
  EXPECT_EQ(FlamegraphCollapsed(*snap, Q(Endpoint::kHangsFlamegraph, "")), "a b;c d 1\n");
}

// A hostile main ping can carry a stack of hundreds of thousands of frames: under bounds
// that let it whole, the tree is built, written and freed without recursion, here on a thread with a 128 KiB
// stack (an HTTP worker's is not much larger under a sanitizer's bigger frames).
TEST(Flamegraph, AStackDeeperThanAnyThreadStackIsServed) {
  constexpr size_t kDepth = 200'000;
  std::vector<std::string> frames;
  frames.reserve(kDepth);
  for (size_t i = 0; i < kDepth; ++i) frames.push_back("f" + std::to_string(i % 7));
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", frames, 2'000, 1, 0);
  auto snap = w.Build();
  std::string json;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 << 10);
  struct Job {
    const Snapshot* snap;
    std::string* out;
  } job{snap.get(), &json};
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  auto* j = static_cast<Job*>(arg);
                  *j->out = FlamegraphTreeJson(*j->snap, Q(Endpoint::kHangsFlamegraph, ""),
                                               AnswerLimits{.max_nodes = 300'000, .max_bytes = 64u << 20});
                  return nullptr;
                },
                &job),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  const std::string leaf = R"({"name":"f2","hang_ms":2,"hang_count":1,"children":[])";
  ASSERT_GT(json.size(), kDepth * leaf.size());
  EXPECT_EQ(json.rfind(leaf), json.size() - leaf.size() - 2 * kDepth - 1) << "the deepest frame is last";
  EXPECT_EQ(json.substr(json.size() - 4), "]}]}");
}

}  // namespace
}  // namespace seismo
