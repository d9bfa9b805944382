// Life cycle per alert key, serialisation round trip, the outbox, and the alert JSON.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "seismo/alert/engine.h"
#include "seismo/alert/service.h"
#include "seismo/alert/sinks.h"
#include "seismo/sim/scenario.h"

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

// Checkpoints written before format 3 hold the engine's state in format 2 (fixed-width
// fields). These bytes are what the format 2 engine wrote for two firing alerts (a new
// signature and the parent class it raised, from the webhook test's two builds).
TEST(AlertLifecycle, StateOfFormatTwoIsStillRead) {
  const std::string hex =
      "53414c52020000000200000000000000010700000072656c6561736503000000616c6c0e0000003230323631313230303030"
      "303030090000006272616e645f6e65770000000001005e56eea1010000005e56eea1010000005e56eea10100000200000000"
      "0000001e00000000000000000000000000000000000000000059400000000000408f4000000000011e000000000000000100"
      "00000e0000003230323631313031303030303030050000003135302e30000000000000f03f00000000000000000000000000"
      "0000000000000000000000020700000072656c6561736503000000616c6c0e00000032303236313132303030303030300000"
      "000006000000706172656e7401005e56eea1010000005e56eea1010000005e56eea101000002000000000000001e00000000"
      "000000320000000000000000000000000059400000000000408f400001ffffffffffff174001cf97beab5dab963d01cf97be"
      "ab5dab963d011e00000000000000010000000e0000003230323631313031303030303030050000003135302e300000000000"
      "00f03f000000000000000000000000000000000000000000000000217709f4d6c3a68d";
  std::string bytes;
  for (size_t at = 0; at + 1 < hex.size(); at += 2)
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(at, 2), nullptr, 16)));
  AlertEngine engine(AlertOptions{});
  ASSERT_TRUE(engine.Restore(bytes).ok());
  EXPECT_EQ(
      engine.AlertsJson(),
      R"([{"state":"firing","rule":"new_crash_signature","channel":"release","os":"all","build":"20261120000000","build)"
      R"(_id":"20261120000000","version":"150.0","signature":"brand_new","count_new":30,"count_base":0,"exposure_kind":)"
      R"("usage_hours","exposure_new":100,"exposure_base":1000,"rate_new":300,"rate_base":0,"ratio":null,"p_value":null)"
      R"(,"p_adjusted":null,"dispersion":0,"installs":30,"baseline_builds":["20261101000000"],"age_hours":1,"first_seen)"
      R"(":"2026-11-18T11:06:40.000Z","last_seen":"2026-11-18T11:06:40.000Z","since":"2026-11-18T11:06:40.000Z","dashbo)"
      R"(ard_path":"/#/releases?channel=release&build_id=20261120000000&signature=brand_new"},{"state":"firing)"
      R"(","rule":"crash_rate_regression","channel":"release","os":"all","build":"20261120000000","build_id":"202611200)"
      R"(00000","version":"150.0","signature":null,"process":"parent","count_new":30,"count_base":50,"exposure_kind":"u)"
      R"(sage_hours","exposure_new":100,"exposure_base":1000,"rate_new":300,"rate_base":50,"ratio":5.999999999999999,"p)"
      R"(_value":5.154424355658412e-12,"p_adjusted":5.154424355658412e-12,"dispersion":0,"installs":30,"baseline_builds)"
      R"(":["20261101000000"],"age_hours":1,"first_seen":"2026-11-18T11:06:40.000Z","last_seen":"2026-11-18T11:06:40.00)"
      R"(0Z","since":"2026-11-18T11:06:40.000Z","dashboard_path":"/#/releases?channel=release&build_id=20261120000000&class=parent"}])");
  // Written again in the current format, the same state.
  const std::string current = engine.Serialize();
  EXPECT_NE(current, bytes);
  AlertEngine again(AlertOptions{});
  ASSERT_TRUE(again.Restore(current).ok());
  EXPECT_EQ(again.AlertsJson(), engine.AlertsJson());
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x20;
  EXPECT_EQ(again.Restore(flipped).code(), StatusCode::kCorrupt);
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
  EXPECT_EQ(std::string_view(a["dashboard_path"]), "/#/releases?channel=release&build_id=" + build +
                                                       "&signature=mozilla%3A%3Ascenario%3A%3ACrash05");
}

