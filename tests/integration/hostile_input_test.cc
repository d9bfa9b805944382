// Hostile input through a running daemon: truncated documents, deep nesting,
// a 100 MB document, NUL bytes, invalid UTF-8, numbers out of range and wrong
// types in every field the parser reads. Each is rejected with its reason,
// counted, dead-lettered (file and Kafka topic), and the daemon keeps serving
// and counting the good documents around them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "seismo/app/daemon.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/mock_cluster.h"
#include "seismo/signature/generator.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;

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

TEST(HostileInput, EveryBadDocumentIsRejectedCountedDeadLetteredAndTheDaemonKeepsServing) {
  fs::path dir = fs::temp_directory_path() / ("seismo-hostile-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto cluster = MockCluster::Create(1);
  ASSERT_TRUE(cluster);
  ASSERT_TRUE((*cluster)->CreateTopic("seismo.dead", 1).ok());

  std::vector<Hostile> hostile = Corpus();
  std::map<RejectReason, uint64_t> expected;
  {
    std::ofstream f(dir / "hostile.ndjson", std::ios::binary);
    for (const Hostile& h : hostile) {
      f << kGood << "\n" << h.doc << "\n";
      ++expected[h.reason];
    }
    f << kGood << "\n";
  }
  Config c;
  c.sources.files = {(dir / "hostile.ndjson").string()};
  c.kafka.topics = {};
  c.kafka.brokers = (*cluster)->bootstrap_servers();
  c.ingest.dead_letter_file = (dir / "dead.ndjson").string();
  c.ingest.dead_letter_topic = "seismo.dead";
  c.ingest.threads = 2;
  c.aggregate.shards = 2;
  auto gen = SignatureGenerator::LoadDefault();
  ASSERT_TRUE(gen);
  SystemClock clock;
  Daemon daemon(c, gen->get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  const uint64_t total = hostile.size() * 2 + 1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (daemon.counts().documents < total && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  RecordCounts counts = daemon.counts();
  ASSERT_EQ(counts.documents, total);
  EXPECT_EQ(counts.by_kind[0], hostile.size() + 1);  // every good document around them
  for (size_t r = 0; r < kRejectReasonCount; ++r) {
    auto reason = static_cast<RejectReason>(r);
    EXPECT_EQ(counts.rejected[r], expected[reason]) << RejectReasonName(reason);
  }
  // Still serving: published snapshots catch up with every good document.
  int64_t pings = 0;
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pings != static_cast<int64_t>(hostile.size() + 1) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto snap = daemon.snapshot();
    if (snap && snap->table(Table::kUsage).size() == 1) pings = snap->table(Table::kUsage).begin()->second.total.v[1];
  }
  EXPECT_EQ(pings, static_cast<int64_t>(hostile.size() + 1));
  daemon.Stop();

  // The dead-letter file has one line per reject, with its reason and line number.
  std::ifstream dead(dir / "dead.ndjson");
  std::string line;
  std::set<std::string> offsets;  // parse threads write in any order
  while (std::getline(dead, line)) {
    size_t at = line.find("\"offset\":");
    ASSERT_NE(at, std::string::npos);
    offsets.insert(line.substr(at + 9, line.find(',', at) - at - 9));
  }
  ASSERT_EQ(offsets.size(), hostile.size());
  for (size_t i = 1; i <= hostile.size(); ++i) EXPECT_EQ(offsets.count(std::to_string(2 * i)), 1u) << 2 * i;
  // ... and so has the Kafka topic.
  KafkaConsumerOptions o{(*cluster)->bootstrap_servers(), "dead-reader", {"seismo.dead"}, {}};
  auto consumer = KafkaConsumer::Create(o, nullptr);
  ASSERT_TRUE(consumer);
  size_t messages = 0;
  std::map<std::string, size_t> by_key;
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (messages < hostile.size() && std::chrono::steady_clock::now() < deadline) {
    for (const KafkaMessage& m : (*consumer)->Poll(100, std::chrono::milliseconds(200))) {
      ++messages;
      ++by_key[std::string(m.key())];
    }
  }
  EXPECT_EQ(messages, hostile.size());
  EXPECT_EQ(by_key["too_deep"], expected[RejectReason::kTooDeep]);
  (void)(*consumer)->Close();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seismo
