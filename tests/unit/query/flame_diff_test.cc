// /api/v1/hangs/flamegraph/diff (issue 20, ADR 0030): a build date's call tree against its
// baseline build dates at equal age, per usage hour of each side, with hand-computed numbers.
#include "seismo/query/flame_diff.h"

#include <gtest/gtest.h>

#include "fake_provider.h"
#include "query_fixture.h"
#include "seismo/query/api.h"

namespace seismo {
namespace {

using namespace seismo::testing;

// Three build dates of "release", bhr (stream time 12:00 on Nov 20):
//
//   date      first ping      usage in its hours 1..3   hangs there (parent, Gecko)
//   20261116  Nov 16 08:30    100 h, 100 h, -           main;Tick 40 s, main;Paint 16 s
//                             (later 500 h, and main;Tick 999 s, at hour 10)
//   20261118  Nov 18 08:30    300 h, 300 h, -           main;Tick 80 s, main;Paint 24 s, main;GC 8 s
//   20261120  Nov 20 10:30    50 h, 50 h, -             main;Tick 20 s, main;Paint 5 s
//                                                       (and content, DOM Worker: w;x 1 s)
//
// 20261120 is three hours old at 12:00 (hours 10, 11, 12). Its baselines over their first
// three hours: 800 h; Tick 120 s = 150 ms/h, Paint 40 s = 50 ms/h, GC 8 s = 10 ms/h. The
// build, 100 h: Tick 200 ms/h (+50), Paint 50 ms/h (0), GC none (−10), Gecko 250 (+40).
class FlameDiff : public ::testing::Test {
 protected:
  void SetUp() override {
    auto usage = [&](const char* date, int64_t ago, int64_t hours) {
      world_.Usage("bhr", "Linux", hours * kHour, ago, "release", date);
    };
    auto hang = [&](const char* date, int64_t ago, const char* frame, int64_t seconds) {
      world_.Hang("bhr", "Linux", "parent", "Gecko", {"main", frame}, seconds * 1'000'000, 1, ago, "release",
                  date);
    };
    usage("20261116", 99 * kHour + 30 * kMin, 100);
    usage("20261116", 98 * kHour + 30 * kMin, 100);
    usage("20261116", 90 * kHour + 30 * kMin, 500);
    hang("20261116", 99 * kHour + 30 * kMin, "Tick", 40);
    hang("20261116", 98 * kHour + 30 * kMin, "Paint", 16);
    hang("20261116", 90 * kHour + 30 * kMin, "Tick", 999);
    usage("20261118", 51 * kHour + 30 * kMin, 300);
    usage("20261118", 50 * kHour + 30 * kMin, 300);
    hang("20261118", 51 * kHour + 30 * kMin, "Tick", 80);
    hang("20261118", 50 * kHour + 30 * kMin, "Paint", 24);
    hang("20261118", 50 * kHour + 30 * kMin, "GC", 8);
    usage("20261120", 90 * kMin, 50);
    usage("20261120", 30 * kMin, 50);
    hang("20261120", 90 * kMin, "Tick", 20);
    hang("20261120", 30 * kMin, "Paint", 5);
    world_.Hang("bhr", "Linux", "content", "DOM Worker", {"w", "x"}, 1'000'000, 1, 30 * kMin, "release",
                "20261120");
    snap_ = world_.Build();
  }

  // The child of `node` named `name`.
  static simdjson::dom::element Child(simdjson::dom::element node, std::string_view name) {
    for (auto c : node["children"].get_array()) {
      if (c["name"].get_string().value() == name) return c;
    }
    ADD_FAILURE() << "no child " << name;
    return node;
  }

