// The daemon over real sockets against a real Kafka broker (integration/real_kafka.h):
// what it consumes equals `replay` of the same corpus; two daemons in one group split
// the partitions and hand them over through the broker's group protocol, counting every
// record once; full queues pause consumption and lose nothing. Against librdkafka's mock
// cluster, which can take the coordinator away on cue: readiness follows the partitions
// the daemon holds.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "integration/real_kafka.h"
#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/sim/synth.h"
#include "seismo/http/server.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/mock_cluster.h"
#include "seismo/signature/generator.h"
#include "support/keys.h"
#include "test_scale.h"
#include "unit/http/http_client.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using seismo::testing::HttpGet;
using seismo::testing::HttpResponse;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::vector<std::string> kTopics = {"telemetry.main", "telemetry.bhr", "socorro.processed", "telemetry.crash"};
constexpr int kPartitions = 4;

// On the shared real broker (suite Kafka*): topics and group unique to the test.
class KafkaDaemon : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-daemon-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    auto gen = SignatureGenerator::LoadDefault();
    ASSERT_TRUE(gen);
    signatures_ = std::move(*gen);
    UseCluster();
  }
  virtual void UseCluster() {
    testing::RealKafka* kafka = testing::RealKafka::Get();
    ASSERT_NE(kafka, nullptr);
    bootstrap_ = kafka->bootstrap_servers();
    // The broker's JVM shares two cores with the other tests and the sanitizer builds of
    // CI: it has gone 6 s without answering a heartbeat, and a member whose session ends
    // re-reads from its last commit (ADR 0003). These daemons always leave the group
    // cleanly, so a long session costs them nothing.
    session_timeout_ms_ = "30000";
    group_ = testing::RealKafka::UniqueName("seismo-test");
    for (const std::string& t : kTopics) {
      topics_.push_back(testing::RealKafka::UniqueName(t));
      Status s = kafka->CreateTopic(topics_.back(), kPartitions);
      ASSERT_TRUE(s.ok()) << s.message();
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Produces a generated corpus round-robin over the partitions (the mock
  // drops data beyond 5 MiB per partition, so spread it) and keeps a copy on disk.
  void ProduceCorpus(uint64_t seed, size_t main, size_t bhr, size_t crash, size_t crash_pings) {
    KafkaProducerOptions po;
    po.brokers = bootstrap_;
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
    for (size_t i = 0; i < main; ++i) send(topics_[0], synth.Main(i));
    for (size_t i = 0; i < bhr; ++i) send(topics_[1], synth.Bhr(i));
    for (size_t i = 0; i < crash; ++i) send(topics_[2], synth.ProcessedCrash(i));
    for (size_t i = 0; i < crash_pings; ++i) send(topics_[3], synth.CrashPing(i));
    ASSERT_TRUE((*producer)->Flush(seconds(30)).ok());
  }

  // Every partition still holds everything produced (the mock silently drops old data; a
  // real broker keeps it for the topic's retention).
  void ExpectNothingDropped() {
    KafkaConsumerOptions o{bootstrap_, "watermarks", {topics_[0]}, {}};
    auto consumer = KafkaConsumer::Create(o, nullptr);
    ASSERT_TRUE(consumer);
    for (const std::string& t : topics_) {
      for (int p = 0; p < kPartitions; ++p) {
        auto wm = (*consumer)->QueryWatermarks({t, p}, seconds(5));
        ASSERT_TRUE(wm) << wm.error().message();
        EXPECT_EQ(wm->first, 0) << t << "/" << p;
      }
    }
  }

  Config DaemonConfig(size_t threads, size_t queue_chunks = 64) const {
    Config c;
    c.kafka.brokers = bootstrap_;
    c.kafka.group_id = group_;
    c.kafka.topics = topics_;
    c.kafka.properties = {{"session.timeout.ms", session_timeout_ms_}, {"heartbeat.interval.ms", "500"}};
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
    return ReplayOutputJson(*r->snapshot, r->counts);
  }

  std::string Corpus() const { return (dir_ / "corpus.ndjson").string(); }

  fs::path dir_;
  std::string bootstrap_;
  std::string group_;
  std::string session_timeout_ms_ = "6000";  // the group session of DaemonConfig()
  std::vector<std::string> topics_;  // kTopics, made unique on a shared broker
  std::unique_ptr<SignatureGenerator> signatures_;
  uint64_t produced_ = 0;
};

// On librdkafka's mock cluster, for what only it can do on cue (a coordinator outage).
class MockDaemonKafka : public KafkaDaemon {
 protected:
  void UseCluster() override {
    auto cluster = MockCluster::Create(1);
    ASSERT_TRUE(cluster) << cluster.error().message();
    cluster_ = std::move(*cluster);
    bootstrap_ = cluster_->bootstrap_servers();
    group_ = "seismo-test";
    topics_ = kTopics;
    for (const std::string& t : kTopics) ASSERT_TRUE(cluster_->CreateTopic(t, kPartitions).ok());
  }

  std::unique_ptr<MockCluster> cluster_;
};

TEST_F(KafkaDaemon, ConsumedAggregatesEqualReplayOfTheSameCorpus) {
  ProduceCorpus(11, 2000, 600, 500, 300);
  ExpectNothingDropped();
  SystemClock clock;
  Daemon daemon(DaemonConfig(2), signatures_.get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  ASSERT_TRUE(WaitForDocuments({&daemon}, produced_, seconds(90))) << daemon.counts().documents << " of " << produced_;
  daemon.Stop();
  EXPECT_EQ(ReplayOutputJson(*daemon.snapshot(), daemon.counts()), ReplayJson());
  ASSERT_TRUE(daemon.snapshot());
  EXPECT_GT(daemon.snapshot()->table(Table::kHangs).size(), 100u);
}

// Two daemons in one group on the real broker: the second joins while the first consumes
// (the group moves partitions to it through the broker's cooperative protocol), the first
// leaves while more arrives (its partitions move back, after its hand-over commit). Together
// they count every record once: their merged aggregates equal `replay` of the corpus.
TEST_F(KafkaDaemon, TwoDaemonsSplitAndHandOverPartitionsAndCountEveryRecordOnce) {
  ProduceCorpus(12, 1500, 500, 400, 200);
  SystemClock clock;
  Config slow = DaemonConfig(1);
  slow.kafka.properties["max.partition.fetch.bytes"] = "20000";  // the join lands mid-stream
  Daemon first(slow, signatures_.get(), &clock);
  Daemon second(slow, signatures_.get(), &clock);
  ASSERT_TRUE(first.Start().ok());
  auto deadline = std::chrono::steady_clock::now() + seconds(60);
  while (first.counts().documents == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_GT(first.counts().documents, 0u) << "the first daemon is not consuming";
  ASSERT_TRUE(second.Start().ok());
  // The group split the work: each holds partitions.
  deadline = std::chrono::steady_clock::now() + seconds(60);
  while (!(first.status().consuming && second.status().consuming) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(first.status().consuming);
  EXPECT_TRUE(second.status().consuming) << "the second daemon was given no partition";
  ProduceCorpus(14, 500, 100, 100, 50);
  ASSERT_TRUE(WaitForDocuments({&first, &second}, produced_, seconds(120)))
      << first.counts().documents << " + " << second.counts().documents << " of " << produced_;
  EXPECT_GT(second.counts().documents, 0u);
  first.Stop();  // leaves the group: its partitions go to the second, from its commit
  ProduceCorpus(15, 500, 100, 100, 50);
  ASSERT_TRUE(WaitForDocuments({&first, &second}, produced_, seconds(120)))
      << first.counts().documents << " + " << second.counts().documents << " of " << produced_;
  second.Stop();
  // Both have left the group: nothing more can be delivered, and the sum must still be the
  // total (a re-delivery in the meantime would have been counted by now).
  EXPECT_EQ(first.counts().documents + second.counts().documents, produced_);
  const auto together = test::Combine({first.snapshot(), second.snapshot()}, ToAggregateOptions(first.config()));
  RecordCounts counts = first.counts();
  RecordCounts c2 = second.counts();
  for (size_t i = 0; i < counts.by_kind.size(); ++i) counts.by_kind[i] += c2.by_kind[i];
  for (size_t i = 0; i < kRejectReasonCount; ++i) counts.rejected[i] += c2.rejected[i];
  EXPECT_EQ(ReplayOutputJson(*together, counts), ReplayJson());
}

// Slow shards back the (worker, shard) rings up, full rings block the parse workers, full
// chunk rings make the source pause every partition; the operator sees it (paused
// partitions, a non-zero consumer lag) and, once the shards catch up, consumption resumes
// and the result is that of replay: nothing was lost or counted twice.
TEST_F(KafkaDaemon, FullQueuesPauseConsumptionAndLoseNothing) {
  ProduceCorpus(13, 3000, 800, 600, 300);
  ExpectNothingDropped();
  SystemClock clock;
  Daemon daemon(DaemonConfig(2, /*queue_chunks=*/1), signatures_.get(), &clock);
  daemon.SetChunkDocsForTesting(50);  // many small chunks rather than a few large ones
  daemon.SetParseDelayForTesting(milliseconds(10));
  // Shards far slower than parsing, also when a sanitizer makes parsing slow.
  const milliseconds apply_delay(test::kSanitized ? 150 : 60);
  daemon.SetShardBackpressureForTesting(apply_delay, /*batch_ring_capacity=*/2);
  HttpServer server;
  HttpServerOptions http;
  http.listen = "127.0.0.1:0";
  ASSERT_TRUE(server.Start(http, daemon).ok());
  ASSERT_TRUE(daemon.Start().ok());
  size_t paused_samples = 0, lagging_samples = 0, lagging_metrics = 0;
  auto deadline = std::chrono::steady_clock::now() + seconds(120);
  while (daemon.counts().documents < produced_ && std::chrono::steady_clock::now() < deadline) {
    // What an operator reads.
    simdjson::dom::parser parser;
    simdjson::dom::element status;
    HttpResponse r = HttpGet(server.port(), "/api/v1/status");
    if (r.status == 200 && parser.parse(r.body).get(status) == simdjson::SUCCESS) {
      const bool paused = uint64_t(status["consumer"]["paused_partitions"]) > 0;
      paused_samples += paused ? 1 : 0;
      if (paused && status["consumer"]["lag"].is_int64() && int64_t(status["consumer"]["lag"]) > 0) {
        ++lagging_samples;
        const std::string metrics = HttpGet(server.port(), "/metrics").body;
        const size_t at = metrics.find("\nseismo_consumer_lag ");
        if (at != std::string::npos && std::stoll(metrics.substr(at + 21)) > 0) ++lagging_metrics;
      }
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_EQ(daemon.counts().documents, produced_);
  // Per (worker, shard) ring, shard-major. Every worker was held up by a full ring; not
  // necessarily by both shards: a worker pushes a chunk's batches shard by shard, so once it
  // waits on shard 0, shard 1 (as slow) gets batches no faster than shard 0 frees room.
  const std::vector<uint64_t> full = daemon.FullBatchRingPushesForTesting();
  ASSERT_EQ(full.size(), 4u);
  for (size_t worker = 0; worker < 2; ++worker) {
    EXPECT_GT(full[worker] + full[2 + worker], 0u) << "worker " << worker << " never found a ring full";
  }
  EXPECT_GT(paused_samples, 0u) << "no paused partition was ever reported";
  EXPECT_GT(lagging_samples, 0u) << "no consumer lag was reported while paused with data waiting";
  EXPECT_GT(lagging_metrics, 0u) << "/metrics never showed the lag";
  EXPECT_GT(daemon.status().pauses, 0u);
  // Resumed, and caught up: nothing paused, nothing left behind.
  deadline = std::chrono::steady_clock::now() + seconds(10);
  while ((daemon.status().paused_partitions != 0 || daemon.status().consumer_lag != 0) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(daemon.status().paused_partitions, 0u);
  EXPECT_EQ(daemon.status().consumer_lag, 0);
  server.Stop();
  daemon.Stop();
  EXPECT_EQ(ReplayOutputJson(*daemon.snapshot(), daemon.counts()), ReplayJson());
}

// Ready means holding partitions: a member the group gives nothing is not consuming, nor
// is one whose partitions were taken away (the coordinator gone past the session timeout).
TEST_F(MockDaemonKafka, ConsumingOnlyWhilePartitionsAreAssigned) {
  ASSERT_TRUE(cluster_->CreateTopic("solo", 1).ok());
  // Another member of the group holds the topic's only partition.
  KafkaConsumerOptions o{bootstrap_, group_, {"solo"}, {}};
  o.properties = {{"session.timeout.ms", "6000"},
                  {"heartbeat.interval.ms", "500"},
                  {"partition.assignment.strategy", "cooperative-sticky"}};
  auto other = KafkaConsumer::Create(o, nullptr);
  ASSERT_TRUE(other);
  auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while ((*other)->assignment().empty() && std::chrono::steady_clock::now() < deadline) {
    (void)(*other)->Poll(10, milliseconds(100));
  }
  ASSERT_EQ((*other)->assignment().size(), 1u);

  Config c = DaemonConfig(1);
  c.kafka.topics = {"solo"};
  SystemClock clock;
  Daemon daemon(c, signatures_.get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  auto poll_other_for = [&](std::chrono::milliseconds d) {
    auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) (void)(*other)->Poll(10, milliseconds(100));
  };
  poll_other_for(seconds(8));  // the daemon joined; the sticky assignment left it nothing
  EXPECT_EQ((*other)->assignment().size(), 1u);
  EXPECT_FALSE(daemon.status().consuming);

  ASSERT_TRUE((*other)->Close().ok());  // leaves: the partition moves to the daemon
  deadline = std::chrono::steady_clock::now() + seconds(30);
  while (!daemon.status().consuming && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(daemon.status().consuming);

  ASSERT_TRUE(cluster_->SetBrokerDown(1).ok());  // the only broker, the coordinator among them
  deadline = std::chrono::steady_clock::now() + seconds(30);
  while (daemon.status().consuming && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_FALSE(daemon.status().consuming) << "partitions lost with the coordinator";
  ASSERT_TRUE(cluster_->SetBrokerUp(1).ok());
  deadline = std::chrono::steady_clock::now() + seconds(40);
  while (!daemon.status().consuming && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(daemon.status().consuming) << "assigned again once the coordinator is back";
  daemon.Stop();
}

}  // namespace
}  // namespace seismo
