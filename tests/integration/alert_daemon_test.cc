// Alerts in the running daemon: a planted bad build read from a file fires its alerts,
// each transition reaches a Kafka topic on a real broker exactly once with the numbers
// that justify it, and after a restart from the checkpoint the alerts are still firing and
// nothing is emitted a second time. Sink failures are counted in /metrics and /api/v1/status.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "integration/real_kafka.h"
#include "seismo/app/daemon.h"
#include "seismo/http/server.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/signature/generator.h"
#include "seismo/sim/scenario.h"
#include "support/closed_port.h"
#include "support/wait_for.h"
#include "test_scale.h"
#include "unit/http/http_client.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using test::Patience;

// A string member, or "" when it is null.
std::string Text(simdjson::dom::element e) {
  return e.is_null() ? std::string() : std::string(std::string_view(e));
}

struct Transition {
  std::string rule, build, signature, state, previous_state;
  bool operator<(const Transition& o) const {
    return std::tie(rule, build, signature, state, previous_state) <
           std::tie(o.rule, o.build, o.signature, o.state, o.previous_state);
  }
};

// On the shared real broker (integration/real_kafka.h), with the test's own alert topic.
class KafkaAlertDaemon : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-alert-daemon-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ckpt");
    kafka_ = testing::RealKafka::Get();
    ASSERT_NE(kafka_, nullptr);
    alert_topic_ = testing::RealKafka::UniqueName("seismo.alerts");
    const Status created = kafka_->CreateTopic(alert_topic_, 1);
    ASSERT_TRUE(created.ok()) << created.message();
    auto gen = SignatureGenerator::LoadDefault();
    ASSERT_TRUE(gen);
    signatures_ = std::move(*gen);

    ScenarioOptions o;
    o.seed = 3;
    o.plants = kPlantSignatureSpike | kPlantNewSignature;
    o.usage_per_hour = 200;
    o.crashes_per_usage_hour = 0.2;
    o.hangs_per_usage_hour = 0.2;
    scenario_ = std::make_unique<Scenario>(o);
    std::ofstream out(Corpus());
    scenario_->ForEachDocument([&](std::string&& doc) {
      out << doc << '\n';
      ++documents_;
    });
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Corpus() const { return (dir_ / "corpus.ndjson").string(); }

  Config DaemonConfig() const {
    Config c;
    c.sources.files = {Corpus()};
    c.kafka.brokers = kafka_->bootstrap_servers();  // for the alert sink only: no topics consumed
    c.ingest.threads = 2;
    c.aggregate.shards = 2;
    c.checkpoint.dir = (dir_ / "ckpt").string();
    c.checkpoint.interval = milliseconds(200);
    c.alerts.interval = milliseconds(100);
    c.alerts.kafka_topic = alert_topic_;
    return c;
  }

  // Firing alerts as the daemon's API reports them: (rule, build, signature).
  static std::set<std::tuple<std::string, std::string, std::string>> Firing(const Daemon& d) {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    std::set<std::tuple<std::string, std::string, std::string>> out;
    const std::string json = d.alerts_json();
    if (parser.parse(json).get(root) != simdjson::SUCCESS) return out;
    simdjson::dom::array alerts;
    if (root.get_array().get(alerts) != simdjson::SUCCESS) return out;
    for (simdjson::dom::element a : alerts) {
      if (Text(a["state"]) != "firing") continue;
      out.insert({Text(a["rule"]), Text(a["build"]), Text(a["signature"])});
    }
    return out;
  }

  // Every message of the alert topic so far, as transitions; checks each carries its numbers.
  std::vector<Transition> ReadAlertTopic(const std::string& group) {
    KafkaConsumerOptions o{
        kafka_->bootstrap_servers(), testing::RealKafka::UniqueName(group), {alert_topic_}, {}};
    o.properties = {{"auto.offset.reset", "earliest"}, {"session.timeout.ms", "6000"}};
    auto consumer = KafkaConsumer::Create(o, nullptr);
    EXPECT_TRUE(consumer);
    auto wm = (*consumer)->QueryWatermarks({alert_topic_, 0}, Patience(seconds(5)));
    EXPECT_TRUE(wm);
    const int64_t total = wm ? wm->second : 0;
    std::vector<Transition> out;
    simdjson::dom::parser parser;
    const auto deadline = std::chrono::steady_clock::now() + Patience(seconds(30));
    while (static_cast<int64_t>(out.size()) < total && std::chrono::steady_clock::now() < deadline) {
      for (const KafkaMessage& m : (*consumer)->Poll(100, milliseconds(100))) {
        simdjson::dom::element a;
        EXPECT_EQ(parser.parse(std::string(m.payload())).get(a), simdjson::SUCCESS) << m.payload();
        Transition t{Text(a["rule"]), Text(a["build"]), Text(a["signature"]), Text(a["state"]),
                     Text(a["previous_state"])};
        if (t.state == "firing") {
          EXPECT_GE(int64_t(a["count_new"]), 10) << m.payload();
          if (t.rule != "new_crash_signature") {  // the one rule without a test
            EXPECT_LT(double(a["p_value"]), 0.001) << m.payload();
          }
          EXPECT_GT(simdjson::dom::array(a["baseline_builds"]).size(), 0u) << m.payload();
          EXPECT_FALSE(std::string_view(a["dashboard_path"]).empty()) << m.payload();
        }
        EXPECT_FALSE(m.key().empty()) << "the alert key names the message";
        out.push_back(std::move(t));
      }
    }
    EXPECT_EQ(static_cast<int64_t>(out.size()), total);
    return out;
  }

  fs::path dir_;
  testing::RealKafka* kafka_ = nullptr;
  std::string alert_topic_;
  std::unique_ptr<SignatureGenerator> signatures_;
  std::unique_ptr<Scenario> scenario_;
  uint64_t documents_ = 0;  // lines of the corpus
};

