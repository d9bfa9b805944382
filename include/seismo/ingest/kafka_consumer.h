// KafkaConsumer: the daemon's Kafka source. A high-level (consumer-group)
// consumer subscribed to the configured topics, shaped for a pipeline that
// keeps its offsets of record in its own checkpoint (SPEC §7):
//
//   Poll() ──batch──▶ pipeline ──▶ shards ──▶ checkpoint (offsets + state)
//     │                  ▲
//     └─ rebalance ──────┘  OnAssigned → start offsets from the checkpoint
//                           OnRevoking → drain + checkpoint before hand-over
//
//  - Poll() returns up to N messages; each message owns its librdkafka buffer
//    until its KafkaMessageBatch is destroyed (payload views stay valid that long).
//  - Rebalances are handled inside Poll() (and Close()) on the calling thread
//    through a KafkaRebalanceListener. Start offsets returned by OnAssigned()
//    are given to rd_kafka_assign(), which is how "seek to the checkpointed
//    offset" works; partitions without one start at the group's committed
//    offset, else at auto.offset.reset (seismo default: earliest).
//  - OnRevoking() runs BEFORE the partitions are given up. Messages of those
//    partitions already returned by Poll() are the last ones this consumer
//    hands out; messages fetched but not yet returned (including any gathered
//    by the Poll() call in progress) are discarded, so the next owner reads
//    them from wherever the listener's checkpoint/commit says.
//  - Pause()/Resume() stop and restart fetching for backpressure. Messages
//    prefetched for a paused partition are discarded by librdkafka and fetched
//    again after Resume(): nothing is lost or repeated.
//  - Commit() writes next-offsets to the group (async by default), so that
//    lag tools and a new owner after a rebalance see progress. Auto-commit
//    and auto offset store are off by default.
//  - Offsets out of range are never skipped silently (SPEC §7). librdkafka
//    runs with auto.offset.reset=error and this class applies the policy
//    itself: a partition with no offset at all starts where
//    `auto.offset.reset` says (earliest by default); an offset below the
//    partition's log start (retention or DeleteRecords removed records that
//    were never read) resumes at the log start, and the skipped offsets are
//    counted (`lost_offsets`), logged and kept per partition; an offset past
//    the end (a truncated or recreated partition) restarts per the policy and
//    is counted in `offset_resets`. With auto.offset.reset=error the
//    partition stops and the error is counted. (docs/adr/0019-real-kafka.md)
//  - librdkafka errors are counted and logged through spdlog, rate-limited;
//    nothing on the poll path throws.
//
// Ownership: Create() returns the owner; the listener is borrowed and must
// outlive the consumer (the destructor closes the group membership, which
// calls OnRevoking()).
// Threading: one thread (the "poll thread") calls every method except
// stats(), which may be called from any thread at any time. Listener
// callbacks run on the poll thread, inside Poll() or Close(); from them the
// listener may call Commit() but not Poll() or Close().
#pragma once

#include <atomic>
#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/core/mutex.h"
#include "seismo/core/status.h"
#include "seismo/ingest/log_rate_limiter.h"
#include "seismo/ingest/rdkafka_fwd.h"

namespace seismo {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};

// "topic[3]", for logs and messages.
std::string ToString(const TopicPartition& tp);

struct KafkaConsumerOptions {
  std::string brokers;              // bootstrap.servers
  std::string group_id;             // group.id
  std::vector<std::string> topics;  // subscription; "^regex" entries allowed
  // Passed to librdkafka as is, after (and so overriding) seismo's defaults:
  // auto.offset.reset=earliest (applied by this class, see the file comment:
  // earliest|smallest|beginning, latest|largest|end, or error), enable.auto.commit=false,
  // enable.auto.offset.store=false, enable.partition.eof=false,
  // fetch.wait.max.ms=100, fetch.error.backoff.ms=100, queued.min.messages=100000.
  std::map<std::string, std::string> properties;
};

// One consumed message: a view into a librdkafka message owned by the batch
// it came from. Valid until that batch is destroyed.
class KafkaMessage {
 public:
  explicit KafkaMessage(const rd_kafka_message_t* msg) : msg_(msg) {}

