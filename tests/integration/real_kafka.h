// RealKafka: the real Apache Kafka cluster an integration test runs against
// (scripts/kafka: Kafka 4.x in KRaft mode on loopback; docs/testing.md,
// docs/adr/0019-real-kafka.md).
//
// Which cluster: CTest starts each kind of cluster once per run (fixtures in
// tests/CMakeLists.txt) and names its directory in SEISMO_KAFKA_DIR; the
// bootstrap servers are in DIR/bootstrap, written by `scripts/kafka start`.
//   suites Kafka*         one node, shared by every test (unique topic and group names)
//   suites BrokerKill*    one node of their own, killed and restarted (run one at a time)
//   suites ThreeBrokers*  three nodes (replication factor 3, min.insync.replicas 2)
// Run by hand without SEISMO_KAFKA_DIR, the first Get() starts a cluster of
// the size asked under a temporary directory and stops it when the process
// exits (needs Java and Maven: scripts/setup --with-kafka).
//
// A cluster that is expected and missing FAILS the test (never a silent pass
// or a skip): Get() records the failure and returns null.
//
// Threading: Get() and the admin calls from the test's main thread; the
// object lives until the process exits.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/core/status.h"

typedef struct rd_kafka_s rd_kafka_t;  // NOLINT

namespace seismo::testing {

class RealKafka {
 public:
  // The cluster of this test, with `brokers` nodes; null (and a test failure
  // naming the reason) when there is none.
  static RealKafka* Get(int brokers = 1);

  ~RealKafka();
  RealKafka(const RealKafka&) = delete;
  RealKafka& operator=(const RealKafka&) = delete;

  const std::string& bootstrap_servers() const { return bootstrap_; }
  int brokers() const { return brokers_; }
  const std::filesystem::path& dir() const { return dir_; }

  // A topic or group name no other test (or process) on this cluster uses:
  // "<base>.<Suite>.<Test>.<pid>".
  static std::string UniqueName(std::string_view base);

  // Creates `name` and waits until every partition has a leader. Configs are
  // topic-level (retention.ms, cleanup.policy, min.insync.replicas...).
  [[nodiscard]] Status CreateTopic(const std::string& name, int partitions, int replication = 1,
                                   const std::map<std::string, std::string>& configs = {});
  // Replaces the topic's configs (AlterConfigs: unnamed ones fall back to the defaults).
  [[nodiscard]] Status SetTopicConfig(const std::string& name,
                                      const std::map<std::string, std::string>& configs);
  // Low and high watermarks of one partition.
  [[nodiscard]] Result<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic, int32_t partition);
  // Node id of the partition's leader (-1 when it has none).
  [[nodiscard]] Result<int32_t> Leader(const std::string& topic, int32_t partition);

  // SIGKILLs node `node` (1..brokers) / starts it again with its data and waits
  // until the metadata shows every broker (scripts/kafka kill / restart).
  [[nodiscard]] Status KillNode(int node);
  [[nodiscard]] Status RestartNode(int node);
  // Restarts every node that is down (a test that kills nodes calls it first and last:
  // an earlier test, in another process, may have failed before restarting one).
  [[nodiscard]] Status EnsureAllNodesRunning();
  bool NodeRunning(int node) const;

 private:
  RealKafka(std::filesystem::path dir, std::string bootstrap, int brokers, bool owned);
  [[nodiscard]] Status Connect();

  const std::filesystem::path dir_;
  const std::string bootstrap_;
  const int brokers_;
  const bool owned_;             // started by this process: stopped by the destructor
  rd_kafka_t* admin_ = nullptr;  // owned; a producer handle used for admin and metadata calls
};

// Runs scripts/kafka with `args`; its exit code (-1 if it could not run). Output to `log`.
int RunKafkaScript(const std::string& args, const std::filesystem::path& log);

}  // namespace seismo::testing
