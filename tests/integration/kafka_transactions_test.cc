// Transactions and the group-less topic reader, the two Kafka parts of the cluster's
// aggregates topic (ADR 0024): a publish is one transaction, read back committed only;
// a restore reads a partition to its end. Against the real broker (suite Kafka*) and the
// embedded mock (which the demo and the mock cluster tests use).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cluster_node.h"
#include "integration/real_kafka.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/kafka_topic_reader.h"
#include "seismo/ingest/mock_cluster.h"
#include "test_scale.h"

namespace seismo {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct Read {
  int32_t partition;
  std::string key;
  std::optional<std::string> value;
};

class TransactionsTest : public ::testing::Test {
 protected:
  // Sets bootstrap_ and creates topic_ with two partitions.
  virtual void UseCluster() = 0;

  void SetUp() override {
    UseCluster();
    if (HasFatalFailure()) return;
    producer_ = NewPublisher();
    ASSERT_NE(producer_, nullptr);
  }

  // A transactional producer of the test's id with its transactions initialised (which fences
  // any earlier one of the id), or null after a test failure.
  std::unique_ptr<KafkaProducer> NewPublisher() {
    KafkaProducerOptions po;
    po.brokers = bootstrap_;
    po.properties["transactional.id"] = topic_ + ".publisher";
    auto producer = KafkaProducer::Create(po);
    EXPECT_TRUE(producer) << producer.error().message();
    if (!producer) return nullptr;
    Status init = (*producer)->InitTransactions(test::Patience(seconds(60)));
    EXPECT_TRUE(init.ok()) << init.message();
    return init.ok() ? std::move(*producer) : nullptr;
  }

  // Every committed record of the topic, read to its end.
  std::vector<Read> ReadToEnd() {
    auto reader = KafkaTopicReader::Create({bootstrap_, {}});
    EXPECT_TRUE(reader) << reader.error().message();
    if (!reader) return {};
    Status assigned = (*reader)->Assign(topic_, {}, seconds(30));
    EXPECT_TRUE(assigned.ok()) << assigned.message();
    std::vector<Read> out;
    const auto deadline = std::chrono::steady_clock::now() + test::Patience(seconds(60));
    while (!(*reader)->AtEnd() && std::chrono::steady_clock::now() < deadline) {
      auto n = (*reader)->Poll(milliseconds(200), [&](const KafkaTopicRecord& r) {
        out.push_back({r.partition, std::string(r.key),
                       r.value ? std::optional<std::string>(std::string(*r.value)) : std::nullopt});
      });
      EXPECT_TRUE(n) << n.error().message();
    }
    EXPECT_TRUE((*reader)->AtEnd()) << "the topic's end was not reached";
    return out;
  }

