// Retention deletes records that seismo never read (it was stopped longer than the
// topic keeps data): the restarted daemon resumes at the log start and reports the
// gap — counted per partition, logged, in /api/v1/status and /metrics — never
// silently (SPEC §7; ingest/kafka_consumer.h). The rest is counted exactly once.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <thread>

#include "integration/kafka_run_fixture.h"

namespace seismo {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::CountOf;
using testing::HttpGet;

class KafkaRetention : public testing::KafkaRunTest {};

TEST_F(KafkaRetention, RecordsDeletedBeforeTheyWereReadAreCountedLoggedAndServed) {
  // Kept forever until the test says otherwise (the documents' timestamps are their event
  // times, days old).
  ASSERT_TRUE(UseCluster(1, 1, {{"retention.ms", "-1"}}));
  Produce(71, 300, 100, 60, 40);  // 500 documents, 250 per partition of each topic's two
  WriteConfig();
  ASSERT_NO_FATAL_FAILURE(daemon_->Start());
  ASSERT_TRUE(WaitForCheckpointed(produced_.load(), seconds(120))) << CheckpointedDocuments();
  ASSERT_EQ(Stop(SIGTERM), 0);
  const std::string read_before = (dir_ / "corpus.ndjson").string() + ".read";
  std::filesystem::rename(dir_ / "corpus.ndjson", read_before);

  // While the daemon is down: 40 main pings it will never see (20 per partition of the main
  // topic), then retention removes everything the topic holds.
  Produce(72, 40, 0, 0, 0);
  const std::string& main_topic = topics_[0];
  std::vector<std::pair<int64_t, int64_t>> before;  // per partition: (log start, log end)
  for (int p = 0; p < kPartitions; ++p) {
    auto marks = kafka_->Watermarks(main_topic, p);
    ASSERT_TRUE(marks) << marks.error().message();
    before.push_back(*marks);
  }
  ASSERT_TRUE(kafka_->SetTopicConfig(main_topic, {{"retention.ms", "1"}}).ok());
  const auto deadline = std::chrono::steady_clock::now() + seconds(90);
  auto all_deleted = [&] {
    for (int p = 0; p < kPartitions; ++p) {
      auto marks = kafka_->Watermarks(main_topic, p);
      if (!marks || marks->first != before[static_cast<size_t>(p)].second) return false;
    }
    return true;
  };
  while (!all_deleted() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(200));
  ASSERT_TRUE(all_deleted()) << "retention did not delete the topic's records";
  ASSERT_TRUE(kafka_->SetTopicConfig(main_topic, {{"retention.ms", "-1"}}).ok());
  // The 40 lost documents are not part of what the run must end with.
  std::filesystem::rename(dir_ / "corpus.ndjson", dir_ / "lost.ndjson");
  std::filesystem::rename(read_before, dir_ / "corpus.ndjson");
  const uint64_t lost = 40;
  produced_ -= lost;

  Produce(73, 100, 20, 10, 10);  // after the gap: read as usual
  ASSERT_NO_FATAL_FAILURE(daemon_->Start());
  ASSERT_TRUE(WaitForCheckpointed(produced_.load(), seconds(120))) << CheckpointedDocuments() << "\n"
                                                                   << daemon_->log();

  // /api/v1/status: the total and, per partition, how many and which offsets.
  const int port = daemon_->http_port();
  simdjson::dom::parser parser;
  const std::string status = HttpGet(port, "/api/v1/status").body;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(status).get(root), simdjson::SUCCESS) << status;
  EXPECT_EQ(uint64_t(root["consumer"]["lost_offsets"]), lost) << status;
  EXPECT_EQ(uint64_t(root["consumer"]["offset_resets"]), 2u) << status;  // one per partition
  simdjson::dom::array partitions = root["consumer"]["lost"];
  ASSERT_EQ(partitions.size(), 2u) << status;
  int p = 0;
  for (simdjson::dom::element l : partitions) {
    EXPECT_EQ(std::string_view(l["topic"]), main_topic);
    EXPECT_EQ(int64_t(l["partition"]), p);
    const int64_t end = before[static_cast<size_t>(p)].second;
    EXPECT_EQ(uint64_t(l["offsets"]), static_cast<uint64_t>(20)) << status;
    EXPECT_EQ(int64_t(l["last_from"]), end - 20) << status;  // the daemon had read up to there
    EXPECT_EQ(int64_t(l["last_to"]), end) << status;
    ++p;
  }
  // /metrics: the total and each partition.
  const std::string metrics = HttpGet(port, "/metrics").body;
  EXPECT_NE(metrics.find("\nseismo_consumer_lost_offsets_total 40\n"), std::string::npos) << metrics;
  for (int q = 0; q < kPartitions; ++q) {
    EXPECT_NE(metrics.find("\nseismo_consumer_partition_lost_offsets_total{topic=\"" + main_topic +
                           "\",partition=\"" + std::to_string(q) + "\"} 20\n"),
              std::string::npos)
        << metrics;
  }
  // The log names the partition and the offsets.
  EXPECT_EQ(Stop(SIGTERM), 0) << daemon_->log();
  const std::string log = daemon_->log();
  EXPECT_EQ(CountOf(log, "were deleted by the broker (retention) before seismo read them: 20 record(s) lost"),
            2u)
      << log;
  // Everything still in the topics was counted once.
  EXPECT_EQ(Output(), ReplayJson());
}

}  // namespace
}  // namespace seismo
