// A compacted topic on the real broker, as the cluster mode's aggregates topic will be
// (SPEC §9: per key the latest partial aggregate; an instance restores by reading the topic
// from its start, or from a stored offset). What that relies on: after compaction, reading
// from the beginning yields exactly the latest value of every key, in offset order; the
// offsets compaction removed are gaps, not losses (no lost offsets, no resets); and a
// position inside a compacted range reads on from the next record that is still there.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "integration/real_kafka.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "test_scale.h"

namespace seismo {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::RealKafka;

constexpr int kKeys = 20;
constexpr int kRounds = 5;

struct Record {
  int64_t offset;
  std::string key, value;
};

// Per key, the offset and value of its last record: what compaction keeps.
std::map<std::string, std::pair<int64_t, std::string>> LatestByKey(const std::vector<Record>& records) {
  std::map<std::string, std::pair<int64_t, std::string>> out;
  for (const Record& r : records) out[r.key] = {r.offset, r.value};
  return out;
}

// Starts every partition at the offset it is given (or the topic's start).
class StartAt : public KafkaRebalanceListener {
 public:
  explicit StartAt(std::map<TopicPartition, int64_t> offsets) : offsets_(std::move(offsets)) {}
  std::map<TopicPartition, int64_t> OnAssigned(const std::vector<TopicPartition>&) override {
    return offsets_;
  }
  void OnRevoking(const std::vector<TopicPartition>&) override {}

 private:
  std::map<TopicPartition, int64_t> offsets_;
};

class KafkaCompaction : public ::testing::Test {
 protected:
  void SetUp() override {
    kafka_ = RealKafka::Get();
    ASSERT_NE(kafka_, nullptr);
    topic_ = RealKafka::UniqueName("seismo.aggregates");
    // Segments roll every 100 ms and any dirty share is worth cleaning: compaction follows
    // the writes within seconds (the broker checks every second, scripts/kafka).
    Status s = kafka_->CreateTopic(topic_, 1, 1,
                                   {{"cleanup.policy", "compact"},
                                    {"segment.ms", "100"},
                                    {"min.cleanable.dirty.ratio", "0.01"},
                                    {"min.compaction.lag.ms", "0"}});
    ASSERT_TRUE(s.ok()) << s.message();
    KafkaProducerOptions po;
    po.brokers = kafka_->bootstrap_servers();
    auto producer = KafkaProducer::Create(po);
    ASSERT_TRUE(producer) << producer.error().message();
    producer_ = std::move(*producer);
  }

  void Produce(const std::string& key, const std::string& value) {
    ASSERT_TRUE(producer_->Produce(topic_, key, value, 0).ok());
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  }

  // Every record from `start` (or the beginning) up to the partition's end, and the
  // consumer's count of lost offsets and resets.
  std::vector<Record> ReadAll(std::optional<int64_t> start, uint64_t* lost, uint64_t* resets) {
    std::map<TopicPartition, int64_t> offsets;
    if (start) offsets[{topic_, 0}] = *start;
    StartAt listener(offsets);
    KafkaConsumerOptions o{kafka_->bootstrap_servers(), RealKafka::UniqueName("reader"), {topic_}, {}};
    auto consumer = KafkaConsumer::Create(o, &listener);
    EXPECT_TRUE(consumer) << consumer.error().message();
    auto marks = kafka_->Watermarks(topic_, 0);
    EXPECT_TRUE(marks);
    const int64_t end = marks ? marks->second : 0;
    std::vector<Record> out;
    const auto deadline = std::chrono::steady_clock::now() + test::Patience(seconds(60));
    while ((out.empty() || out.back().offset < end - 1) && std::chrono::steady_clock::now() < deadline) {
      for (const KafkaMessage& m : (*consumer)->Poll(500, milliseconds(100))) {
        out.push_back({m.offset(), std::string(m.key()), std::string(m.payload())});
      }
    }
    *lost = (*consumer)->stats().lost_offsets;
    *resets = (*consumer)->stats().offset_resets;
    return out;
  }

  RealKafka* kafka_ = nullptr;
  std::string topic_;
  std::unique_ptr<KafkaProducer> producer_;
};

TEST_F(KafkaCompaction, ReadingACompactedTopicGivesTheLatestValueOfEveryKeyAndItsGapsAreNoLoss) {
  std::map<std::string, std::string> latest;  // the model: what compaction must keep
  for (int round = 0; round < kRounds; ++round) {
    for (int k = 0; k < kKeys; ++k) {
      const std::string key = "bucket-" + std::to_string(k);
      const std::string value = "{\"round\":" + std::to_string(round) + ",\"key\":" + std::to_string(k) + "}";
      Produce(key, value);
      latest[key] = value;
    }
  }
  // Writes to another key roll the segments until the cleaner has compacted the buckets.
  const auto deadline = std::chrono::steady_clock::now() + test::Patience(seconds(120));
  std::vector<Record> records;
  uint64_t lost = 0, resets = 0;
  auto bucket_records = [&] {
    size_t n = 0;
    for (const Record& r : records) n += r.key.rfind("bucket-", 0) == 0 ? 1 : 0;
    return n;
  };
  int tick = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    Produce("tick", std::to_string(tick++));
    records = ReadAll(std::nullopt, &lost, &resets);
    if (bucket_records() == static_cast<size_t>(kKeys)) break;
    std::this_thread::sleep_for(milliseconds(500));
  }
  ASSERT_EQ(bucket_records(), static_cast<size_t>(kKeys)) << "not compacted within the deadline";

  // Exactly the latest value of every key, in offset order, with gaps where older values were.
  std::map<std::string, std::string> read;
  int64_t previous = -1;
  bool gaps = false;
  for (const Record& r : records) {
    EXPECT_GT(r.offset, previous);
    gaps = gaps || r.offset > previous + 1;
    previous = r.offset;
    if (r.key.rfind("bucket-", 0) == 0) {
      EXPECT_TRUE(read.emplace(r.key, r.value).second) << "key " << r.key << " read twice";
    }
  }
  EXPECT_EQ(read, latest);
  EXPECT_TRUE(gaps);
  EXPECT_EQ(lost, 0u) << "offsets removed by compaction counted as lost";
  EXPECT_EQ(resets, 0u);

  // A stored position that compaction removed (offset 1: the first round's second key, long
  // superseded) reads on from the next record still there; nothing is reported lost. The
  // cleaner goes on meanwhile: "tick" values that were already superseded when the topic was
  // read above may be gone by now (they were, when the reads were seconds apart: a loaded
  // machine under TSan), but the latest value of every key is read again at its offset, and
  // nothing appears that was not there before.
  std::vector<Record> from_one = ReadAll(1, &lost, &resets);
  ASSERT_FALSE(from_one.empty());
  std::map<int64_t, const Record*> before;  // the first read, after offset 1
  for (const Record& r : records) {
    if (r.offset > 1) before[r.offset] = &r;
  }
  ASSERT_FALSE(before.empty());
  EXPECT_EQ(from_one.front().offset, before.begin()->first) << "not the next record still there";
  for (const Record& r : from_one) {
    auto it = before.find(r.offset);
    ASSERT_NE(it, before.end()) << "offset " << r.offset << " was not there before";
    EXPECT_EQ(r.key, it->second->key);
    EXPECT_EQ(r.value, it->second->value);
  }
  EXPECT_EQ(LatestByKey(from_one), LatestByKey(records));
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(resets, 0u);
}

}  // namespace
}  // namespace seismo
