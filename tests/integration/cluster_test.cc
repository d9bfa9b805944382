// More than one instance (SPEC §9, ADR 0024): daemons in one consumer group with
// [cluster] aggregates_topic. Each publishes its partitions' state to the aggregates topic
// and serves the global view read back from it; a partition that moves is restored from
// the topic by its new owner. What every instance ends with equals `seismo replay` of the
// whole corpus: nothing lost, nothing counted twice. Against librdkafka's mock cluster
// (MockCluster*) and the real broker (KafkaCluster*).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "integration/daemon_process.h"
#include "integration/real_kafka.h"
#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/core/hash.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/kafka_topic_reader.h"
#include "seismo/ingest/mock_cluster.h"
#include "seismo/signature/generator.h"
#include "seismo/sim/scenario.h"
#include "seismo/sim/synth.h"
#include "support/wait_for.h"
#include "test_scale.h"
#include "unit/http/http_client.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 3;

class ClusterTest : public ::testing::Test {
 protected:
  // Sets bootstrap_, group_, topics_ (main, bhr, crash) and aggregates_, each topic made.
  virtual void UseCluster() = 0;

  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-cluster-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto gen = SignatureGenerator::LoadDefault();
    ASSERT_TRUE(gen);
    signatures_ = std::move(*gen);
    UseCluster();
  }
  void TearDown() override { fs::remove_all(dir_); }

  Config InstanceConfig(const std::string& id) const {
    Config c;
    c.kafka.brokers = bootstrap_;
    c.kafka.group_id = group_;
    c.kafka.topics = topics_;
    c.kafka.properties = {{"session.timeout.ms", session_timeout_ms_}, {"heartbeat.interval.ms", "500"}};
    c.ingest.threads = 1;
    c.aggregate.shards = 2;
    c.shutdown_timeout = seconds(30);
    c.cluster.aggregates_topic = aggregates_;
    c.cluster.instance_id = id;
    c.cluster.publish_interval = milliseconds(200);
    return c;
  }

  // A generated corpus spread over the partitions; a copy on disk for replay. Then `again`
  // copies of earlier rounds' crashes (newest first), each to the partition its original
  // went to: a cluster counts each once however its partitions moved since (ADR 0024,
  // "Crash ids"), as replay of the whole corpus does.
  void Produce(uint64_t seed, size_t main, size_t bhr, size_t crash, size_t again = 0) {
    KafkaProducerOptions po;
    po.brokers = bootstrap_;
    auto producer = KafkaProducer::Create(po);
    ASSERT_TRUE(producer);
    SynthOptions so;
    so.seed = seed;
    Synth synth(so);
    std::ofstream file(dir_ / "corpus.ndjson", std::ios::app);
    auto send = [&](const std::string& topic, const std::string& doc,
                    std::optional<int32_t> to = std::nullopt) {
      const int32_t partition = to.value_or(static_cast<int32_t>(produced_ % kPartitions));
      EXPECT_TRUE((*producer)->Produce(topic, "", doc, partition).ok());
      file << doc << "\n";
      ++produced_;
      return partition;
    };
    // Indices apart per seed: no crash id repeats across rounds (copies of one crash in two
    // partitions count twice in a cluster: ADR 0024), and none is dated in the future.
    const size_t base = seed * 1000;
    for (size_t i = 0; i < main; ++i) {
      send(topics_[0], synth.Main(base + i));
      if (i % 50 == 0) send(topics_[0], "{not json");  // rejected: the header counts it
    }
    for (size_t i = 0; i < bhr; ++i) send(topics_[1], synth.Bhr(base + i));
    const std::vector<std::pair<int32_t, std::string>> earlier = crashes_;
    for (size_t i = 0; i < crash; ++i) {
      std::string doc = synth.ProcessedCrash(base + i);
      const int32_t partition = send(topics_[2], doc);
      crashes_.emplace_back(partition, std::move(doc));
    }
    for (size_t i = 0; i < again && i < earlier.size(); ++i) {
      const auto& [partition, doc] = earlier[earlier.size() - 1 - i];
      send(topics_[2], doc, partition);
    }
    ASSERT_TRUE((*producer)->Flush(seconds(60)).ok());
  }

  // No record of the aggregates topic was rejected by the daemon's view: every publish was
  // whole (a rejected record would have its partition rebuilt from its source, which hides
  // what a restore from the topic got wrong).
  static void ExpectNothingRejected(const Daemon& d) {
    for (const auto& [reason, n] : d.status().cluster.rejected) EXPECT_EQ(n, 0u) << reason;
  }

  // The source offsets the daemon's global view holds, summed: the documents it includes.
  static int64_t ViewOffsets(const Daemon& d) {
    int64_t n = 0;
    for (const ClusterStatus::Partition& p : d.status().cluster.partitions) n += p.source_offset;
    return n;
  }
  // Waits until the daemon's published view includes every document produced.
  bool WaitForView(const Daemon& d) const {
    return test::WaitFor(
        [&] {
          auto snap = d.snapshot();
          return ViewOffsets(d) == static_cast<int64_t>(produced_) && snap && snap->built_at_ms > 0;
        },
        seconds(120));
  }

  // An output without its alerts (which the alert tests compare on their own): the header's
  // record counts and every aggregate, what a global view holds.
  static std::string Aggregates(const std::string& json) {
    return json.substr(0, json.rfind(",\"alerts\":"));
  }
  std::string Replay() const {
    Config c;
    auto r = RunReplay(c, {(dir_ / "corpus.ndjson").string()}, signatures_.get(), {});
    EXPECT_TRUE(r);
    return Aggregates(ReplayOutputJson(*r->snapshot, r->counts));
  }
  static std::string View(const Daemon& d) { return Aggregates(ReplayOutputJson(*d.snapshot(), d.counts())); }

  // Three instances consume while the corpus is produced; one leaves mid-stream and the
  // others take its partitions over from the aggregates topic; a fourth joins at the end.
  // Every instance's view equals replay of the whole corpus. Each instance sweeps its intern
  // tables whenever they doubled, from the first barrier on (its view and ledger marked).
  void ThreeInstancesThroughALeaveAndALateJoin() {
    SystemClock clock;
    Daemon a(InstanceConfig("a"), signatures_.get(), &clock);
    Daemon b(InstanceConfig("b"), signatures_.get(), &clock);
    Daemon c(InstanceConfig("c"), signatures_.get(), &clock);
    for (Daemon* x : {&a, &b, &c}) x->SetSweepFloorForTesting(1);
    ASSERT_TRUE(a.Start().ok());
    Produce(1, 300, 100, 60);
    ASSERT_TRUE(b.Start().ok());
    ASSERT_TRUE(c.Start().ok());
    Produce(2, 300, 100, 60);
    ASSERT_TRUE(WaitForView(a)) << ViewOffsets(a) << " of " << produced_;
    EXPECT_EQ(View(a), Replay());
    b.Stop();  // leaves: its partitions go to a and c, restored from the topic
    Produce(3, 300, 100, 60);
    ASSERT_TRUE(WaitForView(a)) << ViewOffsets(a) << " of " << produced_;
    ASSERT_TRUE(WaitForView(c)) << ViewOffsets(c) << " of " << produced_;
    const std::string replay = Replay();
    EXPECT_EQ(View(a), replay);
    EXPECT_EQ(View(c), replay);
    Daemon d(InstanceConfig("d"), signatures_.get(), &clock);
    d.SetSweepFloorForTesting(1);
    ASSERT_TRUE(d.Start().ok());
    ASSERT_TRUE(WaitForView(d)) << ViewOffsets(d) << " of " << produced_;
    EXPECT_EQ(View(d), replay) << "a late joiner catches up to the same view";
    for (Daemon* x : {&a, &c, &d}) x->Stop();
    for (Daemon* x : {&a, &c, &d}) EXPECT_EQ(View(*x), replay) << x->config().cluster.instance_id;
    EXPECT_GT(a.SweepsForTesting(), 0u) << "the intern tables were never swept";
  }

  // Partitions that come back: a holds them all, gives some to b when it joins, and takes
  // them back when b leaves, with what b counted meanwhile (from the topic, not from a's
  // older state of them).
  void PartitionsThatComeBackAreRestoredWithWhatTheirOtherOwnerCounted() {
    SystemClock clock;
    Daemon a(InstanceConfig("a"), signatures_.get(), &clock);
    ASSERT_TRUE(a.Start().ok());
    Produce(11, 200, 60, 40);
    ASSERT_TRUE(WaitForView(a)) << ViewOffsets(a) << " of " << produced_;
    {
      Daemon b(InstanceConfig("b"), signatures_.get(), &clock);
      ASSERT_TRUE(b.Start().ok());
      ASSERT_TRUE(test::WaitFor([&] { return b.status().consuming; }, seconds(60)))
          << "b was given no partition";
      Produce(12, 200, 60, 40, /*again=*/30);  // crashes a counted, some now b's
      ASSERT_TRUE(WaitForView(b)) << ViewOffsets(b) << " of " << produced_;
      b.Stop();  // its partitions go back to a
    }
    Produce(13, 200, 60, 40, /*again=*/60);  // crashes b counted, now a's
    ASSERT_TRUE(WaitForView(a)) << ViewOffsets(a) << " of " << produced_;
    a.Stop();
    EXPECT_EQ(View(a), Replay());
    ExpectNothingRejected(a);
  }

  // Every instance stopped, then started again: they resume from the topic alone (no
  // [checkpoint] dir), nothing lost or counted twice.
  void AllInstancesRestartedAtOnce() {
    SystemClock clock;
    Produce(4, 300, 100, 60);
    {
      Daemon a(InstanceConfig("a"), signatures_.get(), &clock);
      Daemon b(InstanceConfig("b"), signatures_.get(), &clock);
      ASSERT_TRUE(a.Start().ok());
      ASSERT_TRUE(b.Start().ok());
      ASSERT_TRUE(WaitForView(a)) << ViewOffsets(a) << " of " << produced_;
      a.Stop();
      b.Stop();
    }
    Produce(5, 300, 100, 60);
    Daemon a(InstanceConfig("a"), signatures_.get(), &clock);
    Daemon b(InstanceConfig("b"), signatures_.get(), &clock);
    ASSERT_TRUE(a.Start().ok());
    ASSERT_TRUE(b.Start().ok());
    ASSERT_TRUE(WaitForView(b)) << ViewOffsets(b) << " of " << produced_;
    a.Stop();
    b.Stop();
    EXPECT_EQ(View(b), Replay()) << "nothing lost or counted twice across the restart";
  }

  // A corrupt record and one of an unknown version in the aggregates topic, each under a key
  // of a partition an instance owns: counted by reason and reported as degraded, never a
  // crash; the owner publishes the partition again, which heals the view.
  void BadRecordsAreCountedSkippedAndHealedByTheOwner() {
    SystemClock clock;
    Daemon a(InstanceConfig("a"), signatures_.get(), &clock);
    Daemon b(InstanceConfig("b"), signatures_.get(), &clock);
    ASSERT_TRUE(a.Start().ok());
    ASSERT_TRUE(b.Start().ok());
    Produce(6, 300, 100, 60);
    ASSERT_TRUE(WaitForView(a)) << ViewOffsets(a) << " of " << produced_;
    const std::string replay = Replay();
    ASSERT_EQ(View(a), replay);

    KafkaProducerOptions po;
    po.brokers = bootstrap_;
    auto producer = KafkaProducer::Create(po);
    ASSERT_TRUE(producer);
    // Where the owner writes the partition's records, so the healing record comes after.
    auto to = [](const std::string& topic, int partition) {
      return static_cast<int32_t>(Hash64(topic + "/" + std::to_string(partition)) % 2);
    };
    // A whole header (29 bytes) of version 99: a newer writer's.
    const std::string unknown_version =
        std::string("SEISMOAG") + std::string("\x63\0\0\0", 4) + std::string(40, '\1');
    ASSERT_TRUE((*producer)
                    ->Produce(aggregates_, "p/" + topics_[0] + "/0/1/0", "not a record", to(topics_[0], 0))
                    .ok());
    ASSERT_TRUE((*producer)
                    ->Produce(aggregates_, "p/" + topics_[1] + "/1/1/0", unknown_version, to(topics_[1], 1))
                    .ok());
    ASSERT_TRUE((*producer)->Flush(seconds(30)).ok());

    auto rejected = [&](const Daemon& d, const std::string& reason) {
      for (const auto& [r, n] : d.status().cluster.rejected)
        if (r == reason) return n;
      return uint64_t{0};
    };
    EXPECT_TRUE(test::WaitFor(
        [&] { return rejected(a, "corrupt") >= 1 && rejected(a, "unknown_version") >= 1; }, seconds(60)))
        << rejected(a, "corrupt") << " corrupt, " << rejected(a, "unknown_version") << " unknown_version";
    // Healed: the owners published the partitions again; no partition is degraded.
    auto degraded = [&](const Daemon& d) {
      size_t n = 0;
      for (const ClusterStatus::Partition& p : d.status().cluster.partitions) n += p.degraded ? 1 : 0;
      return n;
    };
    EXPECT_TRUE(test::WaitFor([&] { return degraded(a) == 0 && degraded(b) == 0; }, seconds(60)))
        << degraded(a) << " and " << degraded(b) << " degraded partitions";
    Produce(7, 100, 30, 20);
    ASSERT_TRUE(WaitForView(b)) << ViewOffsets(b) << " of " << produced_;
    EXPECT_EQ(View(b), Replay());
    a.Stop();
    b.Stop();
  }

  // Alerts are evaluated by one instance, the holder of the first topic's partition 0, on
  // the global view; when it leaves, the next holder goes on from the state it published.
  // Across the cluster each transition is sent once.
  // A `seismo run` process of the cluster (not started), configured in its own directory:
  // `extra` sections and `properties` (lines of [kafka.properties]) added.
  std::unique_ptr<testing::DaemonProcess> Process(const std::string& id, const std::string& publish_interval,
                                                  const std::string& extra,
                                                  const std::string& properties = "") {
    const fs::path dir = dir_ / id;
    fs::create_directories(dir);
    std::ofstream(dir / "seismo.toml")
        << "[kafka]\nbrokers = \"" << bootstrap_ << "\"\ngroup_id = \"" << group_ << "\"\ntopics = [\""
        << topics_[0] << "\", \"" << topics_[1] << "\", \"" << topics_[2] << "\"]\n"
        << "[kafka.properties]\n\"session.timeout.ms\" = \"6000\"\n\"heartbeat.interval.ms\" = \"500\"\n"
        << properties << "[ingest]\nthreads = 1\nshutdown_timeout = \"30s\"\n[aggregate]\nshards = 2\n"
        << extra << "[cluster]\naggregates_topic = \"" << aggregates_ << "\"\ninstance_id = \"" << id
        << "\"\npublish_interval = \"" << publish_interval << "\"\n[http]\nlisten = \"127.0.0.1:0\"\n";
    return std::make_unique<testing::DaemonProcess>(dir);
  }

  // The source offsets a `seismo run` process's /api/v1/status lists, summed: the documents
  // its global view includes.
  static int64_t StatusOffsets(int port) {
    const testing::HttpResponse r = testing::HttpGet(port, "/api/v1/status");
    int64_t n = 0;
    for (size_t at = r.body.find("\"offset\":"); at != std::string::npos;
         at = r.body.find("\"offset\":", at + 1))
      n += std::stoll(r.body.substr(at + 9));
    return n;
  }

  static std::string Tail(const std::string& log) {
    return log.substr(log.size() - std::min<size_t>(log.size(), 4000));
  }

  // A scenario whose alerts fire (a signature spike, a new signature), to the first topic.
  void ProduceAlertScenario() {
    ScenarioOptions so;
    so.seed = 3;
    so.plants = kPlantSignatureSpike | kPlantNewSignature;
    so.usage_per_hour = 100;
    so.crashes_per_usage_hour = 0.2;
    so.hangs_per_usage_hour = 0.2;
    Scenario scenario(so);
    KafkaProducerOptions po;
    po.brokers = bootstrap_;
    auto producer = KafkaProducer::Create(po);
    ASSERT_TRUE(producer);
    std::ofstream file(dir_ / "corpus.ndjson");
    scenario.ForEachDocument([&](std::string&& doc) {
      ASSERT_TRUE(
          (*producer)->Produce(topics_[0], "", doc, static_cast<int32_t>(produced_ % kPartitions)).ok());
      file << doc << "\n";
      ++produced_;
    });
    ASSERT_TRUE((*producer)->Flush(seconds(60)).ok());
  }

  void AlertsAreSentOnceAcrossTheClusterThroughAHandOver() {
    ProduceAlertScenario();
    ASSERT_FALSE(HasFatalFailure());
    auto config = [&](const std::string& id) {
      Config c = InstanceConfig(id);
      c.cluster.publish_interval = seconds(1);  // each publish encodes the state: a bigger corpus
      c.alerts.interval = milliseconds(100);
      c.alerts.kafka_topic = alert_topic_;
      return c;
    };
    SystemClock clock;
    Daemon a(config("a"), signatures_.get(), &clock);
    Daemon b(config("b"), signatures_.get(), &clock);
    ASSERT_TRUE(a.Start().ok());
    ASSERT_TRUE(b.Start().ok());
    ASSERT_TRUE(WaitForView(a)) << ViewOffsets(a) << " of " << produced_;
    auto firing = [](const Daemon& d) { return d.alerts_json().find("\"firing\"") != std::string::npos; };
    ASSERT_TRUE(test::WaitFor([&] { return firing(a) || firing(b); }, seconds(60))) << "no alert fired";
    EXPECT_FALSE(firing(a) && firing(b)) << "only the holder evaluates";
    Daemon& holder = firing(a) ? a : b;
    Daemon& other = firing(a) ? b : a;
    const uint64_t rounds = other.AlertRoundsForTesting();
    holder.Stop();  // the partition, and the alerts with it, go to the other
    ASSERT_TRUE(test::WaitFor([&] { return other.AlertRoundsForTesting() > rounds + 5; }, seconds(60)))
        << "the other instance never took the alerts over";
    EXPECT_TRUE(firing(other)) << "the alerts it took over are still firing";
    other.Stop();

    // Every transition sent to the alert topic, by (key, state): each once.
    KafkaTopicReaderOptions ro{bootstrap_, {}};
    auto reader = KafkaTopicReader::Create(ro);
    ASSERT_TRUE(reader);
    ASSERT_TRUE((*reader)->Assign(alert_topic_, {}, seconds(30)).ok());
    std::map<std::string, int> sent;
    size_t transitions = 0;
    ASSERT_TRUE(test::WaitFor(
        [&] {
          auto n = (*reader)->Poll(milliseconds(100), [&](const KafkaTopicRecord& r) {
            const std::string value(r.value.value_or(""));
            const size_t state = value.find("\"state\":");
            ++sent[std::string(r.key) + " " + value.substr(state, value.find(',', state) - state)];
            ++transitions;
          });
          return n && (*reader)->AtEnd();
        },
        seconds(60)));
    EXPECT_GT(transitions, 0u);
    for (const auto& [transition, n] : sent) EXPECT_EQ(n, 1) << transition;
  }

  // Two `seismo run` processes with an alert file each; the alerts' holder is SIGKILLed a few
  // rounds after alerts fired, long before its next publish of the aggregates. The other
  // takes the alerts over from the state the holder committed in its rounds (ADR 0024,
  // "Alerts": the outbox): across both files each transition is there once, none lost, none
  // repeated. (A kill between a send and the commit right after it would repeat that send:
  // the unit tests AlertOutbox.* cover the kill between the commit and the send.)
  void AlertsAreSentOnceAcrossASigkillOfTheirHolder() {
    ProduceAlertScenario();
    ASSERT_FALSE(HasFatalFailure());
    std::vector<std::unique_ptr<testing::DaemonProcess>> d;
    for (const char* id : {"a", "b"}) {
      const fs::path dir = dir_ / id;
      d.push_back(Process(
          id, "4s",
          "[alerts]\ninterval = \"100ms\"\nlog_file = \"" + (dir / "alerts.ndjson").string() + "\"\n"));
    }
    for (auto& p : d) {
      p->Start();
      ASSERT_FALSE(HasFatalFailure());
    }
    auto file = [&](size_t i) { return testing::Slurp(d[i]->config().parent_path() / "alerts.ndjson"); };
    auto rounds = [&](size_t i) {
      const std::string body = testing::HttpGet(d[i]->http_port(), "/api/v1/status").body;
      const size_t at = body.find("\"alert_rounds\":");
      return at == std::string::npos ? uint64_t{0} : std::stoull(body.substr(at + 15));
    };
    size_t holder = 0;
    ASSERT_TRUE(test::WaitFor(
        [&] {
          for (size_t i : {0u, 1u}) {
            if (file(i).find("\"state\":\"firing\"") != std::string::npos) holder = i;
          }
          return file(holder).find("\"state\":\"firing\"") != std::string::npos;
        },
        seconds(180)))
        << "no alert fired;\na's log ends:\n"
        << Tail(d[0]->log()) << "\nb's log ends:\n"
        << Tail(d[1]->log());
    const size_t other = 1 - holder;
    // A few rounds after the firing (by whichever instance holds the alerts now: a rebalance
    // under load may have moved them), so its sends have been committed as delivered.
    const uint64_t fired = rounds(0) + rounds(1);
    ASSERT_TRUE(test::WaitFor([&] { return rounds(0) + rounds(1) > fired + 3; }, seconds(90)))
        << "no alert round ran;\na's log ends:\n"
        << Tail(d[0]->log()) << "\nb's log ends:\n"
        << Tail(d[1]->log());
    EXPECT_EQ(d[holder]->Signal(SIGKILL, seconds(10)), -SIGKILL);
    const uint64_t before = rounds(other);
    ASSERT_TRUE(test::WaitFor([&] { return rounds(other) > before + 20; }, seconds(90)))
        << "the other instance never took the alerts over:\n"
        << d[other]->log();
    EXPECT_EQ(d[other]->Signal(SIGTERM, seconds(60)), 0) << d[other]->log();

    // Every transition in either file, by key and states: each once.
    std::map<std::string, int> sent;
    auto field = [](const std::string& line, const std::string& name) {
      const std::string tag = "\"" + name + "\":\"";
      const size_t at = line.find(tag);
      return at == std::string::npos
                 ? std::string()
                 : line.substr(at + tag.size(), line.find('"', at + tag.size()) - at - tag.size());
    };
    size_t transitions = 0;
    for (size_t i : {0u, 1u}) {
      std::istringstream lines(file(i));
      for (std::string line; std::getline(lines, line);) {
        std::string id;
        for (const char* name :
             {"rule", "channel", "os", "build", "signature", "scope", "previous_state", "state"})
          id += field(line, name) + "|";
        ++sent[id];
        ++transitions;
      }
    }
    EXPECT_GT(transitions, 1u);
    for (const auto& [transition, n] : sent) EXPECT_EQ(n, 1) << transition;
  }

  // Three `seismo run` processes; one is SIGKILLed mid-stream, its documents since its last
  // publish unpublished. The survivors take its partitions over from the topic and read on
  // from the offsets the topic holds; each survivor's --output equals replay.
  void ASigkilledInstancesPartitionsAreTakenOverWithNothingLostOrCountedTwice() {
    std::vector<std::unique_ptr<testing::DaemonProcess>> d;
    for (const char* id : {"a", "b", "c"})
      d.push_back(Process(id, "200ms", "", "\"max.partition.fetch.bytes\" = \"20000\"\n"));
    for (auto& p : d) {
      p->Start();
      ASSERT_FALSE(HasFatalFailure());
    }
    Produce(8, 400, 120, 80);
    // b has published some of its partitions' documents: then it dies without a word.
    ASSERT_TRUE(
        test::WaitFor([&] { return d[1]->log().find("kafka: assigned") != std::string::npos; }, seconds(60)));
    Produce(9, 200, 60, 40);
    EXPECT_EQ(d[1]->Signal(SIGKILL, seconds(10)), -SIGKILL);
    Produce(10, 400, 120, 80, /*again=*/120);  // among them crashes b counted
    const int port = d[0]->http_port();
    auto view_offsets = [&] { return StatusOffsets(port); };
    EXPECT_TRUE(
        test::WaitFor([&] { return view_offsets() == static_cast<int64_t>(produced_); }, seconds(120)))
        << view_offsets() << " of " << produced_
        << "; a's status: " << testing::HttpGet(port, "/api/v1/status").body << "\na's log ends:\n"
        << Tail(d[0]->log());
    const std::string replay = Replay();
    for (size_t i : {0u, 2u}) {
      EXPECT_EQ(d[i]->Signal(SIGTERM, seconds(60)), 0) << d[i]->log();
      EXPECT_EQ(Aggregates(testing::Slurp(d[i]->output())), replay) << "instance " << i;
    }
  }

  // An instance suspended (SIGSTOP) past its session loses its partitions to the others
  // without knowing; resumed (SIGCONT), it is a zombie until its consumer learns it: a publish
  // it makes meanwhile carries an older generation's membership, which the group refuses, so
  // none of its stale records reaches the topic (ADR 0024, "Zombies"). Every instance's
  // output at the end equals replay of the whole corpus.
  void ASuspendedInstanceComesBackAsAZombieAndPublishesNothingStale() {
    // b publishes rarely: when it is suspended it holds documents it has not published, and
    // when it resumes its next publish is due at once, likely before its consumer has
    // learnt that its partitions are gone.
    std::vector<std::unique_ptr<testing::DaemonProcess>> d;
    for (const char* id : {"a", "b", "c"})
      d.push_back(Process(id, std::string(id) == "b" ? "15s" : "100ms", ""));
    for (auto& p : d) {
      p->Start();
      ASSERT_FALSE(HasFatalFailure());
    }
    Produce(14, 300, 90, 60);
    ASSERT_TRUE(test::WaitFor(
        [&] {
          const std::string m = testing::HttpGet(d[1]->http_port(), "/metrics").body;
          return m.find("\nseismo_consumer_consuming 1") != std::string::npos &&
                 m.find("\nseismo_consumer_lag 0\n") != std::string::npos;
        },
        seconds(60)))
        << "b did not read its partitions to their end";
    ASSERT_EQ(::kill(d[1]->pid(), SIGSTOP), 0);
    Produce(15, 300, 90, 60, /*again=*/60);
    auto view_offsets = [&](size_t i) { return StatusOffsets(d[i]->http_port()); };
    // a and c took b's partitions over and read them to the end.
    EXPECT_TRUE(
        test::WaitFor([&] { return view_offsets(0) == static_cast<int64_t>(produced_); }, seconds(120)))
        << view_offsets(0) << " of " << produced_ << "; a's log ends:\n"
        << Tail(d[0]->log());
    ASSERT_EQ(::kill(d[1]->pid(), SIGCONT), 0);
    Produce(16, 200, 60, 40, /*again=*/40);
    for (size_t i : {0u, 1u, 2u}) {
      EXPECT_TRUE(
          test::WaitFor([&] { return view_offsets(i) == static_cast<int64_t>(produced_); }, seconds(120)))
          << "instance " << i << ": " << view_offsets(i) << " of " << produced_ << "; its log ends:\n"
          << Tail(d[i]->log());
    }
    // b saw that it had stood still (StallGuard): its barriers waited until its consumer knew what it owned.
    EXPECT_NE(d[1]->log().find("this process did not run for"), std::string::npos) << Tail(d[1]->log());
    const std::string b_status = testing::HttpGet(d[1]->http_port(), "/api/v1/status").body;
    const std::string a_status = testing::HttpGet(d[0]->http_port(), "/api/v1/status").body;
    EXPECT_NE(a_status.find(R"("rejected":{"corrupt":0,"truncated":0,"unknown_version":0,"key_mismatch":0})"),
              std::string::npos)
        << a_status;
    const std::string replay = Replay();
    for (size_t i : {0u, 1u, 2u}) {
      EXPECT_EQ(d[i]->Signal(SIGTERM, seconds(60)), 0) << d[i]->log();
      EXPECT_EQ(Aggregates(testing::Slurp(d[i]->output())), replay)
          << "instance " << i << "; b's status: " << b_status << "\nits log ends:\n"
          << Tail(d[i]->log());
    }
  }

  fs::path dir_;
  std::string bootstrap_;
  std::string group_ = "seismo-cluster";
  std::vector<std::string> topics_;
  std::string aggregates_;
  std::string alert_topic_;
  // The mock's group waits a member's session out when it rebalances; the real broker's JVM
  // has gone 6 s without answering heartbeats under CI's load (KafkaDaemon).
  std::string session_timeout_ms_ = "6000";
  std::unique_ptr<SignatureGenerator> signatures_;
  uint64_t produced_ = 0;
  std::vector<std::pair<int32_t, std::string>> crashes_;  // (partition, document) produced
};

