// Nothing lost, nothing counted twice: the real `seismo run` killed with
// SIGKILL at random moments and restarted from its checkpoint ends with the
// same output as `seismo replay` of the corpus; likewise when the group
// coordinator is down for longer than the session timeout.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <atomic>
#include <thread>

#include "seismo/app/replay.h"
#include "seismo/app/synth.h"
#include "seismo/checkpoint/checkpoint.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/mock_cluster.h"
#include "seismo/signature/generator.h"

extern char** environ;

namespace seismo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::vector<std::string> kTopics = {"telemetry.main", "telemetry.bhr", "socorro.processed"};
constexpr int kPartitions = 4;

// The output without its "alerts" member (the last one): alert states depend
// on the evaluation history of a live run, the aggregates must not.
std::string WithoutAlerts(const std::string& json) { return json.substr(0, json.rfind(",\"alerts\":")); }

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CrashRecovery : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-recovery-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (pid_ > 0) Kill(SIGKILL);
    fs::remove_all(dir_);
  }

  void StartCluster(int brokers) {
    auto cluster = MockCluster::Create(brokers);
    ASSERT_TRUE(cluster) << cluster.error().message();
    cluster_ = std::move(*cluster);
    for (const std::string& t : kTopics) ASSERT_TRUE(cluster_->CreateTopic(t, kPartitions).ok());
  }

  // `pace` > 0 sleeps that long after every 10 documents (a live stream).
  void Produce(uint64_t seed, size_t main, size_t bhr, size_t crash, milliseconds pace = milliseconds(0)) {
    KafkaProducerOptions po;
    po.brokers = cluster_->bootstrap_servers();
    auto producer = KafkaProducer::Create(po);
    ASSERT_TRUE(producer);
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
    for (size_t i = 0; i < main; ++i) send(kTopics[0], synth.Main(i));
    for (size_t i = 0; i < bhr; ++i) send(kTopics[1], synth.Bhr(i));
    for (size_t i = 0; i < crash; ++i) send(kTopics[2], synth.ProcessedCrash(i));
    ASSERT_TRUE((*producer)->Flush(seconds(30)).ok());
  }

  void WriteConfig(const std::string& extra_kafka_properties = "") {
    std::ofstream(dir_ / "seismo.toml")
        << "[kafka]\nbrokers = \"" << cluster_->bootstrap_servers() << "\"\ngroup_id = \"recovery\"\n"
        << "topics = [\"" << kTopics[0] << "\", \"" << kTopics[1] << "\", \"" << kTopics[2] << "\"]\n"
        << "[kafka.properties]\n\"session.timeout.ms\" = \"6000\"\n\"heartbeat.interval.ms\" = \"500\"\n"
        << extra_kafka_properties
        << "[ingest]\nthreads = 2\nqueue_chunks = 2\n[aggregate]\nshards = 2\n"
        << "[checkpoint]\ndir = \"" << (dir_ / "ckpt").string() << "\"\ninterval = \"150ms\"\n"
        << "[http]\nlisten = \"127.0.0.1:0\"\n[log]\nlevel = \"info\"\n";
  }

  void Start() {
    std::string config = (dir_ / "seismo.toml").string();
    std::string output = (dir_ / "run.json").string();
    std::string log = (dir_ / "run.log").string();
    std::vector<std::string> args = {SEISMO_BINARY, "run", "--config", config, "--output", output};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const size_t runs_before = Count(Slurp(log), " running");
    ASSERT_EQ(posix_spawn(&pid_, SEISMO_BINARY, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    // Signals are only handled once the daemon says it runs.
    auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (Count(Slurp(log), " running") == runs_before && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
    }
  }

  static size_t Count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
    return n;
  }

  int Kill(int sig) {
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  // Documents in the latest checkpoint (0 if none yet).
  uint64_t CheckpointedDocuments() const {
    auto data = DecodeCheckpoint(Slurp(dir_ / "ckpt" / std::string(kCheckpointFile)));
    return data ? data->counts.documents : 0;
  }

  bool WaitForCheckpointed(uint64_t n, seconds limit) const {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (CheckpointedDocuments() >= n) return CheckpointedDocuments() == n;
      std::this_thread::sleep_for(milliseconds(100));
    }
    return false;
  }

  std::string ReplayJson() const {
    auto gen = SignatureGenerator::LoadDefault();
    Config c;
    auto r = RunReplay(c, {(dir_ / "corpus.ndjson").string()}, gen->get(), {});
    EXPECT_TRUE(r);
    return ReplayOutputJson(r->aggregates, r->counts);
  }

  fs::path dir_;
  std::unique_ptr<MockCluster> cluster_;
  std::atomic<uint64_t> produced_{0};
  pid_t pid_ = -1;
};