TEST(AlertJson, EventJsonAddsThePreviousStateAndAnIdOfTheTransition) {
  AlertEngine engine(AlertOptions{});
  std::vector<AlertEvent> events = engine.Evaluate(*Bad());
  ASSERT_EQ(events.size(), 1u);
  simdjson::dom::parser parser;
  simdjson::dom::object o = parser.parse(AlertEventJson(events[0])).get_object();
  EXPECT_EQ(std::string_view(o["previous_state"]), "inactive");
  EXPECT_EQ(std::string_view(o["state"]), "pending");
  const std::string id = std::string(std::string_view(o["event_id"]));
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  // The same transition decided by another engine (the next holder) has the same id; the
  // key's next transition another.
  AlertEngine other(AlertOptions{});
  EXPECT_EQ(AlertEventId(other.Evaluate(*Bad()).at(0)), id);
  const std::vector<AlertEvent> next = engine.Evaluate(*Bad());  // pending -> firing
  ASSERT_EQ(next.size(), 1u);
  EXPECT_NE(AlertEventId(next[0]), id);
}

// The alert outbox (ADR 0024, "Alerts"): with a commit function, a round's transitions are
// in the committed state before any sink sees them, and out of it after; a holder that dies
// in between leaves them to whoever restores that state, which sends them once; a failed
// commit sends nothing and the transitions wait for the next round.
// A sink that records what it was handed, in a list the test keeps.
class Recording : public AlertSink {
 public:
  explicit Recording(std::vector<std::string>* sent) : sent_(sent) {}
  std::string_view name() const override { return "recording"; }
  void Publish(const AlertEvent& event, const std::string&) override {
    sent_->push_back(std::string(AlertStateName(event.from)) + "->" +
                     std::string(AlertStateName(event.alert.state)));
  }
  void Stop() override {}
  SinkDelivery delivery() const override { return {}; }

 private:
  std::vector<std::string>* sent_;
};

// The outbox of a serialized state, read back.
size_t OutboxOf(const std::string& state) {
  AlertEngine e(AlertOptions{});
  EXPECT_TRUE(e.Restore(state).ok());
  return e.Outbox().size();
}

TEST(AlertOutbox, TransitionsAreCommittedBeforeAnySinkSeesThemAndClearedAfter) {
  std::vector<std::string> sent;
  std::vector<std::pair<std::string, size_t>> commits;  // (state, sinks' count then)
  AlertService a(AlertOptions{}, nullptr);
  a.AddSink(std::make_unique<Recording>(&sent));
  a.SetCommit([&] {
    commits.emplace_back(a.engine().Serialize(), sent.size());
    return true;
  });
  (void)a.EvaluateNow(*Bad());  // inactive -> pending
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_EQ(OutboxOf(commits[0].first), 1u) << "committed with the transition in its outbox";
  EXPECT_EQ(commits[0].second, 0u) << "before any sink saw it";
  EXPECT_EQ(sent, V{"inactive->pending"});
  EXPECT_EQ(OutboxOf(commits[1].first), 0u) << "and again, delivered, after";
  EXPECT_TRUE(a.engine().Outbox().empty());
}

// A sink whose transitions leave the process only when flushed (a webhook's queue, a
// producer's), logging each step in a list the test keeps.
class Queued : public AlertSink {
 public:
  explicit Queued(std::vector<std::string>* log) : log_(log) {}
  std::string_view name() const override { return "queued"; }
  void Publish(const AlertEvent& event, const std::string&) override {
    log_->push_back(std::string("queue ") + std::string(AlertStateName(event.alert.state)));
  }
  bool Flush(std::chrono::milliseconds) override {
    log_->push_back("flush");
    return true;
  }
  SinkDelivery delivery() const override { return {}; }

