// KafkaConsumer and KafkaProducer against a real Kafka broker (suite
// KafkaConsumerTest, integration/real_kafka.h: topics and groups unique to the
// test) and, for what only it injects on cue (request errors, a broker down
// and up), librdkafka's mock cluster (suite MockKafkaConsumer: a cluster per
// test; its first group join takes about 3 s, SPEC §10). Every wait is bounded
// by a deadline well above that.
#include "seismo/ingest/kafka_consumer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "integration/real_kafka.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/mock_cluster.h"

namespace seismo {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int64_t kBaseTimestampMs = 1'790'000'000'000;  // 2026-09-21, an arbitrary fixed CreateTime

struct Received {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string payload;
  std::string key;
  std::optional<int64_t> timestamp_ms;
};

// Records rebalance callbacks; starts partitions at `start_offsets`; on
// revoke, commits what the test "processed" (as the pipeline does).
class RecordingListener : public KafkaRebalanceListener {
 public:
  std::map<TopicPartition, int64_t> OnAssigned(
      const std::vector<TopicPartition>& partitions) override {
    assigned.push_back(partitions);
    if (consumer != nullptr && query_committed_on_assign) {
      auto committed = consumer->Committed(partitions, seconds(5));
      committed_on_assign_ok = committed.has_value();
      if (committed) committed_on_assign = *committed;
    }
    return start_offsets;
  }
  void OnRevoking(const std::vector<TopicPartition>& partitions) override {
    revoked.push_back(partitions);
    if (consumer == nullptr) return;
    std::map<TopicPartition, int64_t> commit;
    for (const TopicPartition& tp : partitions) {
      auto it = processed_next.find(tp);
      if (it != processed_next.end()) commit[tp] = it->second;
    }
    if (!consumer->Commit(commit, CommitMode::kSync).ok()) ++commit_failures;
  }
  void Processed(const Received& r) { processed_next[{r.topic, r.partition}] = r.offset + 1; }

  std::map<TopicPartition, int64_t> start_offsets;
  std::vector<std::vector<TopicPartition>> assigned;
  std::vector<std::vector<TopicPartition>> revoked;
  std::map<TopicPartition, int64_t> processed_next;
  KafkaConsumer* consumer = nullptr;  // for commits on revoke; may stay null
  int commit_failures = 0;
  bool query_committed_on_assign = false;
  bool committed_on_assign_ok = false;
  std::map<TopicPartition, int64_t> committed_on_assign;
};

class KafkaConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UseCluster();
    if (HasFatalFailure()) return;
    KafkaProducerOptions options;
    options.brokers = bootstrap_;
    auto producer = KafkaProducer::Create(options);
    ASSERT_TRUE(producer.has_value()) << producer.error().message();
    producer_ = std::move(*producer);
  }

  virtual void UseCluster() {
    kafka_ = testing::RealKafka::Get();
    ASSERT_NE(kafka_, nullptr);
    bootstrap_ = kafka_->bootstrap_servers();
  }

  void CreateTopic(const std::string& name, int partitions) {
    const Status s =
        kafka_ != nullptr ? kafka_->CreateTopic(name, partitions) : cluster_->CreateTopic(name, partitions);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  // A topic or group name unique to this test (the real broker is shared).
  static std::string T(std::string_view base) { return testing::RealKafka::UniqueName(base); }

  // Produces `count` messages "m<i>" round-robin over `partitions` with
  // CreateTime kBaseTimestampMs + i, and waits for every acknowledgement.
  void ProduceRoundRobin(const std::string& topic, int partitions, int first, int count) {
    for (int i = first; i < first + count; ++i) {
      ASSERT_TRUE(producer_
                      ->Produce(topic, "k" + std::to_string(i), "m" + std::to_string(i),
                                i % partitions, kBaseTimestampMs + i)
                      .ok());
    }
    ASSERT_TRUE(producer_->Flush(seconds(10)).ok());
    ASSERT_EQ(producer_->stats().failed, 0u);
  }

  std::unique_ptr<KafkaConsumer> NewConsumer(const std::string& group, const std::string& topic,
                                             KafkaRebalanceListener* listener) {
    KafkaConsumerOptions options;
    options.brokers = bootstrap_;
    options.group_id = group;
    options.topics = {topic};
    // On the real broker, whose JVM may not answer for seconds on a loaded machine, a long
    // session: these consumers leave their group cleanly (Close) when a test moves partitions.
    options.properties = {{"session.timeout.ms", kafka_ != nullptr ? "30000" : "6000"},
                          {"heartbeat.interval.ms", "500"}};
    auto consumer = KafkaConsumer::Create(options, listener);
    EXPECT_TRUE(consumer.has_value()) << consumer.error().message();
    return consumer ? std::move(*consumer) : nullptr;
  }

  // Polls until `want` messages arrived in total or `limit` passed.
  static std::vector<Received> ConsumeUntil(KafkaConsumer& consumer, size_t want,
                                            milliseconds limit,
                                            RecordingListener* listener = nullptr) {
    std::vector<Received> out;
    const auto deadline = Clock::now() + limit;
    while (out.size() < want && Clock::now() < deadline) {
      KafkaMessageBatch batch = consumer.Poll(500, milliseconds(100));
      for (const KafkaMessage& m : batch) {
        out.push_back({std::string(m.topic()), m.partition(), m.offset(), std::string(m.payload()),
                       std::string(m.key()), m.timestamp_ms()});
        if (listener != nullptr) listener->Processed(out.back());
      }
    }
    return out;
  }

  // Polls for `duration`, returning whatever arrives.
  static std::vector<Received> ConsumeFor(KafkaConsumer& consumer, milliseconds duration) {
    return ConsumeUntil(consumer, SIZE_MAX, duration);
  }

  void ExpectNothingDropped(KafkaConsumer& consumer, const std::string& topic, int partitions) {
    for (int p = 0; p < partitions; ++p) {
      auto marks = consumer.QueryWatermarks({topic, p}, seconds(5));
      ASSERT_TRUE(marks.has_value()) << marks.error().message();
      EXPECT_EQ(marks->first, 0) << "the cluster dropped old data of partition " << p;
    }
  }

  testing::RealKafka* kafka_ = nullptr;   // the real broker; null on the mock
  std::unique_ptr<MockCluster> cluster_;  // MockKafkaConsumer only
  std::string bootstrap_;
  std::unique_ptr<KafkaProducer> producer_;
};