  std::string_view payload() const;
  std::string_view key() const;
  std::string_view topic() const;
  int32_t partition() const;
  int64_t offset() const;
  // Message timestamp (CreateTime or LogAppendTime) in ms since the epoch;
  // nullopt when the message has none.
  std::optional<int64_t> timestamp_ms() const;

 private:
  friend class KafkaMessageBatch;
  const rd_kafka_message_t* raw() const { return msg_; }

  const rd_kafka_message_t* msg_;  // not owned
};

// Messages from one Poll(), in the order librdkafka delivered them (offset
// order within each partition). Owns the underlying librdkafka messages.
// Move-only; may be handed to another thread as a whole.
class KafkaMessageBatch {
 public:
  KafkaMessageBatch() = default;
  ~KafkaMessageBatch();
  KafkaMessageBatch(KafkaMessageBatch&& other) noexcept;
  KafkaMessageBatch& operator=(KafkaMessageBatch&& other) noexcept;
  KafkaMessageBatch(const KafkaMessageBatch&) = delete;
  KafkaMessageBatch& operator=(const KafkaMessageBatch&) = delete;

  size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }
  const KafkaMessage& operator[](size_t i) const { return messages_[i]; }
  std::vector<KafkaMessage>::const_iterator begin() const { return messages_.begin(); }
  std::vector<KafkaMessage>::const_iterator end() const { return messages_.end(); }
  uint64_t payload_bytes() const { return payload_bytes_; }

 private:
  friend class KafkaConsumer;
  void Add(rd_kafka_message_t* msg);                // takes ownership
  void RemovePartitions(const std::set<TopicPartition>& partitions);
  void Clear();

  std::vector<KafkaMessage> messages_;  // each wraps an owned rd_kafka_message_t
  uint64_t payload_bytes_ = 0;
};

// Implemented by the pipeline. Called on the poll thread (see the file comment).
class KafkaRebalanceListener {
 public:
  virtual ~KafkaRebalanceListener() = default;

  // The group gave this consumer `partitions`. Returns the next offset to read
  // for those that have one in seismo's checkpoint; the others start at the
  // committed offset, else at auto.offset.reset. Offsets < 0 are ignored.
  virtual std::map<TopicPartition, int64_t> OnAssigned(
      const std::vector<TopicPartition>& partitions) = 0;

  // `partitions` are about to be given up (rebalance or Close()). Drain what
  // was polled from them, checkpoint, and optionally Commit(kSync).
  virtual void OnRevoking(const std::vector<TopicPartition>& partitions) = 0;

  // `partitions` were taken away without a clean hand-over (session timeout,
  // fatal error): another member may already own them, so committing is
  // pointless. Defaults to OnRevoking().
  virtual void OnLost(const std::vector<TopicPartition>& partitions) { OnRevoking(partitions); }
};

struct KafkaPartitionStats {
  TopicPartition tp;
  int64_t next_offset = -1;     // next offset to be returned; -1 until known
  int64_t high_watermark = -1;  // last end offset the broker reported; -1 until known
  int64_t lag = -1;             // high_watermark - next_offset when both are known
  bool paused = false;
};

// Offsets of one partition that were deleted by the broker before this
// consumer read them (see the file comment).
struct KafkaLostOffsets {
  TopicPartition tp;
  uint64_t offsets = 0;    // records never read, summed over every occurrence
  int64_t last_from = -1;  // the latest occurrence: offsets [last_from, last_to) were lost
  int64_t last_to = -1;
};

// A consistent copy, refreshed by the poll thread at most every 200 ms and
// after every rebalance, pause and resume. Counters are monotonic.
struct KafkaConsumerStats {
  uint64_t messages = 0;    // returned by Poll()
  uint64_t bytes = 0;       // payload bytes returned by Poll()
  uint64_t errors = 0;      // error events seen by Poll() and the error callback
  uint64_t rebalances = 0;  // assign + revoke callbacks
  uint64_t lost_offsets = 0;   // offsets deleted by the broker before they were read
  uint64_t offset_resets = 0;  // positions out of range, moved to the log start or per the policy
  uint64_t commit_failures = 0;  // Commit() calls that returned a failure (an async commit's
                                 // later failure is in `errors`)
  int64_t total_lag = 0;    // sum of the known partition lags
  size_t paused_partitions = 0;
  std::vector<KafkaPartitionStats> partitions;  // current assignment, sorted
  std::vector<KafkaLostOffsets> lost;           // every partition that ever lost offsets, sorted
  std::string last_error;                       // "" if none
};

