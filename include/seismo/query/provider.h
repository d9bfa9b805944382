// StateProvider: what the HTTP API and the alert engine may read from a
// running seismo — published snapshots and counters, never live shard state.
//
// Threading: every method is callable from any thread at any time and
// returns quickly (copies of small structs or a shared_ptr to an immutable
// snapshot). Implemented by app::Daemon; tests use fakes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/core/record_counts.h"

namespace seismo {

// Delivery counters of one alert sink (alert/sinks.h SinkDelivery, copied: this stage does
// not depend on the alert stage).
struct AlertSinkStatus {
  std::string sink;      // "file", "webhook", "kafka"
  uint64_t sent = 0;     // transitions delivered
  uint64_t failed = 0;   // transitions given up
  uint64_t retried = 0;  // webhook attempts after a failed one
  uint64_t dropped = 0;  // webhook events dropped (queue full, or queued at stop)
};

// Offsets of one Kafka partition deleted by the broker before the daemon read them
// (ingest/kafka_consumer.h KafkaLostOffsets, copied: this stage does not depend on ingest).
struct LostOffsetsStatus {
  std::string topic;
  int32_t partition = 0;
  uint64_t offsets = 0;   // summed over every occurrence
  int64_t last_from = 0;  // the latest occurrence lost [last_from, last_to)
  int64_t last_to = 0;
};

// A checkpoint found at start that could not be used (SPEC §7) and what the daemon does
// about the state it held (ADR 0018).
struct CheckpointRecovery {
  std::string problem;       // "<path>: <why>"; "" = the checkpoint was restored, or there was none
  std::string action;        // "reread" | "wait"
  std::string set_aside_to;  // where the unusable file went; "" until it is moved (before the next write)
  struct Partition {
    std::string partition;          // "topic[3]"
    int64_t from_offset = -1;       // its earliest retained offset: where reading starts again
    int64_t committed_offset = -1;  // where the group's commit would have resumed it; -1 = none
    int64_t from_time_ms = 0;       // timestamp of the first record read again; 0 until seen, -1 none
  };
  std::vector<Partition> reread;  // partitions read again from their start, in assignment order
};

// The cluster (SPEC §9, ADR 0024), when [cluster] aggregates_topic is set: each source
// partition the global view holds, with the instance that last published it.
struct ClusterStatus {
  bool enabled = false;
  std::string instance_id;
  std::string aggregates_topic;
  struct Partition {
    std::string topic;
    int32_t partition = 0;
    std::string owner;                     // instance id of its latest partial's publisher
    int64_t source_offset = -1;            // the largest source offset its partials include
    int64_t stream_time_ms = INT64_MIN;    // INT64_MIN: none
    int64_t latest_record_ms = INT64_MIN;  // Kafka timestamp of its latest partial
    size_t buckets = 0;
    uint64_t rejected = 0;  // its records rejected so far
    bool degraded = false;  // some key's latest record was rejected: the view lacks it
  };
  std::vector<Partition> partitions;  // by (topic, partition)
  // Records of the topic rejected by the view, by reason (cluster/record.h names:
  // corrupt, truncated, unknown_version, key_mismatch).
  std::vector<std::pair<std::string, uint64_t>> rejected;
  std::string view_error;  // "" = the topic is being read
  uint64_t publishes = 0;  // transactions committed
  uint64_t publish_failures = 0;
  // Of the failures: the source offsets' commit in the transaction failed, the group
  // refusing this instance's membership (a zombie's publish, fenced: KIP-447) or its
  // coordinator unavailable.
  uint64_t publish_offsets_refused = 0;
  uint64_t records_published = 0;
  int64_t last_publish_ms = 0;  // wall clock; 0 = never
};

struct ServiceStatus {
  int64_t started_at_ms = 0;    // wall clock
  bool sources_done = false;    // every [sources] file was read
  bool restored = true;         // checkpoint restored (or none configured)
  bool kafka_enabled = false;
  bool consuming = false;       // Kafka partitions assigned (or no Kafka configured)
  uint64_t pauses = 0;          // times consumption paused for backpressure
  uint64_t redelivered = 0;     // Kafka records delivered again by the client and skipped
  size_t queued_chunks = 0;     // documents waiting for parse workers (in chunks)
  size_t queued_batches = 0;    // delta batches waiting for shards
  int64_t consumer_lag = -1;    // messages behind the partitions' ends; -1 unknown
  size_t paused_partitions = 0;
  uint64_t kafka_errors = 0;
  std::string last_kafka_error;
  uint64_t lost_offsets = 0;   // Kafka offsets deleted by the broker (retention) before they were read
  uint64_t offset_resets = 0;  // Kafka positions found out of range and moved
  uint64_t commit_failures = 0;  // Kafka offset commits that failed (offsets left where they were)
  std::vector<LostOffsetsStatus> lost_partitions;  // partitions with lost offsets, sorted
  int64_t last_checkpoint_ms = 0;  // wall clock; 0 = never
  // Why the daemon is not ready although it has started (an operator must act); "" = none.
  std::string not_ready_reason;
  CheckpointRecovery checkpoint_recovery;
  ClusterStatus cluster;
  std::vector<AlertSinkStatus> alert_sinks;  // the configured alert sinks, in start order
  uint64_t alert_rounds = 0;                 // alert rounds this process evaluated (a cluster: as holder)
  uint64_t alert_installs_unknown = 0;       // rule candidates tested without the min_installs
                                             // guard: their installs were unknown (monotonic)

  // Durability failures (each also logged; monotonic):
  uint64_t checkpoint_failures = 0;   // checkpoints not taken or not written (the previous one stays)
  uint64_t dead_letter_failures = 0;  // rejected records that did not reach the dead-letter destination
};

// Ready (/readyz 200): the checkpoint restored, consuming, [sources] files read, and
// nothing waiting for an operator.
inline bool IsReady(const ServiceStatus& s) {
  return s.restored && s.consuming && s.sources_done && s.not_ready_reason.empty();
}

class StateProvider {
 public:
  virtual ~StateProvider() = default;
  // Latest published snapshot; null before the first one.
  virtual std::shared_ptr<const Snapshot> snapshot() const = 0;
  virtual RecordCounts counts() const = 0;
  virtual ServiceStatus status() const = 0;
  // Current alerts as a JSON array (the alert engine's view); "[]" when none.
  virtual std::string alerts_json() const = 0;
};

// One fixed snapshot, no counts, no alerts: for answers over a snapshot a caller made (a
// bench, a test).
class OneSnapshot final : public StateProvider {
 public:
  explicit OneSnapshot(std::shared_ptr<const Snapshot> snap) : snap_(std::move(snap)) {}
  std::shared_ptr<const Snapshot> snapshot() const override { return snap_; }
  RecordCounts counts() const override { return {}; }
  ServiceStatus status() const override { return {}; }
  std::string alerts_json() const override { return "[]"; }

 private:
  std::shared_ptr<const Snapshot> snap_;
};

}  // namespace seismo