class MockKafkaConsumer : public KafkaConsumerTest {
 protected:
  void UseCluster() override {
    auto cluster = MockCluster::Create(3);
    ASSERT_TRUE(cluster.has_value()) << cluster.error().message();
    cluster_ = std::move(*cluster);
    bootstrap_ = cluster_->bootstrap_servers();
  }
};

// librdkafka 2.0 asserts when a cooperative-sticky consumer that never received an
// assignment is destroyed (librdkafka#4312, fixed in 2.3): a daemon stopped during its
// first group join must still end cleanly.
TEST_F(MockKafkaConsumer, CooperativeConsumerDestroyedBeforeItsFirstAssignmentEndsCleanly) {
  CreateTopic(T("coop"), 2);
  for (bool closed_first : {false, true}) {
    KafkaConsumerOptions options;
    options.brokers = bootstrap_;
    options.group_id = closed_first ? T("coop-closed") : T("coop");
    options.topics = {T("coop")};
    options.properties = {{"session.timeout.ms", "6000"},
                          {"partition.assignment.strategy", "cooperative-sticky"}};
    auto consumer = KafkaConsumer::Create(options, nullptr);
    ASSERT_TRUE(consumer.has_value()) << consumer.error().message();
    // The group answers the join (and so picks the assignor) but never the sync: no
    // assignment ever arrives.
    cluster_->InjectRequestErrors(/*SyncGroup*/ 14, 1000, /*REBALANCE_IN_PROGRESS*/ 27);
    const auto until = Clock::now() + seconds(5);
    while (Clock::now() < until) (void)(*consumer)->Poll(10, milliseconds(100));
    EXPECT_TRUE((*consumer)->assignment().empty());
    if (closed_first) EXPECT_TRUE((*consumer)->Close().ok());
    consumer->reset();  // must not abort the process
  }
}

