// /api/v1/releases and /api/v1/builds' at_equal_age (ADR 0029): a build beside its
// baseline builds at equal age, with hand-computed numbers.
#include <gtest/gtest.h>

#include "fake_provider.h"
#include "query_fixture.h"
#include "seismo/query/api.h"
#include "seismo/query/builds_json.h"
#include "seismo/query/releases_json.h"

namespace seismo {
namespace {

using namespace seismo::testing;

constexpr const char* kA = "20261116083000";
constexpr const char* kB = "20261118083000";
constexpr const char* kC = "20261120103000";

// Three builds of "release" (stream time 12:00 on Nov 20):
//
//   build  first ping        its hour 1          its hour 2         later
//   A      Nov 16 08:30      100 h, 4 crashes    100 h, 6 crashes   500 h, 50 crashes (hour 10)
//   B      Nov 18 08:30      300 h, 12 crashes   300 h, 6 crashes   -
//   C      Nov 20 10:30      50 h, 3 crashes     50 h, 2 crashes    -
//
// C's last usage and crash came at 11:30, so it is judged to then: two hours old. Its
// baselines (B, A) over their first two hours: 800 h and 28 crashes, 35 per 1000 h, against
// C's 5 in 100 h, 50 per 1000 h: x1.43. Over their whole lives they would be 60 (x0.83).
class Releases : public ::testing::Test {
 protected:
  void SetUp() override {
    auto both = [&](const char* build, int64_t ago, int64_t usage_hours, int crashes) {
      world_.BuildUsage("Linux", usage_hours * kHour, 1, 0, ago, build);
      for (int i = 0; i < crashes; ++i) {
        world_.Crash("sig", "content", "content", "install-" + std::to_string(i), ago, false, "Linux", build);
      }
    };
    both(kA, 99 * kHour + 30 * kMin, 100, 4);
    both(kA, 98 * kHour + 30 * kMin, 100, 6);
    both(kA, 90 * kHour + 30 * kMin, 500, 50);
    both(kB, 51 * kHour + 30 * kMin, 300, 12);
    both(kB, 50 * kHour + 30 * kMin, 300, 6);
    both(kC, 90 * kMin, 50, 3);
    both(kC, 30 * kMin, 50, 2);
    snap_ = world_.Build();
  }