TEST_F(CrashRecovery, RestartAfterKillAtRandomPointsCountsEachRecordOnce) {
  StartCluster(1);
  Produce(21, 1000, 300, 200);
  // The rest arrives while the daemon is being killed and restarted, so every
  // kill lands in the middle of a stream.
  std::thread live([&] { Produce(23, 3000, 900, 600, milliseconds(60)); });
  // Small fetches make consumption round-trip bound, so kills land mid-stream.
  WriteConfig("\"fetch.max.bytes\" = \"100000\"\n\"message.max.bytes\" = \"100000\"\n\"max.partition.fetch.bytes\" = \"20000\"\n");
  Rng r(77);
  uint64_t before = 0;
  int mid_stream_kills = 0;
  for (int kill_round = 0; kill_round < 4; ++kill_round) {
    Start();
    // Wait until this run has made some progress, then kill it at a random
    // moment (between checkpoints, during a batch, during a write...).
    uint64_t target = before + static_cast<uint64_t>(r.Between(200, 900));
    auto deadline = std::chrono::steady_clock::now() + seconds(40);
    while (CheckpointedDocuments() < target && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    std::this_thread::sleep_for(milliseconds(r.Between(0, 400)));
    const bool unfinished = CheckpointedDocuments() < produced_.load();
    EXPECT_EQ(Kill(SIGKILL), -SIGKILL);
    mid_stream_kills += unfinished ? 1 : 0;
    uint64_t now = CheckpointedDocuments();
    EXPECT_GE(now, before);
    before = now;
  }
  live.join();
  EXPECT_GE(mid_stream_kills, 2) << "the kills came after consumption finished: recovery not tested";
  Start();
  ASSERT_TRUE(WaitForCheckpointed(produced_.load(), seconds(120))) << CheckpointedDocuments() << " of " << produced_.load();
  EXPECT_EQ(Kill(SIGTERM), 0);
  EXPECT_EQ(WithoutAlerts(Slurp(dir_ / "run.json")), WithoutAlerts(ReplayJson()));
}

TEST_F(CrashRecovery, CoordinatorDownLongerThanTheSessionTimeoutLosesNothing) {
  StartCluster(3);
  ASSERT_TRUE(cluster_->SetGroupCoordinator("recovery", 2).ok());
  Produce(22, 3000, 900, 600);
  WriteConfig();
  Start();
  std::this_thread::sleep_for(seconds(4));
  ASSERT_TRUE(cluster_->SetBrokerDown(2).ok());
  std::this_thread::sleep_for(seconds(8));  // > session.timeout.ms
  ASSERT_TRUE(cluster_->SetBrokerUp(2).ok());
  ASSERT_TRUE(WaitForCheckpointed(produced_.load(), seconds(120))) << CheckpointedDocuments() << " of " << produced_.load();
  EXPECT_EQ(Kill(SIGTERM), 0);
  EXPECT_EQ(WithoutAlerts(Slurp(dir_ / "run.json")), WithoutAlerts(ReplayJson()));
}

}  // namespace
}  // namespace seismo
