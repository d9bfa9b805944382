// ClusterNode: one instance's part in a cluster (SPEC §9, ADR 0024), when
// [cluster] aggregates_topic is set. Private to src/app/daemon*.cc.
//
//   source thread, at each barrier:  Publish(images) ──one transaction──> aggregates topic
//   source thread, on assignment:    ReadPartitions(tps) <── the topic, to its end
//   view thread:                     the whole topic ──GlobalView──> snapshot()
//
// The global view is built from the topic alone, the instance's own partitions included
// (as it last published them), so every instance serves the same numbers: a partition's
// freshness is the publish interval plus the time to read the topic back.
//
// Threading: Publish, ReadPartitions, Forget, SweepWhileViewPaused from the source thread
// (ReadWholeView after it stopped); CommitAlertState from the alert thread or the source
// thread (one at a time: its own mutex); view(), snapshot() and status() from any thread;
// the view thread is the node's own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "seismo/aggregate/moved_partition.h"
#include "seismo/aggregate/shard_image.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/app/config.h"
#include "seismo/cluster/global_view.h"
#include "seismo/cluster/publish_ledger.h"
#include "seismo/core/mutex.h"
#include "seismo/core/status.h"
#include "seismo/core/symbols.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/query/provider.h"
#include "seismo/shard/pipeline.h"

namespace seismo {

class KafkaProducer;

class ClusterNode {
 public:
  // Fails when the aggregates topic does not exist (an operator creates it, compacted:
  // docs/scaling.md) or the transactional producer cannot start.
  [[nodiscard]] static Result<std::unique_ptr<ClusterNode>> Create(const Config& config,
                                                                   std::string instance_id, Symbols* symbols);
  ~ClusterNode();
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  const std::string& instance_id() const { return instance_id_; }

  // Source thread, at a barrier: the partitions this instance owns (`next_offsets`: each
  // with the offset its next document has) are published from the shards' `images`
  // (named by `names`) and their record counts (`source_counts`, Pipeline::SourceCounts()),
  // what changed since the last publish, in one transaction.
  // Partitions of sources that are not Kafka topics are not published.
  // With `group` (the consumer's membership now), the owned partitions' next offsets commit
  // to the group in the same transaction, which the group's coordinator refuses when this
  // instance is no longer of the group's generation: a zombie that has not yet seen its
  // partitions go publishes nothing (KIP-447).
  [[nodiscard]] Status Publish(const std::vector<ShardImage>& images,
                               const std::vector<std::optional<Pipeline::PartitionName>>& names,
                               const std::map<TopicPartition, int64_t>& next_offsets,
                               const std::map<Pipeline::PartitionName, RecordCounts>& source_counts,
                               const KafkaGroupMetadata* group = nullptr);

  // The alert holder's rounds (and its hand-over): the alert engine's state under a/alerts,
  // in a transaction of its own, when it differs from the last one committed or read. The
  // only writer of a/alerts (ADR 0024, "Alerts"). Any thread, one at a time.
  [[nodiscard]] Status CommitAlertState(const std::string& state);

  // Source thread, on assignment: each partition's state as the topic holds it now (read
  // to its end); absent when the topic holds nothing of it. The publish ledger takes the
  // crash-ids chunks read as sent (PublishLedger::Seed).
  struct Restored {
    MovedPartition state;  // counts zero when the topic holds no counts record of it
    int64_t source_offset = -1;
    bool degraded = false;  // some of its records were rejected: rebuild it from its source
  };
  // With `alert_state`, the newest alert state the topic holds is read too (nullopt: none).
  [[nodiscard]] Result<std::map<TopicPartition, Restored>> ReadPartitions(
      const std::vector<TopicPartition>& tps, std::chrono::milliseconds timeout,
      std::optional<std::string>* alert_state = nullptr);

  // Whether a partition of `owned` has a record the view rejected (its next barrier must
  // publish even when nothing new was read).
  bool HasRejectedRecordsOf(const std::map<TopicPartition, int64_t>& owned) const;

  // The partition left this instance: its records are its next owner's to write.
  void Forget(const TopicPartition& tp);