  std::string bootstrap_;
  std::string topic_;
  std::unique_ptr<KafkaProducer> producer_;
};

class KafkaTransactions : public TransactionsTest {
 protected:
  void UseCluster() override {
    testing::RealKafka* kafka = testing::RealKafka::Get();
    ASSERT_NE(kafka, nullptr);
    bootstrap_ = kafka->bootstrap_servers();
    topic_ = testing::RealKafka::UniqueName("seismo.txn");
    Status s = kafka->CreateTopic(topic_, 2, 1, {{"cleanup.policy", "compact"}});
    ASSERT_TRUE(s.ok()) << s.message();
  }
};

class MockTransactions : public TransactionsTest {
 protected:
  void UseCluster() override {
    auto cluster = MockCluster::Create(1);
    ASSERT_TRUE(cluster) << cluster.error().message();
    cluster_ = std::move(*cluster);
    bootstrap_ = cluster_->bootstrap_servers();
    topic_ = "seismo.txn";
    Status s = cluster_->CreateTopic(topic_, 2);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  std::unique_ptr<MockCluster> cluster_;
};

// Three transactions: committed, aborted, committed (with a tombstone and an empty value).
// `written_before_abort`: the aborted records reach the broker before the abort (the mock
// does not hide aborted records it stored from read_committed readers: only the real broker
// is asked to).
void CommittedRecordsAreReadAndAbortedOnesAreNot(KafkaProducer& producer, const std::string& topic,
                                                 bool written_before_abort) {
  const auto t = test::Patience(seconds(60));
  ASSERT_TRUE(producer.BeginTransaction(seconds(30)).ok());
  ASSERT_TRUE(producer.Produce(topic, "p/a", "one", 0).ok());
  ASSERT_TRUE(producer.Produce(topic, "p/b", "two", 1).ok());
  Status committed = producer.CommitTransaction(t);
  ASSERT_TRUE(committed.ok()) << committed.message();

  ASSERT_TRUE(producer.BeginTransaction(seconds(30)).ok());
  ASSERT_TRUE(producer.Produce(topic, "p/a", "aborted", 0).ok());
  ASSERT_TRUE(producer.ProduceTombstone(topic, "p/b", 1).ok());
  // Written before the abort: librdkafka 2.0.2 against a Kafka 4 broker, aborting while the
  // records were still in flight, got INVALID_TXN_STATE (fatal) in two sanitizer runs of CI.
  if (written_before_abort) ASSERT_TRUE(producer.Flush(t).ok());
  Status aborted = producer.AbortTransaction(t);
  ASSERT_TRUE(aborted.ok()) << aborted.message();

  ASSERT_TRUE(producer.BeginTransaction(seconds(30)).ok());
  ASSERT_TRUE(producer.ProduceTombstone(topic, "p/a", 0).ok());
  ASSERT_TRUE(producer.Produce(topic, "p/c", "", 1).ok());  // a value of no bytes is not a tombstone
  committed = producer.CommitTransaction(t);
  ASSERT_TRUE(committed.ok()) << committed.message();
}

std::map<int32_t, std::vector<std::string>> Describe(const std::vector<Read>& reads) {
  std::map<int32_t, std::vector<std::string>> out;
  for (const Read& r : reads)
    out[r.partition].push_back(r.key + "=" + (r.value ? "'" + *r.value + "'" : "null"));
  return out;
}

const std::map<int32_t, std::vector<std::string>> kCommitted = {
    {0, {"p/a='one'", "p/a=null"}},
    {1, {"p/b='two'", "p/c=''"}},
};

TEST_F(KafkaTransactions, CommittedRecordsAreReadToTheEndAndAbortedOnesNever) {
  CommittedRecordsAreReadAndAbortedOnesAreNot(*producer_, topic_, /*written_before_abort=*/true);
  if (HasFatalFailure()) return;
  EXPECT_EQ(Describe(ReadToEnd()), kCommitted);
}

TEST_F(MockTransactions, CommittedRecordsAreReadToTheEndAndAbortedOnesNever) {
  CommittedRecordsAreReadAndAbortedOnesAreNot(*producer_, topic_, /*written_before_abort=*/false);
  if (HasFatalFailure()) return;
  EXPECT_EQ(Describe(ReadToEnd()), kCommitted);
}

// A second producer with the same transactional id fences the first: the first can no
// longer commit, and says so as a failed precondition (the publisher then makes a new one).
TEST_F(KafkaTransactions, ASecondPublisherWithTheSameIdFencesTheFirst) {
  ASSERT_TRUE(producer_->BeginTransaction(seconds(30)).ok());
  ASSERT_TRUE(producer_->Produce(topic_, "p/a", "old", 0).ok());
  KafkaProducerOptions po;
  po.brokers = bootstrap_;
  po.properties["transactional.id"] = topic_ + ".publisher";
  auto second = KafkaProducer::Create(po);
  ASSERT_TRUE(second) << second.error().message();
  ASSERT_TRUE((*second)->InitTransactions(test::Patience(seconds(60))).ok());
  Status late = producer_->CommitTransaction(test::Patience(seconds(60)));
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition) << late.message();
  ASSERT_TRUE((*second)->BeginTransaction(seconds(30)).ok());
  ASSERT_TRUE((*second)->Produce(topic_, "p/a", "new", 0).ok());
  ASSERT_TRUE((*second)->CommitTransaction(test::Patience(seconds(60))).ok());
  EXPECT_EQ(Describe(ReadToEnd()), (std::map<int32_t, std::vector<std::string>>{{0, {"p/a='new'"}}}));
}

// A commit slower than its caller's patience goes on in the background; librdkafka then
// refuses both an abort and a new transaction until the same commit is called again. The next
// Begin finishes it: its records land, and the publisher goes on (it used to abort, fail, and
// never publish again). `hold_back` makes the commit slow (or nothing: `patience` is short).
void ACommitThatTimesOutIsFinishedByTheNextBegin(
    std::unique_ptr<KafkaProducer>& producer, const std::string& topic, milliseconds patience,
    const std::function<void()>& hold_back, const std::function<std::unique_ptr<KafkaProducer>()>& replace) {
  const auto t = test::Patience(seconds(60));
  Status first = producer->BeginTransaction(t);
  ASSERT_TRUE(first.ok()) << first.message();
  Status slow = producer->Produce(topic, "p/a", "slow", 0);
  ASSERT_TRUE(slow.ok()) << slow.message();
  Status flushed = producer->Flush(t);
  ASSERT_TRUE(flushed.ok()) << flushed.message();
  hold_back();
  Status late = producer->CommitTransaction(patience);
  if (!late.ok()) {
    EXPECT_EQ(late.code(), StatusCode::kUnavailable) << late.message();
    Status abort = producer->AbortTransaction(t);
    EXPECT_EQ(abort.code(), StatusCode::kUnavailable) << "an abort cannot undo a commit under way";
  }
  Status begun = producer->BeginTransaction(t);
  ASSERT_TRUE(begun.ok()) << begun.message();
  Status next = producer->Produce(topic, "p/b", "next", 1);
  if (!next.ok()) {
    // Seen in about one full real-broker run in two (librdkafka 2.0.2, never alone, never on
    // the mock): the begin that finished the timed-out commit succeeded, yet the produce is
    // refused, "Local: Erroneous state", and so is every produce of the transactions this
    // producer begins after it (4 tried in one CI run). Produce says kFailedPrecondition, and
    // the daemon does what this test does: it aborts and makes a new producer of the same
    // transactional id (ClusterNode::Transact). What the test is about, that the timed-out
    // commit landed, is the read-back after it either way.
    EXPECT_EQ(next.code(), StatusCode::kFailedPrecondition) << next.message();
    std::cout << "the produce after the begin was refused: " << next.message()
              << "; the timed-out commit had said: " << late.message() << "; a new producer goes on\n";
    Status aborted = producer->AbortTransaction(t);
    std::cout << "its abort said: " << (aborted.ok() ? "ok" : aborted.message()) << "\n";
    producer = replace();
    ASSERT_NE(producer, nullptr);
    Status again = producer->BeginTransaction(t);
    ASSERT_TRUE(again.ok()) << again.message();
    next = producer->Produce(topic, "p/b", "next", 1);
    ASSERT_TRUE(next.ok()) << next.message() << " (a new producer)";
  }
  Status committed = producer->CommitTransaction(t);
  ASSERT_TRUE(committed.ok()) << committed.message();
}

const std::map<int32_t, std::vector<std::string>> kBothCommitted = {{0, {"p/a='slow'"}}, {1, {"p/b='next'"}}};

// The real broker hides aborted records from read_committed readers: 'slow' read back is a
// commit that landed. A 1 ms commit against it times out (or, rarely, commits at once).
TEST_F(KafkaTransactions, ACommitThatTimesOutIsFinishedByTheNextBegin) {
  ACommitThatTimesOutIsFinishedByTheNextBegin(
      producer_, topic_, milliseconds(1), [] {}, [this] { return NewPublisher(); });
  if (HasFatalFailure()) return;
  EXPECT_EQ(Describe(ReadToEnd()), kBothCommitted);
}

// The mock holds EndTxn back 3 s against a 300 ms commit: the commit surely times out, and
// the next begin waits for the held-back answer (the mock shows aborted records too, so the
// wait is what tells a finished commit from an aborted one here).
TEST_F(MockTransactions, ACommitThatTimesOutIsFinishedByTheNextBegin) {
  constexpr int16_t kEndTxn = 26;
  std::chrono::steady_clock::time_point committing;
  ACommitThatTimesOutIsFinishedByTheNextBegin(
      producer_, topic_, milliseconds(300),
      [&] {
        ASSERT_TRUE(cluster_->DelayRequests(1, kEndTxn, 1, 3000).ok());
        committing = std::chrono::steady_clock::now();
      },
      [this] { return NewPublisher(); });
  if (HasFatalFailure()) return;
  EXPECT_GE(std::chrono::steady_clock::now() - committing, milliseconds(2900))
      << "the held-back EndTxn was answered: the commit was finished, not dropped";
  EXPECT_EQ(Describe(ReadToEnd()), kBothCommitted);
}

// librdkafka refuses a produce outside a transaction in its own state: kFailedPrecondition, as
// for a producer stuck refusing (the code ClusterNode::Transact replaces its producer on).
TEST_F(MockTransactions, AProduceOutsideATransactionIsRefusedAsAFailedPrecondition) {
  Status outside = producer_->Produce(topic_, "p/a", "outside", 0);
  EXPECT_EQ(outside.code(), StatusCode::kFailedPrecondition) << outside.message();
  ASSERT_TRUE(producer_->BeginTransaction(seconds(30)).ok());
  Status inside = producer_->Produce(topic_, "p/a", "inside", 0);
  EXPECT_TRUE(inside.ok()) << inside.message();
  ASSERT_TRUE(producer_->CommitTransaction(test::Patience(seconds(60))).ok());
}

TEST_F(MockTransactions, AMissingTopicHasNoPartitions) {
  auto reader = KafkaTopicReader::Create({bootstrap_, {}});
  ASSERT_TRUE(reader);
  Result<int32_t> count = (*reader)->PartitionCount("no.such.topic", seconds(10));
  ASSERT_FALSE(count);
  EXPECT_EQ(count.error().code(), StatusCode::kNotFound) << count.error().message();
}

// A consumer group of `source` (two partitions) whose member `a` joined alone, then `b`
// joined: `before` is a's membership of the first generation, a's membership now is newer.
struct TwoGenerations {
  std::unique_ptr<KafkaConsumer> a, b;
  std::unique_ptr<KafkaGroupMetadata> before;
  std::string source;
  ~TwoGenerations() {
    if (b) (void)b->Close();
    if (a) (void)a->Close();
  }
};

void JoinTwoGenerations(const std::string& bootstrap, TwoGenerations& g,
                        const std::function<void()>& in_first) {
  testing::RealKafka* kafka = testing::RealKafka::Get();
  g.source = testing::RealKafka::UniqueName("seismo.txn.source");
  ASSERT_TRUE(kafka->CreateTopic(g.source, 2, 1, {}).ok());
  KafkaConsumerOptions o;
  o.brokers = bootstrap;
  o.group_id = testing::RealKafka::UniqueName("seismo.txn.group");
  o.topics = {g.source};
  o.properties = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "500"}};
  auto a = KafkaConsumer::Create(o, nullptr);
  ASSERT_TRUE(a) << a.error().message();
  g.a = std::move(*a);
  const auto deadline = std::chrono::steady_clock::now() + test::Patience(seconds(120));
  while (g.a->assignment().size() != 2 && std::chrono::steady_clock::now() < deadline)
    (void)g.a->Poll(10, milliseconds(100));
  ASSERT_EQ(g.a->assignment().size(), 2u);
  g.before = g.a->GroupMetadata();
  ASSERT_NE(g.before, nullptr);
  in_first();
  if (::testing::Test::HasFatalFailure()) return;
  // b joins: the group moves to a new generation, one partition each.
  auto b = KafkaConsumer::Create(o, nullptr);
  ASSERT_TRUE(b) << b.error().message();
  g.b = std::move(*b);
  while ((g.a->assignment().size() != 1 || g.b->assignment().size() != 1) &&
         std::chrono::steady_clock::now() < deadline) {
    (void)g.a->Poll(10, milliseconds(50));
    (void)g.b->Poll(10, milliseconds(50));
  }
  ASSERT_EQ(g.b->assignment().size(), 1u) << "the group did not rebalance";
}

