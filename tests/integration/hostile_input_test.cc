// Hostile input through a running daemon: truncated documents, deep nesting,
// a 100 MB document, NUL bytes, invalid UTF-8, numbers out of range and wrong
// types in every field the parser reads. Each is rejected with its reason,
// counted, dead-lettered (file and Kafka topic), and the daemon keeps serving
// and counting the good documents around them. Kafka is the shared real broker
// (integration/real_kafka.h), each test with its own topics and groups.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "integration/real_kafka.h"
#include "seismo/app/daemon.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/signature/generator.h"
#include "support/wait_for.h"
#include "test_scale.h"

namespace seismo {
namespace {

using test::Patience;

namespace fs = std::filesystem;

// One good document of each shape; every hostile case below is one of them with one change.
const std::string kGoodBhr =
    R"({"type":"bhr","application":{"buildId":"20261117090501","channel":"nightly","name":"Firefox","version":"147.0a1"},"payload":{"timeSinceLastPing":60000,"modules":[["xul.pdb","ABC"]],"hangs":[{"duration":300,"thread":"Gecko","process":"default","stack":["a",[0,"1f"]]}]}})";
const std::string kGoodProcessed =
    R"({"uuid":"p1","build":"20261117090501","release_channel":"release","product":"Firefox","version":"146.0","submitted_timestamp":"2026-11-20T10:00:00Z","json_dump":{"system_info":{"os":"Windows NT"},"crash_info":{"crashing_thread":0},"threads":[{"frames":[{"function":"f"}]}]}})";
const std::string kGoodCrashPing =
    R"({"type":"crash","clientId":"install-1","application":{"buildId":"20261117090501","channel":"release","name":"Firefox","version":"146.0"},"environment":{"system":{"os":{"name":"Windows_NT"}}},"payload":{"processType":"main","crashId":"c1","metadata":{},"stackTraces":{"crash_info":{"type":"EXCEPTION","crashing_thread":0},"threads":[{"frames":[{"ip":"0x1","module_index":0}]}],"modules":[{"filename":"xul.dll"}]}}})";

const std::string kGood =
    R"({"type":"main","id":"g","application":{"buildId":"20261117090501","channel":"release","name":"Firefox","version":"146.0"},"environment":{"system":{"os":{"name":"Linux"}}},"payload":{"info":{"reason":"shutdown","subsessionLength":3600},"threadHangStats":[{"name":"Gecko","hangs":[{"stack":["a","b"],"histogram":{"values":{"255":1}}}]}]}})";

// Replaces the first `from` in kGood (or `base`) with `to`.
std::string With(const std::string& from, const std::string& to, const std::string& base = kGood) {
  std::string s = base;
  size_t pos = s.find(from);
  if (pos == std::string::npos) return "TEST-BUG";
  s.replace(pos, from.size(), to);
  return s;
}

struct Hostile {
  std::string doc;
  RejectReason reason;
};

std::vector<Hostile> Corpus() {
  std::vector<Hostile> v;
  for (size_t cut : {1u, 10u, 100u, 200u, 300u}) v.push_back({kGood.substr(0, cut), RejectReason::kMalformedJson});
  v.push_back({std::string(5000, '[') + std::string(5000, ']'), RejectReason::kTooDeep});
  v.push_back({With(R"("payload":)", R"("deep":)" + std::string(300, '[') + std::string(300, ']') + R"(,"payload":)"),
               RejectReason::kTooDeep});
  v.push_back({With(R"("id":"g")", R"("id":"g","pad":")" + std::string(100u << 20, 'x') + "\""), RejectReason::kTooLarge});
  v.push_back({With(R"("id":"g")", std::string("\"id\":\"g\0\"", 9)), RejectReason::kMalformedJson});
  v.push_back({std::string("\0\0\0", 3), RejectReason::kMalformedJson});
  v.push_back({With(R"("name":"Firefox")", "\"name\":\"Fire\xff\xfe" "fox\""), RejectReason::kInvalidUtf8});
  v.push_back({With(R"("name":"Firefox")", "\"name\":\"\xed\xa0\x80\""), RejectReason::kInvalidUtf8});  // surrogate
  v.push_back({With("3600", "1e400"), RejectReason::kBadUsage});  // valid JSON, out of range
  v.push_back({With("3600", "99999999999999999999999"), RejectReason::kBadUsage});
  v.push_back({With("3600", "-1"), RejectReason::kBadUsage});
  v.push_back({With("3600", "36.5"), RejectReason::kBadUsage});
  v.push_back({With(R"("255":1)", R"("255":99999999999999999999)"), RejectReason::kBadHistogram});
  v.push_back({With(R"("255":1)", R"("1e3":1)"), RejectReason::kBadHistogram});
  // 1.13 x 10^12 hangs of 8191 ms: the weighted sum does not fit 64 bits.
  v.push_back({With(R"("255":1)", R"("8191":1130000000000)"), RejectReason::kHangOverflow});
  // Wrong types in every field the parser reads.
  v.push_back({With(R"("type":"main")", R"("type":7)"), RejectReason::kWrongType});
  v.push_back({With(R"("id":"g")", R"("id":[])"), RejectReason::kWrongType});
  v.push_back({With(R"("buildId":"20261117090501")", R"("buildId":20261117090501)"), RejectReason::kWrongType});
  v.push_back({With(R"("channel":"release")", R"("channel":{})"), RejectReason::kWrongType});
  v.push_back({With(R"("version":"146.0")", R"("version":146)"), RejectReason::kWrongType});
  v.push_back({With(R"("name":"Linux")", R"("name":true)"), RejectReason::kWrongType});
  v.push_back({With(R"("environment":{)", R"("environment":[],"x":{)"), RejectReason::kWrongType});
  v.push_back({With(R"("application":{)", R"("application":"x","y":{)"), RejectReason::kWrongType});
  v.push_back({With(R"("payload":{)", R"("payload":[],"p":{)"), RejectReason::kWrongType});
  v.push_back({With(R"("info":{)", R"("info":3,"i":{)"), RejectReason::kWrongType});
  v.push_back({With(R"("reason":"shutdown")", R"("reason":1)"), RejectReason::kWrongType});
  v.push_back({With(R"("threadHangStats":[)", R"("threadHangStats":"x","t":[)"), RejectReason::kWrongType});
  v.push_back({With(R"("name":"Gecko")", R"("name":5)"), RejectReason::kWrongType});
  v.push_back({With(R"("hangs":[)", R"("hangs":{},"h":[)"), RejectReason::kWrongType});
  v.push_back({With(R"("stack":["a","b"])", R"("stack":"ab")"), RejectReason::kWrongType});
  v.push_back({With(R"("histogram":{)", R"("histogram":[],"hh":{)"), RejectReason::kWrongType});
  v.push_back({With(R"("values":{)", R"("values":[1],"vv":{)"), RejectReason::kWrongType});
  v.push_back(
      {With(R"("version":"146.0")", R"("version":"146.0","displayVersion":146)"), RejectReason::kWrongType});
  v.push_back({With(R"("name":"Firefox")", R"("name":["Firefox"])"), RejectReason::kWrongType});
  v.push_back(
      {With(R"("id":"g")", R"("id":"g","submission_timestamp":1795000000000)"), RejectReason::kWrongType});
  v.push_back(
      {With(R"("id":"g")", R"("id":"g","submission_timestamp":"yesterday")"), RejectReason::kBadTimestamp});
  v.push_back({With(R"("id":"g")", R"("id":"g","creationDate":{})"), RejectReason::kWrongType});
  v.push_back(
      {With(R"("threadHangStats":[)", R"("childPayloads":7,"threadHangStats":[)"), RejectReason::kWrongType});
  v.push_back({With(R"("threadHangStats":[)", R"("childPayloads":[5],"threadHangStats":[)"),
               RejectReason::kWrongType});
  v.push_back(
      {With(R"("threadHangStats":[)", R"("childPayloads":[{"threadHangStats":{}}],"threadHangStats":[)"),
       RejectReason::kWrongType});
  v.push_back({With(R"("threadHangStats":[)", R"("keyedHistograms":[],"threadHangStats":[)"),
               RejectReason::kWrongType});
  v.push_back({With(R"("threadHangStats":[)",
                    R"("keyedHistograms":{"SUBPROCESS_CRASHES_WITH_DUMP":5},"threadHangStats":[)"),
               RejectReason::kWrongType});
  v.push_back({With(R"("threadHangStats":[)",
                    R"("keyedHistograms":{"SUBPROCESS_CRASHES_WITH_DUMP":{"gpu":"x"}},"threadHangStats":[)"),
               RejectReason::kWrongType});
  // A count histogram's sum is a histogram value: not an integer is bad_histogram, like bucket counts.
  v.push_back(
      {With(R"("threadHangStats":[)",
            R"("keyedHistograms":{"SUBPROCESS_CRASHES_WITH_DUMP":{"gpu":{"sum":"3"}}},"threadHangStats":[)"),
       RejectReason::kBadHistogram});
  v.push_back(
      {With(R"("threadHangStats":[)",
            R"("keyedHistograms":{"SUBPROCESS_CRASHES_WITH_DUMP":{"gpu":{"sum":-1}}},"threadHangStats":[)"),
       RejectReason::kBadHistogram});
  // bhr: every field its hangs are read from.
  v.push_back({With(R"("duration":300)", R"("duration":"300")", kGoodBhr), RejectReason::kBadHang});
  v.push_back({With(R"("thread":"Gecko")", R"("thread":5)", kGoodBhr), RejectReason::kWrongType});
  v.push_back(
      {With(R"("process":"default")", R"("process":["default"])", kGoodBhr), RejectReason::kWrongType});
  v.push_back({With(R"("hangs":[)", R"("hangs":{},"h":[)", kGoodBhr), RejectReason::kWrongType});
  v.push_back({With(R"("timeSinceLastPing":60000)", R"("timeSinceLastPing":"60000")", kGoodBhr),
               RejectReason::kBadUsage});
  // Socorro processed crash.
  v.push_back(
      {With(R"("submitted_timestamp":"2026-11-20T10:00:00Z")", R"("submitted_timestamp":5)", kGoodProcessed),
       RejectReason::kWrongType});
  v.push_back(
      {With(R"("submitted_timestamp":"2026-11-20T10:00:00Z")", R"("date_processed":{})", kGoodProcessed),
       RejectReason::kWrongType});
  v.push_back({With(R"("release_channel":"release")", R"("release_channel":1)", kGoodProcessed),
               RejectReason::kWrongType});
  v.push_back({With(R"("version":"146.0")", R"("version":[146])", kGoodProcessed), RejectReason::kWrongType});
  v.push_back({With(R"("os":"Windows NT")", R"("os":7)", kGoodProcessed), RejectReason::kWrongType});
  v.push_back({With(R"("build":"20261117090501")", R"("build":20261117090501)", kGoodProcessed),
               RejectReason::kWrongType});
  // Telemetry crash ping.
  v.push_back(
      {With(R"("processType":"main")", R"("processType":1)", kGoodCrashPing), RejectReason::kWrongType});
  v.push_back({With(R"("crashId":"c1")", R"("crashId":2)", kGoodCrashPing), RejectReason::kWrongType});
  v.push_back(
      {With(R"("clientId":"install-1")", R"("clientId":{})", kGoodCrashPing), RejectReason::kWrongType});
  v.push_back({With(R"("type":"crash")", R"("type":"crash","creationDate":false)", kGoodCrashPing),
               RejectReason::kWrongType});
  v.push_back({R"({"type":"bhr","application":{"buildId":"20261117090501"},"payload":{"timeSinceLastPing":5,"hangs":[{"duration":"x","stack":["a"]}]}})",
               RejectReason::kBadHang});
  v.push_back({R"({"type":"bhr","application":{"buildId":"20261117090501"},"payload":{"timeSinceLastPing":5,"modules":"x","hangs":[]}})",
               RejectReason::kWrongType});
  v.push_back({R"({"type":"crash","application":{"buildId":"20261117090501"}})", RejectReason::kBadCrash});
  v.push_back({R"({"json_dump":{"threads":"nope"},"build":"x"})", RejectReason::kBadBuildId});
  v.push_back({"[]", RejectReason::kNotObject});
  v.push_back({"null", RejectReason::kNotObject});
  return v;
}

// Parses a dead letter; the fields every letter carries.
struct Letter {
  std::string reason, source;
  int64_t partition = -2, offset = -2;
};

Letter ParseLetter(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  Letter l;
  if (parser.parse(json.data(), json.size()).get(e) != simdjson::SUCCESS) return l;
  l.reason = std::string(std::string_view(e["reason"]));
  l.source = std::string(std::string_view(e["source"]));
  l.partition = int64_t(e["partition"]);
  l.offset = int64_t(e["offset"]);
  return l;
}

// Documents whose fate is decided: counted under their kind, or rejected. A document is
// parsed (and counted in `documents`) before its turn decides it, and a turn may hold it for
// later turns (ADR 0017: the first documents of a source wait for a reference, a Kafka
// partition's until it delivers more or goes idle), so a test waits for this, not for
// `documents`.
uint64_t Decided(const RecordCounts& c) {
  uint64_t n = 0;
  for (uint64_t k : c.by_kind) n += k;
  for (uint64_t r : c.rejected) n += r;
  return n;
}

TEST(KafkaHostileInput, EveryBadDocumentIsRejectedCountedDeadLetteredAndTheDaemonKeepsServing) {
  fs::path dir = fs::temp_directory_path() / ("seismo-hostile-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  testing::RealKafka* kafka = testing::RealKafka::Get();
  ASSERT_NE(kafka, nullptr);
  const std::string dead_topic = testing::RealKafka::UniqueName("seismo.dead");
  ASSERT_TRUE(kafka->CreateTopic(dead_topic, 1).ok());

  std::vector<Hostile> hostile = Corpus();
  std::map<RejectReason, uint64_t> expected;
  std::map<int64_t, std::string> reason_of_line;
  const std::string input = (dir / "hostile.ndjson").string();
  {
    std::ofstream f(input, std::ios::binary);
    int64_t line = 0;
    for (const Hostile& h : hostile) {
      ASSERT_NE(h.doc, "TEST-BUG");
      f << kGood << "\n" << h.doc << "\n";
      line += 2;
      reason_of_line[line] = std::string(RejectReasonName(h.reason));
      ++expected[h.reason];
    }
    // The documents every case was made from are good.
    f << kGood << "\n" << kGoodBhr << "\n" << kGoodProcessed << "\n" << kGoodCrashPing << "\n";
  }
  Config c;
  c.sources.files = {input};
  c.kafka.topics = {};
  c.kafka.brokers = kafka->bootstrap_servers();
  c.ingest.dead_letter_file = (dir / "dead.ndjson").string();
  c.ingest.dead_letter_topic = dead_topic;
  c.ingest.threads = 2;
  c.aggregate.shards = 2;
  auto gen = SignatureGenerator::LoadDefault();
  ASSERT_TRUE(gen);
  SystemClock clock;
  Daemon daemon(c, gen->get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  const uint64_t total = hostile.size() * 2 + 4;
  test::WaitFor([&] { return Decided(daemon.counts()) >= total; }, std::chrono::seconds(60));
  RecordCounts counts = daemon.counts();
  ASSERT_EQ(Decided(counts), total);
  ASSERT_EQ(counts.documents, total);
  EXPECT_EQ(counts.by_kind[0], hostile.size() + 1);  // every good document around them
  EXPECT_EQ(counts.by_kind[1], 1u);
  EXPECT_EQ(counts.by_kind[2], 2u);
  for (size_t r = 0; r < kRejectReasonCount; ++r) {
    auto reason = static_cast<RejectReason>(r);
    EXPECT_EQ(counts.rejected[r], expected[reason]) << RejectReasonName(reason);
  }
  // Still serving: published snapshots catch up with every good main ping.
  int64_t pings = 0;
  test::WaitFor(
      [&] {
        pings = 0;
        if (auto snap = daemon.snapshot()) {
          for (const SeriesData* series : snap->table(Table::kUsage)) {
            if (snap->Text(series->key[usage_field::kSource]) == "main") pings += series->total()[1];
          }
        }
        return pings == static_cast<int64_t>(hostile.size() + 1);
      },
      std::chrono::seconds(20), std::chrono::milliseconds(100));
  EXPECT_EQ(pings, static_cast<int64_t>(hostile.size() + 1));
  daemon.Stop();
  EXPECT_EQ(daemon.status().dead_letter_failures, 0u);

  // The dead-letter file has one line per reject, with its reason, file and line number.
  std::ifstream dead(dir / "dead.ndjson");
  std::string line;
  std::map<int64_t, std::string> lettered;  // parse threads write in any order
  while (std::getline(dead, line)) {
    Letter l = ParseLetter(line);
    EXPECT_EQ(l.source, input);
    EXPECT_EQ(l.partition, -1);
    EXPECT_TRUE(lettered.emplace(l.offset, l.reason).second) << "line " << l.offset << " dead-lettered twice";
  }
  EXPECT_EQ(lettered, reason_of_line);
  // ... and so has the Kafka topic, keyed by reason.
  KafkaConsumerOptions o{
      kafka->bootstrap_servers(), testing::RealKafka::UniqueName("dead-reader"), {dead_topic}, {}};
  auto consumer = KafkaConsumer::Create(o, nullptr);
  ASSERT_TRUE(consumer);
  std::map<int64_t, std::string> produced;
  const auto deadline = std::chrono::steady_clock::now() + Patience(std::chrono::seconds(30));
  while (produced.size() < hostile.size() && std::chrono::steady_clock::now() < deadline) {
    for (const KafkaMessage& m : (*consumer)->Poll(100, std::chrono::milliseconds(200))) {
      Letter l = ParseLetter(m.payload());
      EXPECT_EQ(m.key(), l.reason);
      produced[l.offset] = l.reason;
    }
  }
  EXPECT_EQ(produced, reason_of_line);
  (void)(*consumer)->Close();
  fs::remove_all(dir);
}

// Rejects read from Kafka are dead-lettered to a Kafka topic with the topic, partition
// and offset they were read from, and their reason (as the message key too).
TEST(KafkaHostileInput, RejectsFromKafkaReachTheDeadLetterTopicWithTopicPartitionOffsetAndReason) {
  testing::RealKafka* kafka = testing::RealKafka::Get();
  ASSERT_NE(kafka, nullptr);
  const std::string topic = testing::RealKafka::UniqueName("telemetry.any");
  const std::string dead_topic = testing::RealKafka::UniqueName("seismo.dead");
  constexpr int kPartitions = 3;
  ASSERT_TRUE(kafka->CreateTopic(topic, kPartitions).ok());
  ASSERT_TRUE(kafka->CreateTopic(dead_topic, 1).ok());
  KafkaProducerOptions po;
  po.brokers = kafka->bootstrap_servers();
  auto producer = KafkaProducer::Create(po);
  ASSERT_TRUE(producer);
  // Documents over 1 MiB do not fit a default Kafka message: the daemon's limit is lowered
  // instead, so too_large is still covered.
  std::vector<Hostile> hostile;
  for (Hostile& h : Corpus()) {
    if (h.doc.size() < 200'000) hostile.push_back(std::move(h));
  }
  hostile.push_back({With(R"("id":"g")", R"("id":"g","pad":")" + std::string(150'000, 'x') + "\""),
                     RejectReason::kTooLarge});
  std::map<std::pair<int32_t, int64_t>, std::string> expected;  // (partition, offset) -> reason
  std::array<int64_t, kPartitions> next_offset{};
  uint64_t documents = 0;
  auto send = [&](const std::string& doc, const std::string& reason) {
    const auto p = static_cast<int32_t>(documents % kPartitions);
    ASSERT_TRUE((*producer)->Produce(topic, "", doc, p).ok());
    if (!reason.empty()) expected[{p, next_offset[p]}] = reason;
    ++next_offset[p];
    ++documents;
  };
  for (const Hostile& h : hostile) {
    send(kGood, "");
    send(h.doc, std::string(RejectReasonName(h.reason)));
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());

  Config c;
  c.kafka.brokers = kafka->bootstrap_servers();
  c.kafka.group_id = testing::RealKafka::UniqueName("hostile");
  c.kafka.topics = {topic};
  c.kafka.properties = {{"session.timeout.ms", "6000"}};
  c.ingest.dead_letter_topic = dead_topic;
  c.ingest.max_document_bytes = 100'000;
  c.parse.max_document_bytes = c.ingest.max_document_bytes;
  c.ingest.threads = 2;
  c.aggregate.shards = 2;
  auto gen = SignatureGenerator::LoadDefault();
  ASSERT_TRUE(gen);
  SystemClock clock;
  Daemon daemon(c, gen->get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  test::WaitFor([&] { return Decided(daemon.counts()) >= documents; }, std::chrono::seconds(60));
  ASSERT_EQ(Decided(daemon.counts()), documents);
  ASSERT_EQ(daemon.counts().documents, documents);
  EXPECT_EQ(daemon.counts().by_kind[0], hostile.size());
  daemon.Stop();  // flushes the dead-letter producer

  KafkaConsumerOptions o{
      kafka->bootstrap_servers(), testing::RealKafka::UniqueName("dead-reader"), {dead_topic}, {}};
  auto consumer = KafkaConsumer::Create(o, nullptr);
  ASSERT_TRUE(consumer);
  std::map<std::pair<int32_t, int64_t>, std::string> lettered;
  const auto deadline = std::chrono::steady_clock::now() + Patience(std::chrono::seconds(30));
  size_t messages = 0;
  while (messages < expected.size() && std::chrono::steady_clock::now() < deadline) {
    for (const KafkaMessage& m : (*consumer)->Poll(100, std::chrono::milliseconds(200))) {
      ++messages;
      Letter l = ParseLetter(m.payload());
      EXPECT_EQ(l.source, topic);
      EXPECT_EQ(m.key(), l.reason);
      lettered[{static_cast<int32_t>(l.partition), l.offset}] = l.reason;
    }
  }
  EXPECT_EQ(messages, expected.size());
  EXPECT_EQ(lettered, expected);
  (void)(*consumer)->Close();
}

}  // namespace
}  // namespace seismo
