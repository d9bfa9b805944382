// KafkaRunTest: the real `seismo run` (tests/integration/daemon_process.h)
// consuming topics of a real Kafka cluster (integration/real_kafka.h), with
// checkpoints, and what it must end with: the output of `seismo replay` over
// the same documents, which the fixture keeps in a corpus file as it produces
// them.
//
// Topic and group names are unique to the test (the one-node cluster is
// shared by every Kafka* test). Every wait is bounded.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "integration/daemon_process.h"
#include "integration/real_kafka.h"
#include "seismo/app/replay.h"
#include "seismo/sim/synth.h"
#include "seismo/checkpoint/checkpoint.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/signature/generator.h"
#include "test_scale.h"
#include "unit/http/http_client.h"

namespace seismo::testing {

class KafkaRunTest : public ::testing::Test {
 protected:
  static constexpr int kPartitions = 2;
  // A SIGTERM ends the daemon within this. The stop waits on the broker (the revoke's commit,
  // leaving the group): just after a broker's restart, with the group coordinator still
  // loading, a Release daemon's stop overran 8 s (four fifths of it) in a CI run; 16 s in
  // every build, as under a sanitizer.
  static constexpr auto kShutdownTimeout = std::chrono::seconds(16);

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("seismo-kafka-run-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    daemon_ = std::make_unique<DaemonProcess>(dir_);
    group_ = RealKafka::UniqueName("seismo");
    for (const char* base : {"telemetry.main", "telemetry.bhr", "socorro.processed"}) {
      topics_.push_back(RealKafka::UniqueName(base));
    }
  }
  void TearDown() override {
    daemon_.reset();  // kills a daemon a failed test left running
    std::filesystem::remove_all(dir_);
  }

  // The cluster of `brokers` nodes and the test's topics on it (replication factor
  // `replication`, `configs` per topic). False (the test failed) without a cluster.
  bool UseCluster(int brokers, int replication = 1, const std::map<std::string, std::string>& configs = {}) {
    kafka_ = RealKafka::Get(brokers);
    if (kafka_ == nullptr) return false;
    for (const std::string& t : topics_) {
      Status s = kafka_->CreateTopic(t, kPartitions, replication, configs);
      EXPECT_TRUE(s.ok()) << s.message();
      if (!s.ok()) return false;
    }
    return true;
  }