// A zombie cannot publish (KIP-447): a transaction whose offsets commit carries a group
// membership of an older generation (a member that has not yet seen its partitions go) is
// refused and aborted, so none of its records is seen; the same producer's next transaction,
// with the membership of now, commits.
TEST_F(KafkaTransactions, AnOffsetsCommitOfAnOlderGenerationFencesItsTransaction) {
  TwoGenerations g;
  const auto t = test::Patience(seconds(60));
  std::map<TopicPartition, int64_t> offsets;
  JoinTwoGenerations(bootstrap_, g, [&] {
    offsets = {{{g.source, 0}, 0}, {{g.source, 1}, 0}};
    ASSERT_TRUE(producer_->BeginTransaction(seconds(30)).ok());
    ASSERT_TRUE(producer_->Produce(topic_, "p/a", "first", 0).ok());
    Status sent = producer_->SendOffsetsToTransaction(offsets, *g.before, t);
    ASSERT_TRUE(sent.ok()) << sent.message();
    ASSERT_TRUE(producer_->CommitTransaction(t).ok());
  });
  if (HasFatalFailure()) return;

  ASSERT_TRUE(producer_->BeginTransaction(seconds(30)).ok());
  ASSERT_TRUE(producer_->Produce(topic_, "p/a", "zombie", 0).ok());
  Status zombie = producer_->SendOffsetsToTransaction(offsets, *g.before, t);
  if (zombie.ok()) {
    zombie = producer_->CommitTransaction(t);
  } else {
    EXPECT_TRUE(producer_->AbortTransaction(t).ok());
  }
  EXPECT_FALSE(zombie.ok()) << "a transaction with an older generation's offsets committed";

  const std::unique_ptr<KafkaGroupMetadata> now = g.a->GroupMetadata();
  ASSERT_TRUE(producer_->BeginTransaction(seconds(30)).ok());
  ASSERT_TRUE(producer_->Produce(topic_, "p/a", "fresh", 0).ok());
  Status sent = producer_->SendOffsetsToTransaction({{g.a->assignment()[0], 0}}, *now, t);
  ASSERT_TRUE(sent.ok()) << sent.message();
  Status committed = producer_->CommitTransaction(t);
  ASSERT_TRUE(committed.ok()) << committed.message();
  EXPECT_EQ(Describe(ReadToEnd()),
            (std::map<int32_t, std::vector<std::string>>{{0, {"p/a='first'", "p/a='fresh'"}}}));
}

