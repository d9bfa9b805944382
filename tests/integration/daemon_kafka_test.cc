// The daemon over real sockets against librdkafka's mock cluster: what it
// consumes equals `replay` of the same corpus; two daemons in one group count
// every record once; full queues pause consumption and lose nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/app/synth.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/mock_cluster.h"
#include "seismo/signature/generator.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::vector<std::string> kTopics = {"telemetry.main", "telemetry.bhr", "socorro.processed", "telemetry.crash"};
constexpr int kPartitions = 4;

class DaemonKafka : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-daemon-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    auto cluster = MockCluster::Create(1);
    ASSERT_TRUE(cluster) << cluster.error().message();
    cluster_ = std::move(*cluster);
    for (const std::string& t : kTopics) ASSERT_TRUE(cluster_->CreateTopic(t, kPartitions).ok());
    auto gen = SignatureGenerator::LoadDefault();
    ASSERT_TRUE(gen);
    signatures_ = std::move(*gen);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Produces a generated corpus round-robin over the partitions (the mock
  // drops data beyond 5 MiB per partition, so spread it) and keeps a copy on disk.
  void ProduceCorpus(uint64_t seed, size_t main, size_t bhr, size_t crash, size_t crash_pings) {
    KafkaProducerOptions po;
    po.brokers = cluster_->bootstrap_servers();
    auto producer = KafkaProducer::Create(po);
    ASSERT_TRUE(producer);
    SynthOptions so;
    so.seed = seed;
    Synth synth(so);
    std::ofstream file(Corpus(), std::ios::app);
    auto send = [&](const std::string& topic, const std::string& doc) {
      ASSERT_TRUE((*producer)->Produce(topic, "", doc, static_cast<int32_t>(produced_ % kPartitions)).ok());
      file << doc << "\n";
      ++produced_;
    };
    for (size_t i = 0; i < main; ++i) send("telemetry.main", synth.Main(i));
    for (size_t i = 0; i < bhr; ++i) send("telemetry.bhr", synth.Bhr(i));
    for (size_t i = 0; i < crash; ++i) send("socorro.processed", synth.ProcessedCrash(i));
    for (size_t i = 0; i < crash_pings; ++i) send("telemetry.crash", synth.CrashPing(i));
    ASSERT_TRUE((*producer)->Flush(seconds(30)).ok());
  }

  // Every partition still holds everything produced (the mock silently drops old data).
  void ExpectNothingDroppedByTheMock() {
    KafkaConsumerOptions o{cluster_->bootstrap_servers(), "watermarks", {kTopics[0]}, {}};
    auto consumer = KafkaConsumer::Create(o, nullptr);
    ASSERT_TRUE(consumer);
    for (const std::string& t : kTopics) {
      for (int p = 0; p < kPartitions; ++p) {
        auto wm = (*consumer)->QueryWatermarks({t, p}, seconds(5));
        ASSERT_TRUE(wm) << wm.error().message();
        EXPECT_EQ(wm->first, 0) << t << "/" << p;
      }
    }
  }

  Config DaemonConfig(size_t threads, size_t queue_chunks = 64) const {
    Config c;
    c.kafka.brokers = cluster_->bootstrap_servers();
    c.kafka.group_id = "seismo-test";
    c.kafka.topics = kTopics;
    c.kafka.properties = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "500"}};
    c.ingest.threads = threads;
    c.ingest.queue_chunks = queue_chunks;
    c.aggregate.shards = threads;
    c.shutdown_timeout = seconds(30);
    return c;
  }

  // Waits (bounded) until the daemons together have seen `n` documents.
  static bool WaitForDocuments(const std::vector<Daemon*>& daemons, uint64_t n, seconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      uint64_t seen = 0;
      for (Daemon* d : daemons) seen += d->counts().documents;
      if (seen >= n) return seen == n;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return false;
  }

  std::string ReplayJson() const {
    Config c;
    c.ingest.threads = 2;
    c.aggregate.shards = 2;
    auto r = RunReplay(c, {Corpus()}, signatures_.get(), {});
    EXPECT_TRUE(r);
    return ReplayOutputJson(r->aggregates, r->counts);
  }

  std::string Corpus() const { return (dir_ / "corpus.ndjson").string(); }

  fs::path dir_;
  std::unique_ptr<MockCluster> cluster_;
  std::unique_ptr<SignatureGenerator> signatures_;
  uint64_t produced_ = 0;
};

TEST_F(DaemonKafka, ConsumedAggregatesEqualReplayOfTheSameCorpus) {
  ProduceCorpus(11, 2000, 600, 500, 300);
  ExpectNothingDroppedByTheMock();
  SystemClock clock;
  Daemon daemon(DaemonConfig(2), signatures_.get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  ASSERT_TRUE(WaitForDocuments({&daemon}, produced_, seconds(90))) << daemon.counts().documents << " of " << produced_;
  daemon.Stop();
  EXPECT_EQ(ReplayOutputJson(daemon.FinalAggregates(), daemon.counts()), ReplayJson());
  ASSERT_TRUE(daemon.snapshot());
  EXPECT_GT(daemon.snapshot()->table(Table::kHangs).size(), 100u);
}

TEST_F(DaemonKafka, TwoDaemonsInOneGroupCountEveryRecordOnce) {
  ProduceCorpus(12, 1500, 500, 400, 200);
  SystemClock clock;
  Daemon first(DaemonConfig(1), signatures_.get(), &clock);
  Daemon second(DaemonConfig(1), signatures_.get(), &clock);
  ASSERT_TRUE(first.Start().ok());
  std::this_thread::sleep_for(milliseconds(300));  // let the first one start consuming alone
  ASSERT_TRUE(second.Start().ok());
  ASSERT_TRUE(WaitForDocuments({&first, &second}, produced_, seconds(90)))
      << first.counts().documents << " + " << second.counts().documents << " of " << produced_;
  // Give a late rebalance no chance to re-deliver: both must stay at the total.
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(first.counts().documents + second.counts().documents, produced_);
  first.Stop();
  second.Stop();
  Aggregates together = first.FinalAggregates();
  together.Add(second.FinalAggregates());
  RecordCounts counts = first.counts();
  RecordCounts c2 = second.counts();
  for (size_t i = 0; i < counts.by_kind.size(); ++i) counts.by_kind[i] += c2.by_kind[i];
  for (size_t i = 0; i < kRejectReasonCount; ++i) counts.rejected[i] += c2.rejected[i];
  EXPECT_EQ(ReplayOutputJson(together, counts), ReplayJson());
}

TEST_F(DaemonKafka, FullQueuesPauseConsumptionAndLoseNothing) {
  ProduceCorpus(13, 3000, 800, 0, 0);
  SystemClock clock;
  Daemon daemon(DaemonConfig(1, /*queue_chunks=*/1), signatures_.get(), &clock);
  daemon.SetParseDelayForTesting(std::chrono::milliseconds(30));  // parsing slower than fetching
  ASSERT_TRUE(daemon.Start().ok());
  ASSERT_TRUE(WaitForDocuments({&daemon}, produced_, seconds(90)));
  EXPECT_GT(daemon.status().pauses, 0u);
  daemon.Stop();
  EXPECT_EQ(ReplayOutputJson(daemon.FinalAggregates(), daemon.counts()), ReplayJson());
}

}  // namespace
}  // namespace seismo