TEST_F(KafkaConsumerTest, RoundTripAcrossPartitionsKeepsOffsetsKeysAndTimestamps) {
  constexpr int kPartitions = 4;
  constexpr int kCount = 4000;
  CreateTopic(T("roundtrip"), kPartitions);
  ProduceRoundRobin(T("roundtrip"), kPartitions, 0, kCount);

  RecordingListener listener;
  auto consumer = NewConsumer(T("g-roundtrip"), T("roundtrip"), &listener);
  ASSERT_NE(consumer, nullptr);
  // stats() is documented as callable from any thread while the poll thread works.
  std::atomic<bool> stop_reader{false};
  std::atomic<uint64_t> max_seen{0};
  std::thread stats_reader([&] {
    while (!stop_reader.load()) {
      const KafkaConsumerStats s = consumer->stats();
      if (s.messages > max_seen.load()) max_seen.store(s.messages);
      std::this_thread::sleep_for(milliseconds(1));
    }
  });
  std::vector<Received> got = ConsumeUntil(*consumer, kCount, seconds(60));
  stop_reader.store(true);
  stats_reader.join();
  EXPECT_LE(max_seen.load(), static_cast<uint64_t>(kCount));
  ASSERT_EQ(got.size(), static_cast<size_t>(kCount));

  // Message i went to partition i % 4 as its (i / 4)-th message.
  std::set<std::string> seen;
  for (const Received& r : got) {
    ASSERT_EQ(r.topic, T("roundtrip"));
    const int i = std::stoi(r.payload.substr(1));
    EXPECT_TRUE(seen.insert(r.payload).second) << "duplicate " << r.payload;
    EXPECT_EQ(r.partition, i % kPartitions) << r.payload;
    EXPECT_EQ(r.offset, i / kPartitions) << r.payload;
    EXPECT_EQ(r.key, "k" + std::to_string(i));
    ASSERT_TRUE(r.timestamp_ms.has_value());
    EXPECT_EQ(*r.timestamp_ms, kBaseTimestampMs + i);
  }
  ASSERT_EQ(listener.assigned.size(), 1u);
  EXPECT_EQ(listener.assigned[0].size(), static_cast<size_t>(kPartitions));

  // Stats catch up: everything consumed, no lag, per-partition positions.
  // (Watermarks are cached from fetch responses, so they may trail briefly.)
  auto caught_up = [](const KafkaConsumerStats& s) {
    if (s.partitions.size() != kPartitions) return false;
    for (const KafkaPartitionStats& p : s.partitions) {
      if (p.next_offset != kCount / kPartitions || p.high_watermark != kCount / kPartitions) {
        return false;
      }
    }
    return true;
  };
  KafkaConsumerStats stats;
  const auto deadline = Clock::now() + seconds(5);
  do {
    EXPECT_TRUE(consumer->Poll(100, milliseconds(50)).empty());
    stats = consumer->stats();
  } while (!caught_up(stats) && Clock::now() < deadline);
  EXPECT_EQ(stats.messages, static_cast<uint64_t>(kCount));
  EXPECT_GT(stats.bytes, static_cast<uint64_t>(kCount) * 2);
  EXPECT_EQ(stats.total_lag, 0);
  ASSERT_EQ(stats.partitions.size(), static_cast<size_t>(kPartitions));
  for (const KafkaPartitionStats& p : stats.partitions) {
    EXPECT_EQ(p.next_offset, kCount / kPartitions) << ToString(p.tp);
    EXPECT_EQ(p.high_watermark, kCount / kPartitions) << ToString(p.tp);
    EXPECT_EQ(p.lag, 0);
    EXPECT_FALSE(p.paused);
  }
  ExpectNothingDropped(*consumer, T("roundtrip"), kPartitions);

  ASSERT_TRUE(consumer->Close().ok());
  ASSERT_EQ(listener.revoked.size(), 1u);  // Close() revokes through the listener
  EXPECT_EQ(listener.revoked[0].size(), static_cast<size_t>(kPartitions));
  EXPECT_TRUE(consumer->assignment().empty());
}

