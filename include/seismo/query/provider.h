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
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/query/replay_output.h"

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
  int64_t last_checkpoint_ms = 0;  // wall clock; 0 = never
  std::vector<AlertSinkStatus> alert_sinks;  // the configured alert sinks, in start order
  uint64_t alert_installs_unknown = 0;       // rule candidates tested without the min_installs
                                             // guard: their installs were unknown (monotonic)

  // Durability failures (each also logged; monotonic):
  uint64_t checkpoint_failures = 0;   // checkpoints not taken or not written (the previous one stays)
  uint64_t dead_letter_failures = 0;  // rejected records that did not reach the dead-letter destination
};

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

}  // namespace seismo
