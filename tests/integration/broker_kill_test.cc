// The real broker itself dies: SIGKILLed while `seismo run` consumes, and again
// while the daemon writes a checkpoint (then the daemon is killed too, before the
// broker is back). Nothing is lost or counted twice: the daemon's --output equals
// `seismo replay` of everything produced. The broker runs on a one-node cluster of
// these tests' own (suites BrokerKill*: one test at a time, tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "integration/kafka_run_fixture.h"

namespace seismo {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::CountOf;

class BrokerKill : public testing::KafkaRunTest {
 protected:
  void SetUp() override {
    KafkaRunTest::SetUp();
    ASSERT_TRUE(UseCluster(1));
    // An earlier test (another process) may have failed with the node down.
    Status s = kafka_->EnsureAllNodesRunning();
    ASSERT_TRUE(s.ok()) << s.message();
  }
  void TearDown() override {
    if (kafka_ != nullptr) {
      Status s = kafka_->EnsureAllNodesRunning();
      EXPECT_TRUE(s.ok()) << s.message();
    }
    KafkaRunTest::TearDown();
  }
};

TEST_F(BrokerKill, BrokerKilledAndRestartedDuringConsumptionLosesAndRepeatsNothing) {
  Produce(51, 400, 120, 80, 40);
  const uint64_t before_live = produced_.load();
  WriteConfig(kSlowFetches);
  ASSERT_NO_FATAL_FAILURE(daemon_->Start());
  // A live stream: documents keep arriving before, during and after the broker's death, so
  // the kill lands mid-stream however fast this machine consumes (a corpus produced up front
  // was once consumed whole before the kill).
  std::thread live([&] { Produce(52, 2000, 600, 400, 200, milliseconds(20)); });
  const bool consuming = WaitForCheckpointedAtLeast(before_live + 100, seconds(120));
  const uint64_t at_kill = CheckpointedDocuments();
  Status killed = consuming ? kafka_->KillNode(1) : Status::Ok();
  // The daemon keeps running without its broker (fetches and commits fail, and are retried).
  Status restarted = Status::Ok();
  if (consuming && killed.ok()) {
    std::this_thread::sleep_for(seconds(3));
    restarted = kafka_->RestartNode(1);
  }
  live.join();
  ASSERT_TRUE(consuming) << "not consuming";
  ASSERT_TRUE(killed.ok()) << killed.message();
  ASSERT_TRUE(restarted.ok()) << restarted.message();
  std::cout << "broker killed with " << at_kill << " of " << produced_.load() << " documents checkpointed\n";
  EXPECT_LT(at_kill, produced_.load()) << "consumption finished before the broker died: nothing tested";
  // New documents after the restart reach the daemon too.
  Produce(53, 300, 100, 50, 50);
  ASSERT_TRUE(WaitForCheckpointed(produced_.load(), seconds(180)))
      << CheckpointedDocuments() << " of " << produced_.load() << "\n"
      << daemon_->log();
  EXPECT_EQ(Stop(SIGTERM), 0) << daemon_->log();
  EXPECT_EQ(Output(), ReplayJson());
}

// A checkpoint write pauses half way (the test seam); the broker is SIGKILLed then, so the
// commit that follows the checkpoint fails; the daemon is SIGKILLed too while the broker is
// down. After both come back, the daemon resumes from its checkpoint, which holds the
// offsets the failed commit never recorded: each record counted once.
TEST_F(BrokerKill, BrokerKilledDuringACheckpointThenTheDaemonLosesAndRepeatsNothing) {
  Produce(61, 800, 300, 200, 100);
  WriteConfig();
  ASSERT_NO_FATAL_FAILURE(daemon_->Start({"--checkpoint-pause-for-testing", "1500"}));
  ASSERT_TRUE(WaitForCheckpointed(produced_.load(), seconds(120))) << CheckpointedDocuments();
  ASSERT_FALSE(std::filesystem::exists(CheckpointTempFile()));
  // More documents: the checkpoint that takes them in starts writing.
  Produce(62, 100, 0, 0, 0);
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  std::error_code ec;
  while (!(std::filesystem::exists(CheckpointTempFile(), ec) &&
           std::filesystem::file_size(CheckpointTempFile(), ec) > 0) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(std::filesystem::exists(CheckpointTempFile())) << "no checkpoint was being written";
  ASSERT_TRUE(kafka_->KillNode(1).ok());
  // The write completes; the commit after it cannot reach the broker.
  EXPECT_TRUE(WaitForCheckpointedAtLeast(produced_.load() - 100 + 1, seconds(30)));
  EXPECT_EQ(Stop(SIGKILL), -SIGKILL);
  Status s = kafka_->RestartNode(1);
  ASSERT_TRUE(s.ok()) << s.message();
  Produce(63, 300, 100, 50, 50);
  ASSERT_NO_FATAL_FAILURE(daemon_->Start());
  ASSERT_TRUE(WaitForCheckpointed(produced_.load(), seconds(180)))
      << CheckpointedDocuments() << " of " << produced_.load() << "\n"
      << daemon_->log();
  EXPECT_EQ(Stop(SIGTERM), 0) << daemon_->log();
  EXPECT_EQ(Output(), ReplayJson());
  EXPECT_EQ(CountOf(daemon_->log(), "deleted by the broker"), 0u) << "no offset was out of range";
}

}  // namespace
}  // namespace seismo