TEST_F(KafkaConsumerTest, PauseStopsDeliveryAndResumeLosesNothing) {
  CreateTopic(T("pause"), 2);
  ProduceRoundRobin(T("pause"), 2, 0, 1000);
  auto consumer = NewConsumer(T("g-pause"), T("pause"), nullptr);
  ASSERT_NE(consumer, nullptr);

  std::vector<Received> got = ConsumeUntil(*consumer, 1, seconds(15));
  ASSERT_FALSE(got.empty());
  ASSERT_EQ(consumer->assignment().size(), 2u);

  // Pause partition 0 only: what follows comes from partition 1 alone.
  ASSERT_TRUE(consumer->Pause({{T("pause"), 0}}).ok());
  EXPECT_EQ(consumer->stats().paused_partitions, 1u);
  auto count_in = [&got](int32_t partition) {
    return std::count_if(got.begin(), got.end(),
                         [partition](const Received& r) { return r.partition == partition; });
  };
  const auto p1_deadline = Clock::now() + seconds(10);
  while (count_in(1) < 500 && Clock::now() < p1_deadline) {
    for (const Received& r : ConsumeUntil(*consumer, SIZE_MAX, milliseconds(100))) {
      EXPECT_EQ(r.partition, 1) << "delivery from a paused partition, offset " << r.offset;
      got.push_back(r);
    }
  }
  ASSERT_EQ(count_in(1), 500);

  // Pause everything, produce more: nothing arrives while paused.
  ASSERT_TRUE(consumer->PauseAll().ok());
  EXPECT_EQ(consumer->stats().paused_partitions, 2u);
  ProduceRoundRobin(T("pause"), 2, 1000, 500);
  EXPECT_TRUE(ConsumeFor(*consumer, milliseconds(1000)).empty());

  ASSERT_TRUE(consumer->ResumeAll().ok());
  EXPECT_EQ(consumer->stats().paused_partitions, 0u);
  for (const Received& r : ConsumeUntil(*consumer, 1500 - got.size(), seconds(10))) {
    got.push_back(r);
  }
  // Exactly once each: no loss, no repeat across pause/resume.
  std::set<std::pair<int32_t, int64_t>> positions;
  for (const Received& r : got) {
    EXPECT_TRUE(positions.insert({r.partition, r.offset}).second)
        << "repeated " << r.partition << "/" << r.offset;
  }
  EXPECT_EQ(positions.size(), 1500u);
  EXPECT_TRUE(ConsumeFor(*consumer, milliseconds(300)).empty());
}

TEST_F(KafkaConsumerTest, AssignedStartOffsetsAreHonoured) {
  CreateTopic(T("offsets"), 3);
  ProduceRoundRobin(T("offsets"), 3, 0, 300);  // 100 per partition

  RecordingListener listener;
  listener.start_offsets = {{{T("offsets"), 0}, 40}, {{T("offsets"), 1}, 99}};  // partition 2: none
  auto consumer = NewConsumer(T("g-offsets"), T("offsets"), &listener);
  ASSERT_NE(consumer, nullptr);
  listener.consumer = consumer.get();
  listener.query_committed_on_assign = true;
  const size_t expected = 60 + 1 + 100;
  std::vector<Received> got = ConsumeUntil(*consumer, expected, seconds(15));
  EXPECT_TRUE(ConsumeFor(*consumer, milliseconds(300)).empty());
  ASSERT_EQ(got.size(), expected);
  EXPECT_TRUE(listener.committed_on_assign_ok);  // Committed() works inside OnAssigned()
  EXPECT_TRUE(listener.committed_on_assign.empty());  // nothing committed in this group yet

  std::map<int32_t, std::vector<int64_t>> offsets;
  for (const Received& r : got) offsets[r.partition].push_back(r.offset);
  ASSERT_EQ(offsets[0].size(), 60u);
  EXPECT_EQ(offsets[0].front(), 40);
  EXPECT_EQ(offsets[0].back(), 99);
  ASSERT_EQ(offsets[1].size(), 1u);
  EXPECT_EQ(offsets[1].front(), 99);
  ASSERT_EQ(offsets[2].size(), 100u);  // no start offset: auto.offset.reset=earliest
  EXPECT_EQ(offsets[2].front(), 0);
  for (auto& [partition, list] : offsets) {
    for (size_t i = 1; i < list.size(); ++i) EXPECT_EQ(list[i], list[i - 1] + 1);
  }
}