  // Generated documents of every kind (crash pings share the crash topic), spread over the
  // partitions, each also appended to the corpus file. The producer is idempotent: a
  // broker that dies before acknowledging makes it retry without writing twice. `pace` > 0
  // sleeps that long after every 10 documents: a live stream, which a broker's death
  // interrupts whatever the machine's speed (the producer buffers and retries meanwhile).
  void Produce(uint64_t seed, size_t main, size_t bhr, size_t crash, size_t crash_pings,
               std::chrono::milliseconds pace = std::chrono::milliseconds(0)) {
    KafkaProducerOptions po;
    po.brokers = kafka_->bootstrap_servers();
    po.properties = {{"enable.idempotence", "true"}};
    auto producer = KafkaProducer::Create(po);
    ASSERT_TRUE(producer) << producer.error().message();
    SynthOptions so;
    so.seed = seed;
    Synth synth(so);
    std::ofstream file(dir_ / "corpus.ndjson", std::ios::app);
    auto send = [&](const std::string& topic, const std::string& doc) {
      ASSERT_TRUE((*producer)->Produce(topic, "", doc, static_cast<int32_t>(produced_ % kPartitions)).ok());
      file << doc << "\n";
      ++produced_;
      if (pace.count() > 0 && produced_ % 10 == 0) std::this_thread::sleep_for(pace);
    };
    for (size_t i = 0; i < main; ++i) send(topics_[0], synth.Main(i));
    for (size_t i = 0; i < bhr; ++i) send(topics_[1], synth.Bhr(i));
    for (size_t i = 0; i < crash; ++i) send(topics_[2], synth.ProcessedCrash(i));
    for (size_t i = 0; i < crash_pings; ++i) send(topics_[2], synth.CrashPing(i));
    ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(120)).ok());
    ASSERT_EQ((*producer)->stats().failed, 0u);
  }

  // Small fetches make consumption round-trip bound, so a broker dies mid-stream.
  static constexpr char kSlowFetches[] =
      "\"fetch.max.bytes\" = \"100000\"\n\"message.max.bytes\" = \"100000\"\n"
      "\"max.partition.fetch.bytes\" = \"20000\"\n";

  void WriteConfig(const std::string& extra_kafka_properties = "",
                   const std::string& checkpoint_interval = "150ms") {
    std::ofstream(dir_ / "seismo.toml")
        << "[kafka]\nbrokers = \"" << kafka_->bootstrap_servers() << "\"\ngroup_id = \"" << group_ << "\"\n"
        << "topics = [\"" << topics_[0] << "\", \"" << topics_[1] << "\", \"" << topics_[2] << "\"]\n"
        << "[kafka.properties]\n\"session.timeout.ms\" = \"6000\"\n\"heartbeat.interval.ms\" = \"500\"\n"
        << extra_kafka_properties << "[ingest]\nthreads = 2\nshutdown_timeout = \""
        << kShutdownTimeout.count() << "s\"\n[aggregate]\nshards = 2\n"
        << "[checkpoint]\ndir = \"" << (dir_ / "ckpt").string() << "\"\ninterval = \"" << checkpoint_interval
        << "\"\n[http]\nlisten = \"127.0.0.1:0\"\n[log]\nlevel = \"info\"\n";
  }

  // These tests check counts, not the shutdown budget (crash_recovery_test.cc does): the wait
  // for a SIGTERM is twice the budget, for a machine loaded by JVMs and other tests.
  int Stop(int sig) {
    return daemon_->Signal(sig, sig == SIGKILL ? std::chrono::milliseconds(10'000) : 2 * kShutdownTimeout);
  }

  std::filesystem::path CheckpointFile() const { return dir_ / "ckpt" / std::string(kCheckpointFile); }
  std::filesystem::path CheckpointTempFile() const {
    return dir_ / "ckpt" / (std::string(kCheckpointFile) + ".tmp");
  }

  // Documents in the latest checkpoint (0 if none yet).
  uint64_t CheckpointedDocuments() const {
    auto data = DecodeCheckpoint(Slurp(CheckpointFile()), symbols_);
    return data ? data->counts.documents : 0;
  }

  // Waits until the checkpoint holds at least `n` documents.
  bool WaitForCheckpointedAtLeast(uint64_t n, std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (CheckpointedDocuments() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return CheckpointedDocuments() >= n;
  }

  // Waits until the checkpoint holds `n` documents; false when it holds more (counted twice).
  bool WaitForCheckpointed(uint64_t n, std::chrono::seconds limit) const {
    return WaitForCheckpointedAtLeast(n, limit) && CheckpointedDocuments() == n;
  }

  // `seismo replay` of the corpus, without "alerts" (the last member: alert states depend on
  // a live run's evaluation history, the aggregates must not).
  std::string ReplayJson() const {
    auto gen = SignatureGenerator::LoadDefault();
    Config c;
    auto r = RunReplay(c, {(dir_ / "corpus.ndjson").string()}, gen->get(), {});
    EXPECT_TRUE(r);
    return WithoutAlerts(ReplayOutputJson(*r->snapshot, r->counts));
  }
  // The daemon's --output of its last run, without "alerts".
  std::string Output() const { return WithoutAlerts(Slurp(dir_ / "run.json")); }
  static std::string WithoutAlerts(const std::string& json) {
    return json.substr(0, json.rfind(",\"alerts\":"));
  }

  std::filesystem::path dir_;
  mutable Symbols symbols_;   // checkpoints read back by the test intern into it
  RealKafka* kafka_ = nullptr;  // not owned
  std::string group_;
  std::vector<std::string> topics_;  // main, bhr, crash
  std::unique_ptr<DaemonProcess> daemon_;
  std::atomic<uint64_t> produced_{0};
};

}  // namespace seismo::testing