// What auto.offset.reset asks for, applied by KafkaConsumer (file comment).
enum class OffsetResetPolicy { kEarliest, kLatest, kError };

// "earliest" (also "smallest", "beginning"), "latest" ("largest", "end") or
// "error"; anything else is kInvalidArgument.
[[nodiscard]] Result<OffsetResetPolicy> ParseOffsetResetPolicy(std::string_view value);

enum class CommitMode { kAsync, kSync };

// A consumer's group membership (group, generation, member) as it was when taken: a
// transactional producer's offsets commit carries it (KafkaProducer::SendOffsetsToTransaction),
// and the group's coordinator refuses it once the member has left or the group has moved to
// a newer generation, which fences a zombie's transaction (KIP-447).
class KafkaGroupMetadata {
 public:
  explicit KafkaGroupMetadata(rd_kafka_consumer_group_metadata_t* md) : md_(md) {}
  ~KafkaGroupMetadata();
  KafkaGroupMetadata(const KafkaGroupMetadata&) = delete;
  KafkaGroupMetadata& operator=(const KafkaGroupMetadata&) = delete;
  const rd_kafka_consumer_group_metadata_t* get() const { return md_; }

 private:
  rd_kafka_consumer_group_metadata_t* md_;  // owned
};

class KafkaConsumer {
 public:
  // Creates the consumer and subscribes; joining the group happens in the
  // first Poll() calls (≈3 s on the mock cluster). kInvalidArgument on
  // missing brokers/group/topics or a bad property.
  [[nodiscard]] static Result<std::unique_ptr<KafkaConsumer>> Create(
      const KafkaConsumerOptions& options, KafkaRebalanceListener* listener);

  // Close()s if needed. A cooperative-sticky consumer that never received an
  // assignment is not destroyed (librdkafka#4312 aborts the process there).
  ~KafkaConsumer();
  KafkaConsumer(const KafkaConsumer&) = delete;
  KafkaConsumer& operator=(const KafkaConsumer&) = delete;

  // Waits up to `timeout` for the first message, then takes whatever else is
  // already fetched, up to `max_messages`. Serves rebalances and callbacks.
  // Returns an empty batch on timeout or after Close().
  KafkaMessageBatch Poll(size_t max_messages, std::chrono::milliseconds timeout);

  // Stop / restart fetching. Partitions not currently assigned are ignored
  // (a rebalance resets the pause state of what it assigns).
  [[nodiscard]] Status Pause(const std::vector<TopicPartition>& partitions);
  [[nodiscard]] Status Resume(const std::vector<TopicPartition>& partitions);
  // Pauses every assigned partition and keeps pausing those assigned later,
  // until ResumeAll().
  [[nodiscard]] Status PauseAll();
  [[nodiscard]] Status ResumeAll();

  // Commits next-offsets (offset of the last processed message + 1). An
  // async commit's failure is logged and counted when a later Poll() learns it.
  [[nodiscard]] Status Commit(const std::map<TopicPartition, int64_t>& next_offsets,
                              CommitMode mode = CommitMode::kAsync);

  // The group's committed next-offsets of `partitions` (a round trip to the
  // group coordinator, up to `timeout`); partitions without a commit are
  // absent. Callable from OnAssigned() too.
  [[nodiscard]] Result<std::map<TopicPartition, int64_t>> Committed(
      const std::vector<TopicPartition>& partitions, std::chrono::milliseconds timeout);

  // The group membership now (for a transaction's offsets commit); null when the consumer
  // has none (closed). Poll thread.
  std::unique_ptr<KafkaGroupMetadata> GroupMetadata() const;

  // Leaves the group (OnRevoking() runs first) and stops fetching. Idempotent.
  [[nodiscard]] Status Close();

  // The current assignment, sorted. Poll thread only.
  std::vector<TopicPartition> assignment() const;

  // Asks the partition's leader for its low and high watermarks: a network
  // round trip of up to `timeout`. Any thread. (A low watermark above 0 on
  // the mock cluster means it dropped old data, see mock_cluster.h.)
  [[nodiscard]] Result<std::pair<int64_t, int64_t>> QueryWatermarks(
      const TopicPartition& tp, std::chrono::milliseconds timeout) const;