TEST_F(KafkaAlertDaemon, TransitionsReachKafkaOnceAndFiringAlertsSurviveARestart) {
  const std::set<std::tuple<std::string, std::string, std::string>> planted = {
      {"crash_signature_spike", scenario_->truth().new_build_id, scenario_->truth().spike_signature},
      {"new_crash_signature", scenario_->truth().new_build_id, scenario_->truth().new_signature},
  };
  SystemClock clock;
  uint64_t documents = 0;
  {
    Daemon first(DaemonConfig(), signatures_.get(), &clock);
    ASSERT_TRUE(first.Start().ok());
    // The alerts can fire before the whole file is read (a slow build): the restart below
    // checks a file read to its end is not read again, so the first run reads all of it.
    // (Under TSan, beside other suites on two cores, reading and aggregating the corpus's
    // 28 000 documents alone took 50 s.)
    test::WaitFor([&] { return Firing(first) == planted && first.counts().documents >= documents_; },
                  seconds(60));
    ASSERT_EQ(Firing(first), planted) << first.alerts_json();
    ASSERT_EQ(first.counts().documents, documents_);
    first.Stop();
    documents = first.counts().documents;
  }  // the alert producer flushes here

  std::vector<Transition> before = ReadAlertTopic("reader-1");
  std::map<std::tuple<std::string, std::string, std::string>, int> firing_messages;
  for (const Transition& t : before) {
    if (t.state == "firing") ++firing_messages[{t.rule, t.build, t.signature}];
  }
  for (const auto& p : planted) EXPECT_EQ(firing_messages[p], 1) << std::get<0>(p) << " " << std::get<2>(p);

  // Restart from the checkpoint: the file is not read again, the alerts are firing from
  // the start, and several rounds later nothing new has been emitted.
  Daemon second(DaemonConfig(), signatures_.get(), &clock);
  ASSERT_TRUE(second.Start().ok());
  EXPECT_EQ(Firing(second), planted) << "restored before the first round";
  // 15 rounds later (several publishes), still the same and nothing emitted.
  test::WaitFor([&] { return second.AlertRoundsForTesting() >= 15; }, seconds(60), milliseconds(20));
  ASSERT_GE(second.AlertRoundsForTesting(), 15u);
  EXPECT_EQ(Firing(second), planted) << second.alerts_json();
  EXPECT_EQ(second.counts().documents, documents) << "restored, and the file is not read again";
  second.Stop();
  std::vector<Transition> after = ReadAlertTopic("reader-2");
  EXPECT_EQ(after.size(), before.size()) << "a restart emits no transition again";
}

