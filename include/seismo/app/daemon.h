// Daemon: the production wiring of `seismo run` (and `seismo demo`).
//
//   source thread:    [sources] files, then Kafka polling ──DocChunk──> Pipeline
//   pipeline threads: parse workers -> shard threads (see shard/pipeline.h)
//   publisher thread: every publish interval, collects shard snapshots and
//                     publishes one merged Snapshot for readers
//
// Start order: pipeline, publisher, source. Stop order is the reverse: stop
// fetching, drain the pipeline, take the final checkpoint, leave the group
// (committing what the checkpoint holds), publish a final snapshot. Every wait
// on that path ends by the shutdown deadline (SPEC §7: exit within
// shutdown_timeout); a drain that does not fit leaves the last checkpoint in
// place, consistent with its offsets, for the next start.
//
// Ownership: owns all of the above; borrows the SignatureGenerator and Clock.
// Threading: Start/Stop/Final* from the owning thread; snapshot(), counts()
// and status() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/alert/service.h"
#include "seismo/app/config.h"
#include "seismo/app/stall_guard.h"
#include "seismo/core/deferred_release.h"
#include "seismo/core/mutex.h"
#include "seismo/core/status.h"
#include "seismo/core/symbols.h"
#include "seismo/core/time.h"
#include "seismo/query/provider.h"
#include "seismo/query/replay_output.h"
#include "seismo/shard/watermarks.h"

namespace seismo {

class SignatureGenerator;
class Pipeline;
class DeadLetterSink;
class KafkaConsumer;
struct TopicPartition;

class Daemon final : public StateProvider {
 public:
  Daemon(Config config, const SignatureGenerator* signatures, const Clock* clock);
  ~Daemon();

  Status Start();
  // Stops fetching, drains every queue, takes the final checkpoint and
  // publishes a final snapshot, all by `deadline`. Ok when everything handed
  // to the pipeline was aggregated (a final checkpoint that fails is logged and
  // counted; the previous one stays). kUnavailable when the drain did not
  // finish in time: the pipeline is then abandoned, nothing newer than the last
  // checkpoint is committed, and the final state must not be used (ADR 0016).
  // Idempotent (later calls return the first result).
  [[nodiscard]] Status Shutdown(std::chrono::steady_clock::time_point deadline);
  // Shutdown() with a deadline of now + shutdown_timeout.
  void Stop();

  // StateProvider
  std::shared_ptr<const Snapshot> snapshot() const override;
  // One instance: what its pipeline decided. A cluster: the global view's, once one was
  // published (every partition's counts, as its snapshot() holds every partition).
  RecordCounts counts() const override;
  ServiceStatus status() const override;
  std::string alerts_json() const override;  // the alert engine's view, "[]" before Start()
  // The process's intern tables (every snapshot's texts).
  const Symbols& symbols() const { return *symbols_; }


  const Config& config() const { return config_; }

  // Called on the publisher thread with each new snapshot once readers see it (the HTTP
  // server hands it to its warm-up thread, which builds the dashboard's default answers:
  // ADR 0025). It must return quickly: the next publish waits for it. Set or clear it at
  // any time; clearing waits for a call in progress to return.
  using PublishHook = std::function<void(const std::shared_ptr<const Snapshot>&)>;
  void SetPublishHook(PublishHook hook);

  // Test seam: parse workers sleep this long per chunk (to force backpressure). Before Start().
  void SetParseDelayForTesting(std::chrono::milliseconds d) { parse_delay_for_testing_ = d; }
  // Test seam: called by Start() in the middle of restoring the checkpoint (a test can
  // hold the restore there). Before Start().
  void SetRestoreHookForTesting(std::function<void()> hook) { restore_hook_for_testing_ = std::move(hook); }
  // Test seam: each checkpoint write pauses this long half way through the temp file. Before Start().
  void SetCheckpointPauseForTesting(std::chrono::milliseconds d) { checkpoint_pause_for_testing_ = d; }
  // Test seam: shard threads sleep this long per batch, and each (worker, shard) ring
  // holds `batch_ring_capacity` batches (to fill those rings). Before Start().
  void SetShardBackpressureForTesting(std::chrono::milliseconds apply_delay, size_t batch_ring_capacity) {
    apply_delay_for_testing_ = apply_delay;
    batch_ring_capacity_for_testing_ = batch_ring_capacity;
  }
  // Test seam: intern bytes the first sweep starts at (then twice what a sweep left). Before Start().
  void SetSweepFloorForTesting(size_t bytes) { sweep_floor_bytes_for_testing_ = bytes; }
  // Published snapshots freed on the release thread so far (core/deferred_release.h).
  uint64_t ReleasedSnapshotsForTesting() const { return release_->released(); }
  // Tests: intern sweeps the source thread made so far. After Start(), from the source
  // thread's point of view (read once it stopped, or as a hint).
  size_t SweepsForTesting() const { return pipeline_ ? pipeline_->sweeps() : 0; }
  // Test seam: documents per chunk at most (default 2048). Before Start().
  void SetChunkDocsForTesting(size_t n) { chunk_docs_ = n; }
  // Tests: per (worker, shard) ring, the pushes that found it full so far. After Start().
  std::vector<uint64_t> FullBatchRingPushesForTesting() const;
  // Tests: alert rounds the alert thread has evaluated so far. After Start().
  uint64_t AlertRoundsForTesting() const { return alerts_ ? alerts_->rounds() : 0; }