// The cluster's publish carries the owned partitions' offsets in its transaction (ADR 0024,
// "Zombies"): with the membership of an older generation it is refused (counted) and leaves
// nothing in the aggregates topic; with the membership of now it commits.
TEST_F(KafkaTransactions, AClusterPublishWithAnOlderGenerationsMembershipLeavesNothing) {
  TwoGenerations g;
  JoinTwoGenerations(bootstrap_, g, [] {});
  if (HasFatalFailure()) return;
  Config c;
  c.kafka.brokers = bootstrap_;
  c.kafka.topics = {g.source};
  c.cluster.aggregates_topic = topic_;
  c.cluster.instance_id = "a";
  Symbols symbols;
  auto node = ClusterNode::Create(c, "a", &symbols);
  ASSERT_TRUE(node) << node.error().message();
  const TopicPartition owned = g.a->assignment()[0];
  std::vector<ShardImage> images(1);
  const std::vector<std::optional<Pipeline::PartitionName>> names = {
      Pipeline::PartitionName{owned.topic, owned.partition}};
  RecordCounts counts;
  counts.documents = 3;
  Status stale = (*node)->Publish(images, names, {{owned, 3}}, {{{owned.topic, owned.partition}, counts}},
                                  g.before.get());
  EXPECT_FALSE(stale.ok());
  EXPECT_EQ((*node)->status().publish_offsets_refused, 1u);
  EXPECT_TRUE(ReadToEnd().empty()) << "a refused publish left records";

  const std::unique_ptr<KafkaGroupMetadata> now = g.a->GroupMetadata();
  Status fresh =
      (*node)->Publish(images, names, {{owned, 3}}, {{{owned.topic, owned.partition}, counts}}, now.get());
  ASSERT_TRUE(fresh.ok()) << fresh.message();
  const std::vector<Read> read = ReadToEnd();
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].key, CountsKey(owned.topic, owned.partition));
}

}  // namespace
}  // namespace seismo