class MockClusterMode : public ClusterTest {
 protected:
  void UseCluster() override {
    auto cluster = MockCluster::Create(1);
    ASSERT_TRUE(cluster) << cluster.error().message();
    cluster_ = std::move(*cluster);
    bootstrap_ = cluster_->bootstrap_servers();
    topics_ = {"telemetry.main", "telemetry.bhr", "socorro.processed"};
    aggregates_ = "seismo.aggregates";
    alert_topic_ = "seismo.alerts";
    ASSERT_TRUE(cluster_->CreateTopic(alert_topic_, 1).ok());
    for (const std::string& t : topics_) ASSERT_TRUE(cluster_->CreateTopic(t, kPartitions).ok());
    ASSERT_TRUE(cluster_->CreateTopic(aggregates_, 2).ok());
  }
  std::unique_ptr<MockCluster> cluster_;
};

class KafkaClusterMode : public ClusterTest {
 protected:
  void UseCluster() override {
    testing::RealKafka* kafka = testing::RealKafka::Get();
    ASSERT_NE(kafka, nullptr);
    bootstrap_ = kafka->bootstrap_servers();
    group_ = testing::RealKafka::UniqueName("seismo-cluster");
    session_timeout_ms_ = "30000";
    for (const char* t : {"telemetry.main", "telemetry.bhr", "socorro.processed"}) {
      topics_.push_back(testing::RealKafka::UniqueName(t));
      ASSERT_TRUE(kafka->CreateTopic(topics_.back(), kPartitions).ok());
    }
    aggregates_ = testing::RealKafka::UniqueName("seismo.aggregates");
    alert_topic_ = testing::RealKafka::UniqueName("seismo.alerts");
    ASSERT_TRUE(kafka->CreateTopic(alert_topic_, 1).ok());
    ASSERT_TRUE(kafka->CreateTopic(aggregates_, 2, 1, {{"cleanup.policy", "compact"}}).ok());
  }
};