TEST_F(KafkaConsumerTest, CommitOnRevokeIsWhereTheNextMemberStarts) {
  CreateTopic(T("handover"), 2);
  ProduceRoundRobin(T("handover"), 2, 0, 200);  // 100 per partition

  // First member processes 30 messages of partition 0 only, commits on Close().
  RecordingListener first_listener;
  {
    auto first = NewConsumer(T("g-handover"), T("handover"), &first_listener);
    ASSERT_NE(first, nullptr);
    first_listener.consumer = first.get();
    std::vector<Received> got = ConsumeUntil(*first, 1, seconds(15));
    ASSERT_FALSE(got.empty());
    first_listener.processed_next = {{{T("handover"), 0}, 30}, {{T("handover"), 1}, 0}};
    ASSERT_TRUE(first->Close().ok());
    ASSERT_EQ(first_listener.revoked.size(), 1u);
    // A member leaving commits before its LeaveGroup: the group is still stable.
    EXPECT_EQ(first_listener.commit_failures, 0);
  }

  // The next member has no checkpointed offsets: it starts at the commits.
  RecordingListener second_listener;
  auto second = NewConsumer(T("g-handover"), T("handover"), &second_listener);
  ASSERT_NE(second, nullptr);
  auto committed = second->Committed({{T("handover"), 0}, {T("handover"), 1}}, seconds(5));
  ASSERT_TRUE(committed.has_value()) << committed.error().message();
  EXPECT_EQ(*committed,
            (std::map<TopicPartition, int64_t>{{{T("handover"), 0}, 30}, {{T("handover"), 1}, 0}}));
  std::vector<Received> got = ConsumeUntil(*second, 70 + 100, seconds(60));
  ASSERT_EQ(got.size(), 170u);
  std::map<int32_t, int64_t> first_offset;
  for (const Received& r : got) {
    if (first_offset.count(r.partition) == 0) first_offset[r.partition] = r.offset;
  }
  EXPECT_EQ(first_offset[0], 30);
  EXPECT_EQ(first_offset[1], 0);
}

TEST_F(KafkaConsumerTest, TwoMembersSplitPartitionsAndTogetherSeeEachMessageOnce) {
  constexpr int kPartitions = 6;
  constexpr int kCount = 3000;
  CreateTopic(T("split"), kPartitions);
  ProduceRoundRobin(T("split"), kPartitions, 0, kCount);

  // Member A joins alone and holds its partitions paused, so it has
  // processed nothing when B joins: the mock refuses commits while a group
  // re-joins (ADR 0003), so a hand-over after processing could repeat data.
  RecordingListener listener_a;
  RecordingListener listener_b;
  auto a = NewConsumer(T("g-split"), T("split"), &listener_a);
  ASSERT_NE(a, nullptr);
  listener_a.consumer = a.get();
  ASSERT_TRUE(a->PauseAll().ok());
  const auto join_deadline = Clock::now() + seconds(10);
  while (a->assignment().empty() && Clock::now() < join_deadline) {
    EXPECT_TRUE(a->Poll(100, milliseconds(100)).empty());
  }
  ASSERT_EQ(a->assignment().size(), static_cast<size_t>(kPartitions));
  EXPECT_EQ(a->stats().paused_partitions, static_cast<size_t>(kPartitions));

  auto b = NewConsumer(T("g-split"), T("split"), &listener_b);
  ASSERT_NE(b, nullptr);
  listener_b.consumer = b.get();

  // Poll both members from this thread, alternately, until everything is in.
  std::vector<Received> from_a;
  std::vector<Received> from_b;
  bool resumed = false;
  uint64_t last_rebalances = 0;
  auto stable_since = Clock::now();
  const auto deadline = Clock::now() + seconds(35);
  while (from_a.size() + from_b.size() < kCount && Clock::now() < deadline) {
    for (const Received& r : ConsumeUntil(*a, SIZE_MAX, milliseconds(50), &listener_a)) {
      from_a.push_back(r);
    }
    for (const Received& r : ConsumeUntil(*b, SIZE_MAX, milliseconds(50), &listener_b)) {
      from_b.push_back(r);
    }
    // Resume only once the group has settled: both assigned, together covering
    // the topic, and no further rebalance for 2 s (a pending second rebalance
    // would move partitions A already read, and the mock refuses the commit).
    const uint64_t rebalances = a->stats().rebalances + b->stats().rebalances;
    const bool covered = !b->assignment().empty() && a->assignment().size() + b->assignment().size() == kPartitions;
    if (!covered || rebalances != last_rebalances) {
      last_rebalances = rebalances;
      stable_since = Clock::now();
    }
    if (!resumed && covered && Clock::now() - stable_since > seconds(2)) {
      ASSERT_TRUE(a->ResumeAll().ok());
      resumed = true;
    }
  }
  EXPECT_TRUE(resumed);
  EXPECT_TRUE(from_a.empty() == false && from_b.empty() == false)
      << "a: " << from_a.size() << ", b: " << from_b.size();
  EXPECT_GE(listener_a.revoked.size(), 1u);  // A gave up its first assignment to rebalance

  std::set<std::pair<int32_t, int64_t>> seen;
  for (const auto* list : {&from_a, &from_b}) {
    for (const Received& r : *list) {
      EXPECT_TRUE(seen.insert({r.partition, r.offset}).second)
          << "seen twice: " << r.partition << "/" << r.offset;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kCount));

  // The final assignments are disjoint and cover the topic.
  std::vector<TopicPartition> assigned_a = a->assignment();
  std::vector<TopicPartition> assigned_b = b->assignment();
  std::set<TopicPartition> all(assigned_a.begin(), assigned_a.end());
  for (const TopicPartition& tp : assigned_b) {
    EXPECT_TRUE(all.insert(tp).second) << ToString(tp) << " assigned to both";
  }
  EXPECT_EQ(all.size(), static_cast<size_t>(kPartitions));
  ExpectNothingDropped(*a, T("split"), kPartitions);
}