 private:
  std::vector<std::string>* log_;
};

TEST(AlertOutbox, TransitionsCountAsDeliveredOnlyOnceTheSinksHaveThemOutOfTheProcess) {
  std::vector<std::string> log;
  AlertService a(AlertOptions{}, nullptr);
  a.AddSink(std::make_unique<Queued>(&log));
  a.SetCommit([&] {
    log.push_back("commit outbox " + std::to_string(OutboxOf(a.engine().Serialize())));
    return true;
  });
  (void)a.EvaluateNow(*Bad());
  EXPECT_EQ(log, (V{"commit outbox 1", "queue pending", "flush", "commit outbox 0"}));
}

TEST(AlertOutbox, AHolderKilledBetweenCommitAndSendLeavesTheTransitionsToTheNext) {
  // Holder a commits the round's state, then dies before its sinks see anything.
  std::string committed;
  {
    AlertEngine a(AlertOptions{});
    (void)a.Evaluate(*Bad());
    (void)a.Evaluate(*Bad());   // pending -> firing, decided
    committed = a.Serialize();  // what its commit made durable; nothing was sent
  }
  // Holder b goes on from that state: its first round sends what a decided, once, and
  // decides nothing again (the key is firing already).
  std::vector<std::string> sent;
  AlertService b(AlertOptions{}, nullptr);
  b.AddSink(std::make_unique<Recording>(&sent));
  b.SetCommit([] { return true; });
  ASSERT_TRUE(b.engine().Restore(committed).ok());
  EXPECT_TRUE(b.EvaluateNow(*Bad()).empty()) << "no transition decided twice";
  EXPECT_EQ(sent, (V{"inactive->pending", "pending->firing"}));
  (void)b.EvaluateNow(*Bad());
  EXPECT_EQ(sent.size(), 2u) << "each sent once";
}

TEST(AlertOutbox, AFailedCommitSendsNothingAndTheTransitionsWaitForTheNextRound) {
  std::vector<std::string> sent;
  bool durable = false;
  AlertService a(AlertOptions{}, nullptr);
  a.AddSink(std::make_unique<Recording>(&sent));
  a.SetCommit([&] { return durable; });
  (void)a.EvaluateNow(*Bad());
  EXPECT_TRUE(sent.empty());
  EXPECT_EQ(a.engine().Outbox().size(), 1u);
  durable = true;
  (void)a.EvaluateNow(*Bad());  // pending -> firing, and the one that waited
  EXPECT_EQ(sent, (V{"inactive->pending", "pending->firing"}));
  EXPECT_TRUE(a.engine().Outbox().empty());
}

TEST(AlertOutbox, WithoutACommitTransitionsGoStraightToTheSinks) {
  std::vector<std::string> sent;
  AlertService a(AlertOptions{}, nullptr);
  a.AddSink(std::make_unique<Recording>(&sent));
  EXPECT_EQ(a.EvaluateNow(*Bad()).size(), 1u);
  EXPECT_EQ(sent, V{"inactive->pending"});
  EXPECT_EQ(OutboxOf(a.engine().Serialize()), 0u);
}

TEST(AlertOutbox, KeepsAtMostItsBoundWhileNothingIsDelivered) {
  AlertEngine a(AlertOptions{});
  constexpr size_t kBound = 12;
  a.SetMaxOutboxForTesting(kBound);
  size_t decided = 0;
  for (int round = 0; decided <= kBound + 5; ++round)
    decided += a.Evaluate(round % 4 < 2 ? *Bad() : *Healthy()).size();
  EXPECT_EQ(a.Outbox().size(), kBound);
  EXPECT_EQ(a.stats().outbox_dropped, decided - kBound);
  EXPECT_EQ(OutboxOf(a.Serialize()), kBound);
}

}  // namespace
}  // namespace seismo