TEST_F(MockClusterMode, ThreeInstancesServeOneExactGlobalViewThroughALeaveAndALateJoin) {
  ThreeInstancesThroughALeaveAndALateJoin();
}
TEST_F(MockClusterMode, AllInstancesRestartedAtOnceResumeFromTheTopic) { AllInstancesRestartedAtOnce(); }
TEST_F(MockClusterMode, PartitionsThatComeBackAreRestoredWithWhatTheirOtherOwnerCounted) {
  PartitionsThatComeBackAreRestoredWithWhatTheirOtherOwnerCounted();
}
TEST_F(KafkaClusterMode, PartitionsThatComeBackAreRestoredWithWhatTheirOtherOwnerCounted) {
  PartitionsThatComeBackAreRestoredWithWhatTheirOtherOwnerCounted();
}
TEST_F(MockClusterMode, BadRecordsAreCountedSkippedAndHealedByThePartitionsOwner) {
  BadRecordsAreCountedSkippedAndHealedByTheOwner();
}
TEST_F(KafkaClusterMode, BadRecordsAreCountedSkippedAndHealedByThePartitionsOwner) {
  BadRecordsAreCountedSkippedAndHealedByTheOwner();
}
// (Not on the mock: it keeps at most 5 MiB per partition, and the scenario's aggregates
// outgrow that, so it drops the oldest records.)
TEST_F(KafkaClusterMode, AlertsAreSentOnceAcrossTheClusterThroughAHandOver) {
  AlertsAreSentOnceAcrossTheClusterThroughAHandOver();
}
TEST_F(KafkaClusterMode, AlertsAreSentOnceAcrossASigkillOfTheirHolder) {
  AlertsAreSentOnceAcrossASigkillOfTheirHolder();
}
TEST_F(KafkaClusterMode, ASigkilledInstancesPartitionsAreTakenOverWithNothingLostOrCountedTwice) {
  ASigkilledInstancesPartitionsAreTakenOverWithNothingLostOrCountedTwice();
}
TEST_F(MockClusterMode, ASigkilledInstancesPartitionsAreTakenOverWithNothingLostOrCountedTwice) {
  ASigkilledInstancesPartitionsAreTakenOverWithNothingLostOrCountedTwice();
}
TEST_F(KafkaClusterMode, ASuspendedInstanceComesBackAsAZombieAndPublishesNothingStale) {
  ASuspendedInstanceComesBackAsAZombieAndPublishesNothingStale();
}
TEST_F(MockClusterMode, ASuspendedInstanceComesBackAsAZombieAndPublishesNothingStale) {
  ASuspendedInstanceComesBackAsAZombieAndPublishesNothingStale();
}
TEST_F(KafkaClusterMode, ThreeInstancesServeOneExactGlobalViewThroughALeaveAndALateJoin) {
  ThreeInstancesThroughALeaveAndALateJoin();
}
TEST_F(KafkaClusterMode, AllInstancesRestartedAtOnceResumeFromTheTopic) { AllInstancesRestartedAtOnce(); }

}  // namespace
}  // namespace seismo