TEST_F(MockKafkaConsumer, BrokerDownThenUpResumesWithoutLossOrRepeat) {
  constexpr int kPartitions = 3;  // one leader per broker
  CreateTopic(T("outage"), kPartitions);
  ProduceRoundRobin(T("outage"), kPartitions, 0, 1500);
  auto consumer = NewConsumer(T("g-outage"), T("outage"), nullptr);
  ASSERT_NE(consumer, nullptr);
  std::vector<Received> got = ConsumeUntil(*consumer, 1, seconds(15));
  ASSERT_FALSE(got.empty());

  // Every broker goes down: librdkafka reports that for certain (ERR__ALL_BROKERS_DOWN),
  // where losing one idle connection may pass unreported. Consume through the outage until
  // the consumer has counted it, not for a fixed time.
  for (int32_t b = 1; b <= kPartitions; ++b) ASSERT_TRUE(cluster_->SetBrokerDown(b).ok());
  const auto outage_deadline = Clock::now() + seconds(60);
  while (consumer->stats().errors == 0 && Clock::now() < outage_deadline) {
    for (const Received& r : ConsumeFor(*consumer, milliseconds(100))) got.push_back(r);
  }
  EXPECT_GT(consumer->stats().errors, 0u) << "the outage was never reported";
  for (int32_t b = 1; b <= kPartitions; ++b) ASSERT_TRUE(cluster_->SetBrokerUp(b).ok());
  for (const Received& r : ConsumeUntil(*consumer, 1500 - got.size(), seconds(60))) {
    got.push_back(r);
  }

  std::set<std::pair<int32_t, int64_t>> seen;
  for (const Received& r : got) {
    EXPECT_TRUE(seen.insert({r.partition, r.offset}).second)
        << "repeated " << r.partition << "/" << r.offset;
  }
  EXPECT_EQ(seen.size(), 1500u);
}

// A commit the broker refuses is returned and counted once (status `commit_failures`, the
// metric seismo_consumer_commit_failures_total); the next commit that succeeds moves the offsets.
TEST_F(MockKafkaConsumer, RefusedCommitIsCountedOnce) {
  CreateTopic(T("refused"), 1);
  ProduceRoundRobin(T("refused"), 1, 0, 10);
  auto consumer = NewConsumer(T("g-refused"), T("refused"), nullptr);
  ASSERT_NE(consumer, nullptr);
  ASSERT_EQ(ConsumeUntil(*consumer, 10, seconds(60)).size(), 10u);
  const std::map<TopicPartition, int64_t> next = {{{T("refused"), 0}, 10}};

  cluster_->InjectRequestErrors(/*OffsetCommit*/ 8, 1, /*OFFSET_METADATA_TOO_LARGE*/ 12);
  EXPECT_FALSE(consumer->Commit(next, CommitMode::kSync).ok());
  EXPECT_EQ(consumer->stats().commit_failures, 1u);

  ASSERT_TRUE(consumer->Commit(next, CommitMode::kSync).ok());
  EXPECT_EQ(consumer->stats().commit_failures, 1u);
  auto committed = consumer->Committed({{T("refused"), 0}}, seconds(10));
  ASSERT_TRUE(committed.has_value()) << committed.error().message();
  EXPECT_EQ(committed->at({T("refused"), 0}), 10);
}

}  // namespace
}  // namespace seismo
