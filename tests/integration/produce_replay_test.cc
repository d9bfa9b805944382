// An archive produced into Kafka gives replay's answers (issue 13, SPEC §6.1): `seismo
// produce` stamps each message with the document's own event time, so documents without
// submission_timestamp (whose event time is then the Kafka timestamp, SPEC §2) land where
// `seismo replay` puts them. The archive is a month old: stamped with the time of
// producing (`--timestamp now`), its pings would land today and its crashes, whose
// time is their own, would be older than the retention behind them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "daemon_process.h"
#include "integration/real_kafka.h"
#include "seismo/core/time.h"
#include "support/wait_for.h"
#include "unit/http/http_client.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::DaemonProcess;
using testing::Slurp;

constexpr int kPartitions = 8;

// The output without its "alerts" member (the last one): alert states depend on the
// evaluation history of a live run, the aggregates must not.
std::string WithoutAlerts(const std::string& json) { return json.substr(0, json.rfind(",\"alerts\":")); }

int Seismo(const std::string& args) { return std::system((std::string(SEISMO_BINARY) + " " + args).c_str()); }

// Documents the daemon has read, as /api/v1/status reports them (0: no answer yet).
uint64_t DocumentsRead(int port) {
  const std::string body = testing::HttpGet(port, "/api/v1/status").body;
  const std::string needle = "\"documents\":";
  const size_t at = body.find(needle);
  return at == std::string::npos ? 0 : std::stoull(body.substr(at + needle.size()));
}

// On the shared real broker (integration/real_kafka.h), with the test's own topic and group.
class KafkaProduceReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-produce-replay-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    kafka_ = testing::RealKafka::Get();
    ASSERT_NE(kafka_, nullptr);
    topic_ = testing::RealKafka::UniqueName("archive");
    group_ = testing::RealKafka::UniqueName("archive");
    const Status created = kafka_->CreateTopic(topic_, kPartitions);
    ASSERT_TRUE(created.ok()) << created.message();
    daemon_ = std::make_unique<DaemonProcess>(dir_);
  }
  void TearDown() override {
    daemon_.reset();
    fs::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // A month-old archive of every kind; the pings lose their submission_timestamp (their
  // event time is then creationDate, or the Kafka timestamp when there is one).
  size_t WriteArchive() {
    const int64_t month_ago = SystemClock().Now().ms - 30LL * 86'400'000;
    const std::string start = FormatTimestamp(EventTime{month_ago - month_ago % 3'600'000});
    size_t lines = 0;
    std::ofstream out(Path("archive.ndjson"));
    for (auto [kind, count] :
         {std::pair<const char*, int>{"main", 2000}, {"bhr", 1000}, {"crash", 400}, {"crash-ping", 300}}) {
      const std::string file = Path(std::string(kind) + ".ndjson");
      EXPECT_EQ(Seismo("generate --kind " + std::string(kind) + " --count " + std::to_string(count) +
                       " --seed 13 --start " + start + " --output " + file),
                0);
      std::ifstream in(file);
      for (std::string line; std::getline(in, line); ++lines) {
        // Drops `"submission_timestamp":"...",` (pings; processed crashes carry their own times).
        const size_t at = line.find("\"submission_timestamp\":\"");
        if (at != std::string::npos) line.erase(at, line.find('"', at + 24) + 2 - at);
        out << line << '\n';
      }
    }
    return lines;
  }

  void WriteConfig() {
    std::ofstream(dir_ / "seismo.toml")
        << "[kafka]\nbrokers = \"" << kafka_->bootstrap_servers() << "\"\ngroup_id = \"" << group_ << "\"\n"
        << "topics = [\"" << topic_ << "\"]\n"
        << "[kafka.properties]\n\"session.timeout.ms\" = \"6000\"\n\"heartbeat.interval.ms\" = \"500\"\n"
        << "[ingest]\nthreads = 2\n[aggregate]\nshards = 2\n"
        << "[http]\nlisten = \"127.0.0.1:0\"\n[log]\nlevel = \"info\"\n";
  }

  // `seismo run --output` over everything in the topic.
  std::string RunOutput(size_t documents) {
    WriteConfig();
    daemon_->Start();
    const int port = daemon_->http_port();
    EXPECT_GT(port, 0) << daemon_->log();
    test::WaitFor([&] { return DocumentsRead(port) >= documents; }, seconds(120));
    EXPECT_EQ(DocumentsRead(port), documents) << daemon_->log();
    EXPECT_EQ(daemon_->Signal(SIGTERM, seconds(30)), 0) << daemon_->log();
    return Slurp(daemon_->output());
  }

  fs::path dir_;
  testing::RealKafka* kafka_ = nullptr;
  std::string topic_, group_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(KafkaProduceReplay, AnArchiveProducedIntoKafkaGivesReplaysOutput) {
  const size_t documents = WriteArchive();
  ASSERT_EQ(Seismo("replay --quiet --output " + Path("replay.json") + " " + Path("archive.ndjson")), 0);
  const std::string replay = Slurp(Path("replay.json"));
  ASSERT_NE(replay.find("\"crashes\":[{"), std::string::npos);
  ASSERT_NE(replay.find("\"late_dropped\":0"), std::string::npos);
  ASSERT_EQ(Seismo("produce --brokers " + kafka_->bootstrap_servers() + " --topic " + topic_ + " " +
                   Path("archive.ndjson") + " 2>/dev/null"),
            0);
  EXPECT_EQ(WithoutAlerts(RunOutput(documents)), WithoutAlerts(replay));
}

}  // namespace
}  // namespace seismo