 private:
  class Rebalance;
  void RunSource();
  bool SubmitWithBackpressure(std::unique_ptr<struct DocChunk> chunk);
  void RunPublisher();
  void Publish();
  Status RestoreCheckpoint();
  // Barrier checkpoint on the source thread; no-op without [checkpoint] dir or
  // when nothing was handed to the pipeline since the last one. False when a
  // checkpoint was due and could not be taken (counted, logged), or was held because the
  // process stood still past the group's session (StallGuard; not a failure).
  [[nodiscard]] bool Checkpoint();
  // Writes a checkpoint of `shards` with the current offsets and alert state, after
  // setting an unusable checkpoint aside (never over it).
  bool WriteCheckpointOf(std::vector<ShardImage> shards);
  // Moves the unusable checkpoint found at start aside, once; false when that failed.
  bool SetAsideUnusableCheckpoint();
  // After an unusable checkpoint: where partition `tp` is read again from (its low
  // watermark), logged and reported with the group's `committed` offset (-1 none).
  int64_t StartReread(const TopicPartition& tp, int64_t committed);
  // Records the timestamp of the first record read again from a partition.
  void NoteRereadTime(std::string_view topic, int32_t partition, std::optional<int64_t> timestamp_ms);
  // Source thread, between chunks: sweeps the intern tables once past their floor, and
  // checkpoints once an interval has passed.
  void MaybeCheckpoint();
  // In a cluster, while the stall guard holds barriers (ADR 0024, "Zombies").
  bool BarrierHeld();
  // Source thread: Pipeline::MaybeSweep, with a cluster's view and ledger marked too.
  bool SweepInternTables(std::chrono::milliseconds timeout);
  // The pipeline source of a Kafka partition: [sources] files first, then the topics.
  SourceKey KafkaSource(std::string_view topic, int32_t partition) const;
  // Source thread: waits until everything handed to the pipeline is aggregated,
  // up to kBarrierTimeout and never past the shutdown deadline (which Shutdown()
  // may move closer while this waits). False on timeout.
  bool WaitForPipeline();
  std::chrono::steady_clock::time_point ShutdownDeadline() const;

  Config config_;
  const SignatureGenerator* signatures_;
  const Clock* clock_;
  // Outlives everything below that holds ids: pipeline, snapshots, alert engine.
  std::unique_ptr<Symbols> symbols_;
  // Frees replaced snapshots off the requests' threads (core/deferred_release.h); stopped by
  // the destructor, so nothing it queued is freed after symbols_.
  std::shared_ptr<DeferredRelease> release_;
  std::unique_ptr<DeadLetterSink> dead_letters_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<Rebalance> rebalance_;
  std::unique_ptr<KafkaConsumer> consumer_;

