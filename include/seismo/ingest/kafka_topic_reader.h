// KafkaTopicReader: reads every partition of one topic, or some of them, without a
// consumer group: from the beginning, committed records only (read_committed). The
// cluster's aggregates topic is read this way twice (ADR 0024): to its end, to restore
// a newly assigned source partition, and for ever, to feed the global view.
//
// Contract:
//  - Assign() starts the given partitions at their beginning; a topic that does not
//    exist yet has no partitions (kNotFound).
//  - Poll() hands each record to the callback in offset order within its partition
//    (a tombstone has no value), and notes when a partition reached its end: the
//    last stable offset, so an open transaction's records are not read yet.
//  - AtEnd() is true once every assigned partition reached its end since it was
//    assigned (a later record does not make it false: the caller reads on).
//
// Ownership: Create() returns the owner. Threading: one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/core/status.h"
#include "seismo/ingest/log_rate_limiter.h"
#include "seismo/ingest/rdkafka_fwd.h"

namespace seismo {

struct KafkaTopicReaderOptions {
  std::string brokers;  // bootstrap.servers
  // Passed to librdkafka as is, after seismo's defaults (isolation.level=read_committed,
  // enable.partition.eof=true; a group id that is never joined).
  std::map<std::string, std::string> properties;
};

// One record as read.
struct KafkaTopicRecord {
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;  // -1 when the record has none
  std::string_view key;
  std::optional<std::string_view> value;  // nullopt: a tombstone
};

class KafkaTopicReader {
 public:
  [[nodiscard]] static Result<std::unique_ptr<KafkaTopicReader>> Create(
      const KafkaTopicReaderOptions& options);
  ~KafkaTopicReader();
  KafkaTopicReader(const KafkaTopicReader&) = delete;
  KafkaTopicReader& operator=(const KafkaTopicReader&) = delete;

  // How many partitions `topic` has (kNotFound when it does not exist, kUnavailable when
  // no broker answered within `timeout`).
  [[nodiscard]] Result<int32_t> PartitionCount(const std::string& topic, std::chrono::milliseconds timeout);

  // Reads `partitions` of `topic` (every one when empty) from their beginning, replacing
  // whatever was assigned before.
  [[nodiscard]] Status Assign(const std::string& topic, std::vector<int32_t> partitions,
                              std::chrono::milliseconds timeout);

  // Serves records for up to `timeout` (returns when none is queued, or at the deadline
  // while records keep coming). Returns how many
  // records were handed to `on_record`; kUnavailable on a fatal consumer error.
  using RecordCallback = std::function<void(const KafkaTopicRecord&)>;
  [[nodiscard]] Result<size_t> Poll(std::chrono::milliseconds timeout, const RecordCallback& on_record);

  bool AtEnd() const { return !assigned_.empty() && at_end_.size() == assigned_.size(); }

 private:
  KafkaTopicReader() = default;
  static void LogCallback(const rd_kafka_t* rk, int level, const char* fac, const char* buf);

  rd_kafka_t* rk_ = nullptr;  // owned
  std::set<int32_t> assigned_;
  std::set<int32_t> at_end_;
  LogRateLimiter log_limiter_;
};

}  // namespace seismo