  World world_;
  std::shared_ptr<const Snapshot> snap_;
};

TEST_F(FlameDiff, EachFrameIsTheBuildAgainstItsBaselinesPerUsageHour) {
  Json j(FlamegraphDiffJson(*snap_, Q(Endpoint::kHangsFlameDiff, "channel=release&thread=Gecko"),
                            BaselinePolicy{}));
  EXPECT_EQ(j.root["build_date"].get_string().value(), "20261120") << "the channel's newest";
  EXPECT_EQ(j.root["source"].get_string().value(), "bhr");
  EXPECT_EQ(j.root["thread"].get_string().value(), "Gecko");
  EXPECT_EQ(j.root["age_hours"].get_int64().value(), 3);
  std::vector<std::string> dates;
  for (auto d : j.root["baseline_build_dates"].get_array()) dates.emplace_back(d.get_string().value());
  EXPECT_EQ(dates, (std::vector<std::string>{"20261118", "20261116"}));
  EXPECT_DOUBLE_EQ(j.root["build"]["usage_hours"].get_double().value(), 100);
  EXPECT_DOUBLE_EQ(j.root["build"]["hang_ms_per_hour"].get_double().value(), 250);
  EXPECT_DOUBLE_EQ(j.root["baseline"]["usage_hours"].get_double().value(), 800);
  EXPECT_DOUBLE_EQ(j.root["baseline"]["hang_ms_per_hour"].get_double().value(), 210);
  const simdjson::dom::element root = j.root["tree"].value();
  EXPECT_DOUBLE_EQ(root["delta_ms_per_hour"].get_double().value(), 40);
  const simdjson::dom::element main = Child(root, "main");
  EXPECT_DOUBLE_EQ(main["hang_ms_per_hour"].get_double().value(), 250);
  EXPECT_DOUBLE_EQ(main["baseline_hang_ms_per_hour"].get_double().value(), 210);
  const simdjson::dom::element tick = Child(main, "Tick");
  EXPECT_DOUBLE_EQ(tick["hang_ms"].get_double().value(), 20'000);
  EXPECT_DOUBLE_EQ(tick["baseline_hang_ms"].get_double().value(), 120'000) << "not hour 10's 999 s";
  EXPECT_EQ(tick["baseline_hang_count"].get_int64().value(), 2);
  EXPECT_DOUBLE_EQ(tick["delta_ms_per_hour"].get_double().value(), 50);
  EXPECT_DOUBLE_EQ(Child(main, "Paint")["delta_ms_per_hour"].get_double().value(), 0);
  // A path the new build no longer takes is still in the tree, with nothing on its side.
  const simdjson::dom::element gc = Child(main, "GC");
  EXPECT_DOUBLE_EQ(gc["hang_ms_per_hour"].get_double().value(), 0);
  EXPECT_DOUBLE_EQ(gc["delta_ms_per_hour"].get_double().value(), -10);
  // Children heaviest first by both sides' ms per usage hour: Tick 350, Paint 100, GC 10.
  std::vector<std::string> order;
  for (auto c : main["children"].get_array()) order.emplace_back(c["name"].get_string().value());
  EXPECT_EQ(order, (std::vector<std::string>{"Tick", "Paint", "GC"}));
}

TEST_F(FlameDiff, WithoutAThreadEveryThreadOfTheSourceCounts) {
  Json j(FlamegraphDiffJson(*snap_, Q(Endpoint::kHangsFlameDiff, "channel=release"), BaselinePolicy{}));
  EXPECT_DOUBLE_EQ(j.root["build"]["hang_ms_per_hour"].get_double().value(), 260);
  EXPECT_DOUBLE_EQ(Child(Child(j.root["tree"].value(), "w"), "x")["delta_ms_per_hour"].get_double().value(),
                   10);
}

TEST_F(FlameDiff, TheBoundFoldsBothSidesIntoOther) {
  AnswerLimits limits;
  limits.max_nodes = 4;  // root, main, Tick and main's (other): Paint and GC
  Json j(FlamegraphDiffJson(*snap_, Q(Endpoint::kHangsFlameDiff, "channel=release&thread=Gecko"),
                            BaselinePolicy{}, limits));
  EXPECT_TRUE(j.root["tree"]["truncated"].get_bool().value());
  const simdjson::dom::element other = Child(Child(j.root["tree"].value(), "main"), "(other)");
  EXPECT_DOUBLE_EQ(other["hang_ms"].get_double().value(), 5'000) << "Paint";
  EXPECT_DOUBLE_EQ(other["baseline_hang_ms"].get_double().value(), 48'000) << "Paint and GC";
  EXPECT_DOUBLE_EQ(other["delta_ms_per_hour"].get_double().value(), 50 - 60);
}

TEST_F(FlameDiff, ABuildWithTooFewBaselinesHasNoTree) {
  Json j(FlamegraphDiffJson(*snap_, Q(Endpoint::kHangsFlameDiff, "channel=release&build_date=20261118"),
                            BaselinePolicy{}));
  EXPECT_EQ(j.root["build_date"].get_string().value(), "20261118");
  EXPECT_TRUE(j.root["baseline_build_dates"].is_null()) << "one earlier build is fewer than the minimum";
  EXPECT_TRUE(j.root["tree"].is_null());
  Json none(FlamegraphDiffJson(*snap_, Q(Endpoint::kHangsFlameDiff, "channel=nightly"), BaselinePolicy{}));
  EXPECT_TRUE(none.root["build_date"].is_null());
  EXPECT_TRUE(none.root["tree"].is_null());
  Json main_pings(FlamegraphDiffJson(*snap_, Q(Endpoint::kHangsFlameDiff, "channel=release&source=main"),
                                     BaselinePolicy{}));
  EXPECT_TRUE(main_pings.root["source"].is_null()) << "no main-ping usage";
}

TEST(FlameDiffParams, AChannelIsRequiredAndNeitherOsNorWindowApply) {
  FakeProvider provider;
  ApiSettings settings;
  auto get = [&](std::string_view qs) {
    return AnswerApi("/api/v1/hangs/flamegraph/diff", qs, provider, settings, 0);
  };
  EXPECT_EQ(get("").body, R"({"error":"channel: required"})");
  EXPECT_EQ(get("channel=beta&os=Linux").status, 400);
  EXPECT_EQ(get("channel=beta&window=1h").status, 400);
  EXPECT_EQ(get("channel=beta&build_id=20261120103000").status, 400);
  EXPECT_EQ(get("channel=beta&build_date=20261120&source=bhr&process=parent&thread=Gecko&signature=s").status,
            200);
}

}  // namespace
}  // namespace seismo
