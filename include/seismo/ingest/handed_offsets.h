// HandedOffsets: per Kafka partition, the next offset after the last record
// handed to the pipeline — what a checkpoint saves and a hand-over commits —
// and the guard that keeps a record the client delivers twice from being
// counted twice (librdkafka 2.0 can rewind a partition after pause/resume or
// an incremental assignment: librdkafka#4637).
//
// Threading: the source thread only (rebalance callbacks run on it as well);
// redelivered() may be read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string_view>

#include "seismo/ingest/kafka_consumer.h"

namespace seismo {

class HandedOffsets {
 public:
  // The partition was assigned and will be read from `next` (a seek).
  void Start(const TopicPartition& tp, int64_t next) { next_[tp] = next; }

  // True when the record at `offset` is new and is now handed; false when a
  // record at or after it was handed already (then it is counted as redelivered).
  bool Accept(std::string_view topic, int32_t partition, int64_t offset);

  // The partition went away: its next owner decides where reading continues.
  void Forget(const TopicPartition& tp) { next_.erase(tp); }

  const std::map<TopicPartition, int64_t>& next() const { return next_; }
  uint64_t redelivered() const { return redelivered_.load(std::memory_order_relaxed); }

 private:
  std::map<TopicPartition, int64_t> next_;
  std::atomic<uint64_t> redelivered_{0};
};

}  // namespace seismo
