// Daemon::Rebalance: the daemon's consumer group listener (private to src/app/daemon*.cc).
//
// Starts partitions at their checkpointed offsets, checkpoints before they go
// away and commits what that checkpoint holds, so the next owner starts right
// after it (each record counted once per group). Tracks whether this instance
// holds any partition (readiness: "consuming").
//
// Threading: the source thread only (librdkafka runs the callbacks inside Poll() and
// Close() on it).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "seismo/app/daemon.h"
#include "seismo/ingest/handed_offsets.h"
#include "seismo/ingest/kafka_consumer.h"

namespace seismo {

class Daemon::Rebalance final : public KafkaRebalanceListener {
 public:
  explicit Rebalance(Daemon& d) : daemon_(d) {}

  std::map<TopicPartition, int64_t> OnAssigned(const std::vector<TopicPartition>& partitions) override;

  void OnRevoking(const std::vector<TopicPartition>& partitions) override;

  // Taken away without a hand-over (session timeout, coordinator gone): another
  // member may own them already, so nothing is committed; what was handed is
  // still checkpointed, so a restart does not read it again.
  void OnLost(const std::vector<TopicPartition>& partitions) override;

  // What has been handed to the pipeline. Source thread only (rebalance
  // callbacks run inside Poll() on that thread).
  HandedOffsets handed;

 private:
  void Forget(const std::vector<TopicPartition>& partitions);

  Daemon& daemon_;
  std::set<TopicPartition> assigned_;  // source thread only
};

}  // namespace seismo
