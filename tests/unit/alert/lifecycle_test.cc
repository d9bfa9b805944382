// Life cycle per alert key, serialisation round trip, and the alert JSON.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "seismo/alert/engine.h"
#include "seismo/alert/sinks.h"
#include "seismo/app/scenario.h"

namespace seismo {
namespace {

std::shared_ptr<const Snapshot> Bad() {
  static auto snap = [] {
    ScenarioOptions o;
    o.seed = 21;
    o.plants = kPlantSignatureSpike;
    return Scenario(o).MakeSnapshot();
  }();
  return snap;
}

std::shared_ptr<const Snapshot> Healthy() {
  static auto snap = [] {
    ScenarioOptions o;
    o.seed = 21;
    return Scenario(o).MakeSnapshot();
  }();
  return snap;
}

std::vector<std::string> States(const std::vector<AlertEvent>& events) {
  std::vector<std::string> out;
  for (const AlertEvent& e : events) {
    out.push_back(std::string(AlertStateName(e.from)) + "->" + std::string(AlertStateName(e.alert.state)));
  }
  return out;
}

using V = std::vector<std::string>;

TEST(AlertLifecycle, PendingFiringResolvedEachTransitionOnce) {
  AlertOptions o;  // for = 2, resolve_after = 2
  AlertEngine engine(o);
  EXPECT_EQ(States(engine.Evaluate(*Bad())), V{"inactive->pending"});
  EXPECT_EQ(States(engine.Evaluate(*Bad())), V{"pending->firing"});
  EXPECT_EQ(States(engine.Evaluate(*Bad())), V{});  // still firing: nothing new
  EXPECT_EQ(engine.stats().by_state[static_cast<size_t>(AlertState::kFiring)], 1u);
  EXPECT_EQ(States(engine.Evaluate(*Healthy())), V{});  // false once: still firing
  EXPECT_EQ(States(engine.Evaluate(*Bad())), V{});      // true again resets the false streak
  EXPECT_EQ(States(engine.Evaluate(*Healthy())), V{});
  EXPECT_EQ(States(engine.Evaluate(*Healthy())), V{"firing->resolved"});
  EXPECT_EQ(States(engine.Evaluate(*Healthy())), V{});
  ASSERT_EQ(engine.Alerts().size(), 1u);  // resolved alerts stay visible
  EXPECT_EQ(engine.Alerts()[0].state, AlertState::kResolved);
  EXPECT_EQ(States(engine.Evaluate(*Bad())), V{"resolved->pending"});  // a new cycle
}

TEST(AlertLifecycle, PendingThatClearsIsForgotten) {
  AlertEngine engine(AlertOptions{});
  EXPECT_EQ(States(engine.Evaluate(*Bad())), V{"inactive->pending"});
  EXPECT_EQ(States(engine.Evaluate(*Healthy())), V{"pending->inactive"});
  EXPECT_TRUE(engine.Alerts().empty());
  EXPECT_EQ(engine.AlertsJson(), "[]");
}

TEST(AlertLifecycle, ForOneFiresAtOnce) {
  AlertOptions o;
  o.for_evaluations = 1;
  o.resolve_after = 1;
  AlertEngine engine(o);
  EXPECT_EQ(States(engine.Evaluate(*Bad())), V{"inactive->firing"});
  EXPECT_EQ(States(engine.Evaluate(*Healthy())), V{"firing->resolved"});
}

TEST(AlertLifecycle, StateSurvivesSerializeRestore) {
  AlertEngine a(AlertOptions{});
  (void)a.Evaluate(*Bad());
  (void)a.Evaluate(*Bad());  // firing
  const std::string bytes = a.Serialize();
  AlertEngine b(AlertOptions{});
  ASSERT_TRUE(b.Restore(bytes).ok());
  EXPECT_EQ(b.AlertsJson(), a.AlertsJson());
  EXPECT_EQ(b.Serialize(), bytes);
  // The restored engine continues the same life cycle: no second "firing" transition,
  // and it resolves after resolve_after false rounds.
  EXPECT_EQ(States(b.Evaluate(*Bad())), V{});
  (void)b.Evaluate(*Healthy());
  EXPECT_EQ(States(b.Evaluate(*Healthy())), V{"firing->resolved"});
}

TEST(AlertLifecycle, CorruptStateIsRejectedAndLeavesTheEngineAlone) {
  AlertEngine a(AlertOptions{});
  (void)a.Evaluate(*Bad());
  std::string bytes = a.Serialize();
  const std::string before = a.AlertsJson();
  for (size_t cut : {size_t{0}, size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    Status s = a.Restore(std::string_view(bytes).substr(0, cut));
    EXPECT_EQ(s.code(), StatusCode::kCorrupt) << cut;
  }
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x20;
  EXPECT_EQ(a.Restore(flipped).code(), StatusCode::kCorrupt);
  EXPECT_EQ(a.AlertsJson(), before);
  AlertEngine empty(AlertOptions{});
  ASSERT_TRUE(a.Restore(empty.Serialize()).ok());
  EXPECT_EQ(a.AlertsJson(), "[]");
}

TEST(AlertJson, CarriesKeyNumbersAndDashboardPath) {
  AlertEngine engine(AlertOptions{});
  (void)engine.Evaluate(*Bad());
  const std::string json = engine.AlertsJson();
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(json);
  simdjson::dom::array alerts = root.get_array();
  ASSERT_EQ(alerts.size(), 1u);
  simdjson::dom::object a = alerts.at(0).get_object();
  EXPECT_EQ(std::string_view(a["state"]), "pending");
  EXPECT_EQ(std::string_view(a["rule"]), "crash_signature_spike");
  EXPECT_EQ(std::string_view(a["channel"]), "release");
  EXPECT_EQ(std::string_view(a["os"]), "all");
  EXPECT_EQ(std::string_view(a["signature"]), "mozilla::scenario::Crash05");
  EXPECT_GE(int64_t(a["count_new"]), 10);
  EXPECT_GT(int64_t(a["count_base"]), 0);
  EXPECT_GT(double(a["exposure_new"]), 0);
  EXPECT_GT(double(a["exposure_base"]), 0);
  EXPECT_EQ(std::string_view(a["exposure_kind"]), "usage_hours");
  EXPECT_GT(double(a["ratio"]), 2);
  EXPECT_LT(double(a["p_value"]), 0.001);
  EXPECT_GT(int64_t(a["installs"]), 5);
  EXPECT_EQ(simdjson::dom::array(a["baseline_builds"]).size(), 3u);
  EXPECT_FALSE(std::string_view(a["first_seen"]).empty());
  EXPECT_FALSE(std::string_view(a["last_seen"]).empty());
  const std::string build = std::string(std::string_view(a["build_id"]));
  EXPECT_EQ(std::string_view(a["dashboard_path"]),
            "/#/crashes/signature?signature=mozilla%3A%3Ascenario%3A%3ACrash05&build_id=" + build + "&channel=release");
}

TEST(AlertJson, EventJsonAddsThePreviousState) {
  AlertEngine engine(AlertOptions{});
  std::vector<AlertEvent> events = engine.Evaluate(*Bad());
  ASSERT_EQ(events.size(), 1u);
  simdjson::dom::parser parser;
  simdjson::dom::object o = parser.parse(AlertEventJson(events[0])).get_object();
  EXPECT_EQ(std::string_view(o["previous_state"]), "inactive");
  EXPECT_EQ(std::string_view(o["state"]), "pending");
}

}  // namespace
}  // namespace seismo