  // The view thread: from Start() until the destructor.
  void Start();
  // The latest global view (null until the topic was read to its end once), with the
  // partitions it holds.
  struct View {
    std::shared_ptr<const Snapshot> snapshot;
    RecordCounts counts;  // every partition's (the header counts of the view)
    std::vector<ClusterStatus::Partition> partitions;
  };
  View view() const;
  std::shared_ptr<const Snapshot> snapshot() const { return view().snapshot; }
  // Reads the whole topic to its end, now, into a view of its own (run --output at
  // shutdown, after the final publish); `partitions` stays empty.
  [[nodiscard]] Result<View> ReadWholeView(std::chrono::milliseconds timeout);

  ClusterStatus status() const;

  // Source thread: runs `sweep` (Pipeline::MaybeSweep) with the view thread paused between
  // two of its turns, and the marks of the ids the live view and the ledger hold (ADR 0024,
  // "Intern tables"). Returns what `sweep` returned.
  bool SweepWhileViewPaused(const std::function<bool(const Pipeline::ExtraMarks&)>& sweep);

 private:
  ClusterNode(const Config& config, std::string instance_id, Symbols* symbols);
  int32_t AggregatesPartitionOf(const std::string& topic, int32_t partition) const;
  // A transactional producer of this instance (`role`: "" for the publishes, "alerts"),
  // its transactions initialised.
  Result<std::unique_ptr<KafkaProducer>> MakeProducer(const std::string& role = "") const;
  // Commits `records` to the aggregates topic in one transaction of `producer` (made again
  // when it was fenced or broke for good).
  // With `group`, `offsets` commit to the consumer group in the transaction.
  // A failure says in `commit_failed` (when given) whether it came from the commit itself:
  // the transaction may then still land (a commit that timed out goes on in the background).
  Status Transact(std::unique_ptr<KafkaProducer>& producer, const std::string& role,
                  const std::vector<std::pair<int32_t, OutgoingRecord>>& records,
                  const std::map<TopicPartition, int64_t>& offsets = {},
                  const KafkaGroupMetadata* group = nullptr, bool* commit_failed = nullptr);
  void RunView();
  // Reads aggregates partitions `partitions` (empty: all) to their end into a view of its
  // own, the records whose key `keep` takes (null: all); `keep_crash_ids` as GlobalView's.
  Result<std::unique_ptr<GlobalView>> ReadView(const std::vector<int32_t>& partitions,
                                               std::chrono::milliseconds timeout,
                                               const std::function<bool(std::string_view)>& keep,
                                               bool keep_crash_ids = false);

  const Config config_;
  const std::string instance_id_;
  Symbols* symbols_;
  AggregateOptions options_;
  int32_t aggregates_partitions_ = 1;
  std::unique_ptr<KafkaProducer> producer_;  // transactional; source thread
  PublishLedger ledger_;                     // source thread
  Mutex alerts_mu_;                          // CommitAlertState's
  std::unique_ptr<KafkaProducer> alerts_producer_ GUARDED_BY(alerts_mu_);
  std::string published_alert_state_ GUARDED_BY(alerts_mu_);  // the last a/alerts committed or read

  std::atomic<bool> stop_{false};
  std::thread view_thread_;
  // Held by the view thread through each turn (reading records, building): what interns
  // into the symbols concurrently with the pipeline. A sweep holds it throughout.
  Mutex view_mu_;
  std::unique_ptr<GlobalView> live_view_ GUARDED_BY(view_mu_);  // the view thread's
  mutable Mutex mu_;
  std::shared_ptr<const Snapshot> snapshot_ GUARDED_BY(mu_);
  RecordCounts counts_ GUARDED_BY(mu_);                               // snapshot_'s
  std::vector<ClusterStatus::Partition> partitions_ GUARDED_BY(mu_);  // snapshot_'s
  // Keys whose latest record the view rejected, per partition: an owned one is published
  // again whole at the next barrier, and a bad key it no longer has is tombstoned.
  std::map<TopicPartition, std::vector<std::string>> bad_keys_ GUARDED_BY(mu_);
  std::array<uint64_t, kRecordRejectCount> rejected_ GUARDED_BY(mu_){};
  std::string view_error_ GUARDED_BY(mu_);
  std::atomic<uint64_t> publishes_{0};
  std::atomic<uint64_t> publish_failures_{0};
  std::atomic<uint64_t> offsets_refused_{0};  // of them: the offsets' commit was refused
  std::atomic<uint64_t> records_published_{0};
  std::atomic<int64_t> last_publish_ms_{0};
};

}  // namespace seismo