  // Any thread.
  KafkaConsumerStats stats() const;

 private:
  KafkaConsumer(const KafkaConsumerOptions& options, KafkaRebalanceListener* listener);

  // librdkafka's callbacks (src/ingest/kafka_consumer.cc): their signatures name librdkafka's
  // types, which this header does not include.
  friend struct KafkaConsumerCallbacks;

  void HandleAssign(rd_kafka_topic_partition_list_t* partitions);
  void HandleRevoke(rd_kafka_topic_partition_list_t* partitions);
  // librdkafka stopped `tp`: its position `failed` (< 0: none) is out of range.
  void HandleOffsetReset(const TopicPartition& tp, int64_t failed, const std::string& reason);
  // Moves an assigned partition whose position `failed` was out of range to `offset` (or a
  // logical offset), and remembers it (last_reset_).
  void Reposition(const TopicPartition& tp, int64_t failed, int64_t offset);
  [[nodiscard]] Status SetPaused(const std::vector<TopicPartition>& partitions, bool pause);
  Status CommitOffsets(const std::map<TopicPartition, int64_t>& next_offsets, CommitMode mode);
  void RecordError(int err, const std::string& reason, bool fatal);  // err: rd_kafka_resp_err_t
  void RefreshStats(bool force);

  // What librdkafka's callbacks reach (their opaque): the consumer, apart from it on the heap,
  // so that a handle which outlives the consumer (~KafkaConsumer, librdkafka#4312) finds
  // `consumer` null instead of freed memory. Only the log callback runs on librdkafka's own
  // threads; it takes `mu`.
  struct CallbackTarget {
    explicit CallbackTarget(KafkaConsumer* c) : consumer(c) {}
    Mutex mu;
    KafkaConsumer* consumer GUARDED_BY(mu);  // null once the consumer is gone
    // The callbacks served on the poll thread (rebalance, error, commit) run only while the
    // consumer exists, which clears `consumer` in its destructor: they read it unlocked.
    KafkaConsumer* OnPollThread() const NO_THREAD_SAFETY_ANALYSIS { return consumer; }
  };

  const KafkaConsumerOptions options_;
  OffsetResetPolicy reset_policy_ = OffsetResetPolicy::kEarliest;  // set by Create()
  KafkaRebalanceListener* const listener_;  // borrowed; may be null
  std::unique_ptr<CallbackTarget> callbacks_;  // owned; leaked along with a leaked handle
  rd_kafka_t* rk_ = nullptr;                // owned

  // Poll thread only.
  bool closed_ = false;
  bool pause_all_ = false;
  bool assignment_received_ = false;  // an assign callback ran (librdkafka#4312, see ~KafkaConsumer)
  std::set<TopicPartition> assignment_;
  std::set<TopicPartition> paused_;
  // Per partition, the failed position of the last reset and where it was moved: librdkafka
  // may report one reset twice, and acting on it again would rewind (HandleOffsetReset).
  std::map<TopicPartition, std::pair<int64_t, int64_t>> last_reset_;
  std::map<TopicPartition, int64_t> start_offsets_;  // given to the assignment (OnAssigned)
  std::map<TopicPartition, int64_t> logical_starts_;  // HandleAssign's scratch
  std::set<TopicPartition> awaiting_first_;  // moved for "no offset", no message returned since
  KafkaMessageBatch* pending_ = nullptr;  // the batch Poll() is filling, if any
  std::chrono::steady_clock::time_point last_refresh_{};

  // Counters: written on the poll thread (errors also by librdkafka's threads),
  // read by stats(). Relaxed: independent counters, nothing published with them.
  std::atomic<uint64_t> messages_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> rebalances_{0};
  std::atomic<uint64_t> lost_offsets_{0};
  std::atomic<uint64_t> offset_resets_{0};
  std::atomic<uint64_t> commit_failures_{0};

  mutable Mutex stats_mu_;
  std::vector<KafkaPartitionStats> partition_stats_ GUARDED_BY(stats_mu_);
  std::map<TopicPartition, KafkaLostOffsets> lost_ GUARDED_BY(stats_mu_);
  std::string last_error_ GUARDED_BY(stats_mu_);

  LogRateLimiter log_limiter_;
};

}  // namespace seismo