  std::atomic<bool> stop_source_{false};
  std::atomic<bool> stop_publisher_{false};
  std::atomic<bool> sources_done_{false};
  std::atomic<bool> consuming_{false};
  std::atomic<uint64_t> pauses_{0};
  std::atomic<int64_t> last_checkpoint_ms_{0};
  std::atomic<uint64_t> checkpoint_failures_{0};
  std::atomic<bool> restored_{false};
  // An unusable checkpoint (ADR 0018). Set by Start() before any thread runs; then the
  // source thread's (and the owner's after it joined).
  bool waiting_for_operator_ = false;  // on_corrupt = "wait": nothing consumed or checkpointed
  bool set_aside_pending_ = false;     // the unusable file is still in place: move it before writing
  bool reread_from_start_ = false;     // unsaved partitions start at their low watermark
  // Re-read partitions whose first record was not seen yet: (topic, partition) and their index
  // in recovery_.reread.
  std::vector<std::pair<std::pair<std::string, int32_t>, size_t>> reread_undated_;
  std::string not_ready_reason_;       // constant after Start()
  mutable Mutex recovery_mu_;          // status() reads recovery_ from any thread
  CheckpointRecovery recovery_ GUARDED_BY(recovery_mu_);
  // steady_clock ticks; max until Shutdown() sets it (relaxed: a deadline, read in polling loops).
  std::atomic<int64_t> shutdown_deadline_{INT64_MAX};
  // Written by the source thread before it ends; read by Shutdown() after joining it.
  bool drained_ = false;
  Status shutdown_status_;
  // Source thread only (after Start()):
  std::map<std::pair<std::string, int32_t>, int64_t> checkpoint_offsets_;  // as of the last checkpoint
  std::map<std::string, int64_t> file_lines_;  // lines handed to the pipeline, per [sources] file
  std::vector<SourceKey> gone_partitions_;     // revoked or lost since the last chunk
  bool closing_ = false;                       // the consumer is being closed
  // In a cluster: after the process stood still past the group's session, nothing is
  // published until the consumer knows what it owns (ADR 0024, "Zombies"). Its watch runs
  // from Start() until the source thread has ended.
  StallGuard stall_guard_{SessionTimeoutOf(config_.kafka.properties)};
  uint64_t handed_docs_ = 0;
  uint64_t handed_docs_at_checkpoint_ = 0;
  std::string alerts_at_checkpoint_;  // the alert state the last checkpoint holds
  std::chrono::steady_clock::time_point next_checkpoint_;
  std::function<std::string()> save_alert_state_;
  std::chrono::milliseconds parse_delay_for_testing_{0};
  size_t sweep_floor_bytes_for_testing_ = 0;
  std::function<void()> restore_hook_for_testing_;
  std::chrono::milliseconds checkpoint_pause_for_testing_{0};
  std::chrono::milliseconds apply_delay_for_testing_{0};
  size_t batch_ring_capacity_for_testing_ = 0;  // 0 = the pipeline's default
  size_t chunk_docs_ = 2048;                    // documents per chunk at most (kChunkDocs, ≈1 MB of pings)
  std::string restored_alert_state_;
  bool stopped_ = false;
  int64_t started_at_ms_ = 0;
  std::thread source_thread_;
  std::thread publisher_thread_;

  mutable Mutex snapshot_mu_;  // the publisher writes snapshot_, readers copy the pointer
  std::shared_ptr<const Snapshot> snapshot_ GUARDED_BY(snapshot_mu_);
  // A cluster's: the source partitions the published global view holds (what /api/v1/status
  // lists, so it describes the numbers served).
  std::vector<ClusterStatus::Partition> published_partitions_ GUARDED_BY(snapshot_mu_);
  // A cluster's: the record counts of the published global view (counts() once there is
  // one: the header counts of the numbers served, every partition's, ADR 0024 "Counts").
  std::optional<RecordCounts> view_counts_ GUARDED_BY(snapshot_mu_);
  Mutex hook_mu_;  // held while publish_hook_ runs
  PublishHook publish_hook_ GUARDED_BY(hook_mu_);

  // Alert thread (evaluates snapshot() every alerts.interval) and its sinks; the Kafka
  // sink's producer outlives the service. Created in Start() before any thread reads them.
  std::unique_ptr<class KafkaProducer> alert_producer_;
  std::unique_ptr<AlertService> alerts_;

  // [cluster] aggregates_topic set (SPEC §9, ADR 0024): the publisher, restorer and global
  // view. Null for one instance. Created in Start() before any thread reads it.
  std::unique_ptr<class ClusterNode> cluster_;
  std::shared_ptr<const Snapshot> last_global_;  // publisher: the global view it published last
  // Cluster, source thread: at a barrier, publishes what the images hold; false on failure
  // (counted by the node, logged).
  bool PublishToCluster(const std::vector<ShardImage>& images);
  // Cluster, source thread, on assignment: each partition's start offset, its state restored
  // from the aggregates topic when that is newer than what this instance holds.
  void RestoreFromCluster(const std::vector<TopicPartition>& partitions,
                          std::map<TopicPartition, int64_t>& start);
  // Cluster, source thread, before the barrier that hands `partitions` over: when the alerts
  // go with them, no round runs from now on; with `publish_last` the barrier still publishes
  // their state (a revoke), without it this instance holds them no more (lost).
  void StopClusterAlertsIfLeaving(const std::vector<TopicPartition>& partitions, bool publish_last);
  // Cluster, source thread, after that barrier: the partitions' state leaves this instance.
  void LeaveClusterPartitions(const std::vector<TopicPartition>& partitions);
  // Cluster: whether this instance evaluates the alerts (it holds the first topic's
  // partition 0). Source thread.
  bool alert_holder_ = false;
};

}  // namespace seismo