  World world_;
  std::shared_ptr<const Snapshot> snap_;
};

TEST_F(Releases, TheNewestBuildIsComparedWithItsBaselinesAtItsAge) {
  Json j(ReleasesJson(*snap_, Q(Endpoint::kReleases, "channel=release"), BaselinePolicy{}));
  const auto crashes = j.root["crashes"];
  EXPECT_EQ(crashes["build_id"].get_string().value(), kC);
  EXPECT_EQ(crashes["age_hours"].get_int64().value(), 2);
  EXPECT_EQ(crashes["judged_to"].get_string().value(), "2026-11-20T11:30:00.000Z");
  const auto cmp = crashes["comparison"];
  std::vector<std::string> ids;
  for (auto id : cmp["baseline_builds"].get_array()) ids.emplace_back(id.get_string().value());
  EXPECT_EQ(ids, (std::vector<std::string>{kB, kA}));
  EXPECT_DOUBLE_EQ(cmp["build"]["usage_hours"].get_double().value(), 100);
  EXPECT_EQ(cmp["build"]["crashes"]["total"].get_int64().value(), 5);
  EXPECT_DOUBLE_EQ(cmp["build"]["crash_rate_per_1000h"]["total"].get_double().value(), 50);
  EXPECT_DOUBLE_EQ(cmp["baseline"]["usage_hours"].get_double().value(), 800);
  EXPECT_EQ(cmp["baseline"]["crashes"]["content"].get_int64().value(), 28);
  EXPECT_DOUBLE_EQ(cmp["baseline"]["crash_rate_per_1000h"]["total"].get_double().value(), 35);
  EXPECT_NEAR(cmp["ratio"]["total"].get_double().value(), 50.0 / 35.0, 1e-12);
  EXPECT_TRUE(cmp["ratio"]["gpu"].is_null()) << "no gpu crash in either: no ratio";
  // Lines: the build, then its baselines; each hour of its age, cumulative.
  auto lines = crashes["lines"].get_array();
  std::vector<std::string> roles;
  for (auto line : lines) roles.emplace_back(line["role"].get_string().value());
  EXPECT_EQ(roles, (std::vector<std::string>{"build", "baseline", "baseline"}));
  auto c = lines.at(0)["points"].get_array();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_DOUBLE_EQ(c.at(0)["crash_rate_per_1000h"]["total"].get_double().value(), 60);  // 3 in 50 h
  EXPECT_DOUBLE_EQ(c.at(1)["crash_rate_per_1000h"]["total"].get_double().value(), 50);  // 5 in 100 h
  auto a = lines.at(2)["points"].get_array();
  EXPECT_EQ(lines.at(2)["build_id"].get_string().value(), kA);
  EXPECT_DOUBLE_EQ(a.at(1)["crash_rate_per_1000h"]["total"].get_double().value(), 50);  // 10 in 200 h
  EXPECT_DOUBLE_EQ(a.at(9)["crash_rate_per_1000h"]["total"].get_double().value(), 60 * 1000.0 / 700);
  EXPECT_TRUE(j.root["hangs"].is_null()) << "no usage per build date: no hang line";
}

TEST_F(Releases, WithoutAgeMatchingTheBaselinesAreTheirWholeLives) {
  BaselinePolicy policy;
  policy.age_matched = false;
  Json j(ReleasesJson(*snap_, Q(Endpoint::kReleases, "channel=release"), policy));
  EXPECT_DOUBLE_EQ(
      j.root["crashes"]["comparison"]["baseline"]["crash_rate_per_1000h"]["total"].get_double().value(), 60);
}

TEST_F(Releases, AnOlderBuildIsComparedWithTheBuildsBeforeItOrShownBesideThem) {
  Json b(ReleasesJson(*snap_, Q(Endpoint::kReleases, std::string("channel=release&build_id=") + kB),
                      BaselinePolicy{}));
  EXPECT_EQ(b.root["crashes"]["build_id"].get_string().value(), kB);
  EXPECT_TRUE(b.root["crashes"]["comparison"].is_null()) << "A alone is fewer than min_baseline_builds";
  auto lines = b.root["crashes"]["lines"].get_array();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines.at(1)["role"].get_string().value(), "earlier");
  Json none(ReleasesJson(*snap_, Q(Endpoint::kReleases, "channel=nightly"), BaselinePolicy{}));
  EXPECT_TRUE(none.root["crashes"].is_null());
}

TEST_F(Releases, BuildRowsCarryTheSameComparison) {
  Json j(BuildsJson(*snap_, Q(Endpoint::kBuilds, "window=all"), BaselinePolicy{}));
  auto rows = j.root["builds"].get_array();
  ASSERT_EQ(rows.size(), 3u);
  const auto c = rows.at(0);
  EXPECT_EQ(c["build_id"].get_string().value(), kC);
  EXPECT_EQ(c["first_seen"].get_string().value(), "2026-11-20T10:30:00.000Z") << "its first usage and crash";
  EXPECT_EQ(rows.at(2)["first_seen"].get_string().value(), "2026-11-16T08:30:00.000Z");
  EXPECT_EQ(c["at_equal_age"]["crashes"]["age_hours"].get_int64().value(), 2);
  EXPECT_DOUBLE_EQ(c["at_equal_age"]["crashes"]["crash_rate_per_1000h"].get_double().value(), 50);
  EXPECT_DOUBLE_EQ(c["at_equal_age"]["crashes"]["baseline_crash_rate_per_1000h"].get_double().value(), 35);
  EXPECT_NEAR(c["at_equal_age"]["crashes"]["ratio"].get_double().value(), 50.0 / 35.0, 1e-12);
  EXPECT_TRUE(c["at_equal_age"]["hangs"].is_null());
  EXPECT_TRUE(rows.at(1)["at_equal_age"]["crashes"].is_null()) << "B has one earlier build";
}

// An alert's evidence: one signature's crash reports by age, the build against its baselines.
TEST_F(Releases, ASignatureNarrowsTheComparisonToItsCrashes) {
  world_.Crash("other", "parent", "parent", "x", 45 * kMin, false, "Linux", kC);
  snap_ = world_.Build();
  Json all(ReleasesJson(*snap_, Q(Endpoint::kReleases, "channel=release"), BaselinePolicy{}));
  EXPECT_EQ(all.root["crashes"]["comparison"]["build"]["crashes"]["total"].get_int64().value(), 6);
  Json sig(ReleasesJson(*snap_, Q(Endpoint::kReleases, "channel=release&signature=sig"), BaselinePolicy{}));
  EXPECT_EQ(sig.root["signature"].get_string().value(), "sig");
  EXPECT_EQ(sig.root["crashes"]["comparison"]["build"]["crashes"]["total"].get_int64().value(), 5);
  EXPECT_EQ(sig.root["crashes"]["comparison"]["baseline"]["crashes"]["total"].get_int64().value(), 28);
  Json other(
      ReleasesJson(*snap_, Q(Endpoint::kReleases, "channel=release&signature=other"), BaselinePolicy{}));
  EXPECT_EQ(other.root["crashes"]["comparison"]["build"]["crashes"]["parent"].get_int64().value(), 1);
  EXPECT_TRUE(other.root["crashes"]["comparison"]["ratio"]["total"].is_null()) << "no baseline crash of it";
  Json none(
      ReleasesJson(*snap_, Q(Endpoint::kReleases, "channel=release&signature=nobody"), BaselinePolicy{}));
  EXPECT_EQ(none.root["crashes"]["comparison"]["build"]["crashes"]["total"].get_int64().value(), 0);
  EXPECT_DOUBLE_EQ(none.root["crashes"]["comparison"]["build"]["usage_hours"].get_double().value(), 100)
      << "usage is the denominator whatever the signature";
}

TEST(ReleasesParams, AChannelIsRequiredAndOnlyBuildsAndSourcesChooseTheLines) {
  FakeProvider provider;
  ApiSettings settings;
  auto get = [&](std::string_view qs) { return AnswerApi("/api/v1/releases", qs, provider, settings, 0); };
  EXPECT_EQ(get("").status, 400);
  EXPECT_EQ(get("").body, R"({"error":"channel: required"})");
  EXPECT_EQ(get("channel=beta&os=Linux").status, 400);
  EXPECT_EQ(get("channel=beta&window=1h").status, 400);
  EXPECT_EQ(get("channel=beta&source=gecko").status, 400);
  const ApiAnswer ok = get("channel=beta&build_id=20261120103000&source=bhr&signature=s");
  EXPECT_EQ(ok.status, 200) << ok.body;
  Json j(ok.body);
  EXPECT_TRUE(j.root["crashes"].is_null());
}

}  // namespace
}  // namespace seismo
