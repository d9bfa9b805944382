// KafkaProducer: a thin RAII producer used by `seismo produce`, the demo's
// simulator and the sinks that write to Kafka (alert topic, dead letters).
//
// Contract:
//  - Produce() copies key and value, then enqueues them in librdkafka's local
//    queue, bounded by KafkaProducerOptions::max_in_flight messages. When that
//    queue is full, Produce() serves delivery reports and waits for room: it
//    never drops a message. It gives up only after `enqueue_timeout` (if one
//    is set), returning kUnavailable: the message was then not enqueued.
//  - Every enqueued message ends as exactly one delivery report: acknowledged
//    by the broker, or failed (after librdkafka's retries and
//    `message.timeout.ms`). Counters are exposed by stats(); failures are
//    logged, rate-limited.
//  - Flush() waits until every enqueued message has its report.
//  - The destructor flushes for up to `close_timeout` and logs how many
//    messages were still undelivered if that was not enough.
//
//  - Transactions (a producer made with a `transactional.id` property: the
//    aggregates topic's publisher, ADR 0024): InitTransactions() once, then
//    Begin, Produce..., optionally SendOffsetsToTransaction, Commit (or Abort).
//    Commit retries what librdkafka says it may retry until its timeout. A
//    failed Commit is kUnavailable and leaves the transaction either aborted
//    (an abortable error) or still committing in the background (a time-out:
//    librdkafka refuses both Abort and Begin until that commit is finished);
//    the next Begin finishes it first, so a commit that outlives its caller
//    may still land (the caller must not assume either outcome). A fatal error
//    (another instance took over the transactional id: fenced), and an error
//    that is neither retriable nor abortable, is kFailedPrecondition, after
//    which only a new producer can publish; so is a Produce that librdkafka
//    refuses in the producer's state (outside a transaction, or stuck
//    refusing after a begin that succeeded: librdkafka 2.0.2, seen in tests).
//
// Ownership: Create() returns the owner. Threading: Produce(), Poll(),
// Flush() and stats() may be called concurrently from any threads; the
// transaction calls from one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "seismo/core/mutex.h"
#include "seismo/core/status.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/log_rate_limiter.h"
#include "seismo/ingest/rdkafka_fwd.h"

namespace seismo {

struct KafkaProducerOptions {
  std::string brokers;  // bootstrap.servers
  // Passed to librdkafka as is, after (and so overriding) seismo's defaults:
  // linger.ms=5, and queue.buffering.max.messages=max_in_flight.
  std::map<std::string, std::string> properties;
  // Messages enqueued locally and not yet acknowledged or failed.
  int max_in_flight = 100000;
  // How long Produce() may wait for room in a full queue; nullopt = forever.
  std::optional<std::chrono::milliseconds> enqueue_timeout;
  // How long the destructor waits for outstanding deliveries.
  std::chrono::milliseconds close_timeout = std::chrono::seconds(10);
};

// Counters, monotonic over the producer's life.
struct KafkaProducerStats {
  uint64_t enqueued = 0;      // accepted by Produce()
  uint64_t acknowledged = 0;  // delivery confirmed by the broker
  uint64_t failed = 0;        // delivery failed for good
  uint64_t in_flight = 0;     // enqueued, no report yet (librdkafka's out queue)
  std::string last_error;     // of the most recent failed delivery; "" if none
};

class KafkaProducer {
 public:
  // Any partition: librdkafka's partitioner picks one (by key if there is one).
  static constexpr int32_t kAnyPartition = -1;

  // Fails with kInvalidArgument on a bad property.
  [[nodiscard]] static Result<std::unique_ptr<KafkaProducer>> Create(
      const KafkaProducerOptions& options);

  ~KafkaProducer();
  KafkaProducer(const KafkaProducer&) = delete;
  KafkaProducer& operator=(const KafkaProducer&) = delete;

  // Enqueues one message. An empty key means "no key". `timestamp_ms` is the
  // message's CreateTime (ms since the epoch); nullopt = now.
  // kUnavailable when enqueue_timeout passed with the queue full;
  // kInvalidArgument for a message librdkafka refuses (e.g. too large, unknown
  // partition of a known topic).
  [[nodiscard]] Status Produce(const std::string& topic, std::string_view key,
                               std::string_view value, int32_t partition = kAnyPartition,
                               std::optional<int64_t> timestamp_ms = std::nullopt);

  // Enqueues a tombstone (a null value) under `key`: compaction deletes the key.
  [[nodiscard]] Status ProduceTombstone(const std::string& topic, std::string_view key,
                                        int32_t partition = kAnyPartition);

  // Serves delivery reports, waiting up to `timeout` for one.
  void Poll(std::chrono::milliseconds timeout);

  // Waits until every enqueued message is acknowledged or failed.
  // kUnavailable if some were still in flight after `timeout`.
  [[nodiscard]] Status Flush(std::chrono::milliseconds timeout);

  KafkaProducerStats stats() const;

  // Transactions (see the contract above). Each waits up to `timeout`.
  [[nodiscard]] Status InitTransactions(std::chrono::milliseconds timeout);
  // Finishes first, within `timeout`, a commit or abort an earlier call left in progress.
  [[nodiscard]] Status BeginTransaction(std::chrono::milliseconds timeout);
  // Within a transaction: the consumer group's next-offsets `next_offsets` commit with it,
  // checked against `group` (KIP-447): a member no longer of the group's generation gets an
  // error (kUnavailable) and its transaction must be aborted, so nothing of it is seen.
  [[nodiscard]] Status SendOffsetsToTransaction(const std::map<TopicPartition, int64_t>& next_offsets,
                                                const KafkaGroupMetadata& group,
                                                std::chrono::milliseconds timeout);
  [[nodiscard]] Status CommitTransaction(std::chrono::milliseconds timeout);
  [[nodiscard]] Status AbortTransaction(std::chrono::milliseconds timeout);

 private:
  explicit KafkaProducer(const KafkaProducerOptions& options);
  Status Enqueue(const std::string& topic, std::string_view key, std::optional<std::string_view> value,
                 int32_t partition, std::optional<int64_t> timestamp_ms);
  static void DeliveryReport(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  static void ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  static void LogCallback(const rd_kafka_t* rk, int level, const char* fac, const char* buf);
  // Calls commit (or abort) until it succeeds, fails for another reason than a retriable one,
  // or `timeout` passes; a time-out then leaves `unfinished_` set.
  enum class Ending { kNone, kCommit, kAbort };
  Status Finish(Ending ending, std::chrono::milliseconds timeout);

  const KafkaProducerOptions options_;
  rd_kafka_t* rk_ = nullptr;  // owned; destroyed last

  // Written by whichever thread serves delivery reports; read by stats().
  // Relaxed order: they are independent counters, no data is published with them.
  std::atomic<uint64_t> enqueued_{0};
  std::atomic<uint64_t> acknowledged_{0};
  std::atomic<uint64_t> failed_{0};
  mutable Mutex error_mu_;
  std::string last_error_ GUARDED_BY(error_mu_);
  LogRateLimiter log_limiter_;
  // Touched by the transaction calls only, which come from one thread.
  Ending unfinished_ = Ending::kNone;
};

}  // namespace seismo