// A webhook receiver that is down and a log file on a full disk: alerting goes on, and
// the operator sees every failure in /metrics and /api/v1/status next to what the Kafka
// sink delivered.
TEST_F(KafkaAlertDaemon, SinkFailuresAreCountedInMetricsAndStatus) {
  Config config = DaemonConfig();
  config.checkpoint.dir.clear();
  config.alerts.webhook_url = "http://127.0.0.1:" + std::to_string(test::ClosedPort()) + "/hook";
  config.alerts.webhook_retries = 1;
  config.alerts.log_file = "/dev/full";
  SystemClock clock;
  Daemon daemon(config, signatures_.get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  HttpServer server;
  ASSERT_TRUE(server.Start(options, daemon).ok());

  // The planted alerts fire: pending, then firing, four transitions for each sink.
  auto sample = [](const std::string& metrics, const std::string& name, const std::string& sink) -> int64_t {
    const std::string prefix = name + "{sink=\"" + sink + "\"} ";
    const size_t at = metrics.find(prefix);
    return at == std::string::npos ? -1 : std::stoll(metrics.substr(at + prefix.size()));
  };
  std::string metrics;
  const auto deadline = std::chrono::steady_clock::now() + Patience(seconds(60));
  while (std::chrono::steady_clock::now() < deadline) {
    metrics = testing::HttpGet(server.port(), "/metrics").body;
    if (sample(metrics, "seismo_alert_sink_failed_total", "webhook") >= 4 &&
        sample(metrics, "seismo_alert_sink_sent_total", "kafka") >= 4) {
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_NE(metrics.find("# TYPE seismo_alert_sink_failed_total counter\n"), std::string::npos);
  EXPECT_EQ(sample(metrics, "seismo_alert_sink_sent_total", "webhook"), 0) << metrics;
  EXPECT_GE(sample(metrics, "seismo_alert_sink_failed_total", "webhook"), 4) << metrics;
  EXPECT_GE(sample(metrics, "seismo_alert_sink_retries_total", "webhook"), 4) << metrics;
  EXPECT_EQ(sample(metrics, "seismo_alert_sink_sent_total", "file"), 0) << metrics;
  EXPECT_GE(sample(metrics, "seismo_alert_sink_failed_total", "file"), 4) << metrics;
  EXPECT_GE(sample(metrics, "seismo_alert_sink_sent_total", "kafka"), 4) << metrics;
  EXPECT_EQ(sample(metrics, "seismo_alert_sink_failed_total", "kafka"), 0) << metrics;

  simdjson::dom::parser parser;
  const std::string status = testing::HttpGet(server.port(), "/api/v1/status").body;
  simdjson::dom::element sinks = parser.parse(status)["alert_sinks"];
  EXPECT_GE(uint64_t(sinks["webhook"]["failed"]), 4u) << status;
  EXPECT_GE(uint64_t(sinks["webhook"]["retried"]), 4u) << status;
  EXPECT_GE(uint64_t(sinks["file"]["failed"]), 4u) << status;
  EXPECT_GE(uint64_t(sinks["kafka"]["sent"]), 4u) << status;
  EXPECT_FALSE(daemon.alerts_json().empty());
  server.Stop();
  daemon.Stop();
}

}  // namespace
}  // namespace seismo
