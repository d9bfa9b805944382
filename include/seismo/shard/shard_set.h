// ShardSet: N shard threads, each the single writer of one ShardState, fed by
// one SpscRing per (producer, shard) pair.
//
//   producer 0 ──ring[0][0]──┐
//   producer 1 ──ring[1][0]──┴─> shard 0 thread ─ ShardState 0 ──snapshot ring 0──┐
//   producer 0 ──ring[0][1]──┐                                                    ├─> publisher
//   producer 1 ──ring[1][1]──┴─> shard 1 thread ─ ShardState 1 ──snapshot ring 1──┘
//   (producers are the parse workers; one ring per (producer, shard) pair)
//
// Stream time: every batch carries the stream time its chunk left (the
// pipeline's watermark, shard/watermarks.h); a shard moves to it before applying
// the batch and judges the batch's lateness against it, so whether a delta is
// late depends on the input's order only, not on which chunks a shard happened
// to apply first. Idle shards also follow a global stream time (an atomic the
// producers raise), so their windows end at the same moment as the others'.
// Snapshots: the publisher calls RequestSnapshots(through); each shard thread, once it
// has applied every batch of the chunks before the cut and none after (ADR 0032), takes
// an immutable ShardSnapshot of its state (sharing every series unchanged since the last
// one: ADR 0021) and pushes it through its own SPSC ring; LatestSnapshots() collects
// them. Shard threads never block on readers; but until a shard's snapshot is in its
// ring, it holds back the batches after the cut, so the publisher must collect each
// answer before it asks again (one request in flight, ring of 4: never full).
// Marks: for a sweep of the intern tables, each shard thread reports the ids its
// keys hold (CollectMarks), like images, at a quiescent point.
// Partition scope (ADR 0024; `partition_scoped`): a shard thread keeps one ShardState
// per partition slot (Delta::slot), made on the slot's first delta, so a partition's
// state is a function of its own records. A delta is judged late against its slot's own
// stream time, which its batch carries; states do not follow the global stream time.
// Snapshots, images and final snapshots then hold one entry per (shard, slot), and
// their merge must sum every repeated key (MergeSnapshots' routed_by_key = false:
// routed_by_key() says which). Unscoped, every delta is in slot 0: one state per shard.
//
// Ownership: owns rings, threads and states. Threading: Push/TryPush for
// producer p only on producer p's thread; RequestSnapshots/LatestSnapshots on
// one publisher thread; Start/Stop/Finalize/Merge on the owner's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/moved_partition.h"
#include "seismo/aggregate/options.h"
#include "seismo/aggregate/shard_image.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/core/mutex.h"
#include "seismo/shard/spsc_ring.h"

namespace seismo {

struct DeltaBatch {
  std::vector<Delta> deltas;
  uint64_t chunk_seq = 0;              // the chunk the deltas came from (DocChunk::seq): snapshot cuts
  int64_t stream_time_ms = INT64_MIN;  // the stream time after the chunk the deltas came from
  // Partition-scoped pipelines: (slot, that slot's stream time after the chunk) for every
  // slot of the deltas, ascending by slot.
  std::vector<std::pair<uint16_t, int64_t>> slot_stream_time_ms;

  // The stream time a delta of `slot` is judged against.
  int64_t StreamTimeOf(uint16_t slot) const;
};
using DeltaBatchPtr = std::unique_ptr<DeltaBatch>;

class ShardSet {
 public:
  // `stream_time` (ms, may be null) is the global stream time shards follow.
  // Borrows `symbols`, which must outlive the set and every snapshot.
  ShardSet(size_t shards, size_t producers, size_t ring_capacity, AggregateOptions options,
           const std::atomic<int64_t>* stream_time, Symbols* symbols, bool partition_scoped = false);
  ~ShardSet();

  // Starts the shard threads, each `nice_steps` below the caller (core/thread_priority.h).
  void Start(int nice_steps = 0);
  // Drains every ring, then joins the shard threads. Producers must have stopped.
  void Stop();

  size_t shard_count() const { return shards_.size(); }
  bool partition_scoped() const { return partition_scoped_; }
  // What MergeSnapshots of this set's snapshots takes: only crash and "(other)" keys
  // repeat across shards, unless the states are per partition.
  bool routed_by_key() const { return !partition_scoped_; }
  size_t ShardFor(uint64_t route_hash) const { return route_hash % shards_.size(); }

  // Producer `p` hands a batch to shard `s`; blocks (with backoff) while the ring is full.
  void Push(size_t p, size_t s, DeltaBatchPtr batch);
  // As Push, but returns false (keeping `batch`) when the ring is full.
  [[nodiscard]] bool TryPush(size_t p, size_t s, DeltaBatchPtr& batch);

  // Batches waiting in all rings, and the fullest ring's fill ratio (monitoring).
  size_t QueuedBatches() const;
  // Shard images not collected (yet): an answer that came after its request timed out
  // waits here until the next CollectImages() discards it (monitoring, tests).
  size_t QueuedImages() const;
  // Per ring (index shard × producers + producer): pushes that found it full so far
  // (a count, not a sample, so a ring full for an instant is not missed).
  std::vector<uint64_t> FullPushes() const;

  // Test seam, before Start(): shard threads sleep this long per batch (to back the rings up).
  void SetApplyDelayForTesting(std::chrono::milliseconds d) { apply_delay_for_testing_ = d; }
  // While held, the shards leave slot requests (DropSlots, AdoptSlot) queued: a shard slow
  // to answer, on cue.
  void HoldSlotRequestsForTesting(bool hold) { hold_slot_requests_for_testing_.store(hold); }

  // True when every batch pushed so far has been applied (any thread).
  bool Idle() const;

  // Checkpoint thread (one at a time): each shard thread serialises its state(s)
  // at its next loop turn; waits up to `timeout`. Empty on timeout. Images of
  // an earlier, timed-out request that arrive late are discarded, never used.
  // (Partition-scoped: one image per (shard, slot), each with its ShardImage::shard and
  // ::slot; Pipeline::PartitionsOf names their partitions for the checkpoint.)
  std::vector<ShardImage> CollectImages(std::chrono::milliseconds timeout);
  // Before Start(): rebuild the states from images of any shard count (series
  // are re-routed by key); LatestSnapshots() answers with them until the shards do.
  void Restore(const std::vector<ShardImage>& images);
  // One caller at a time, while nothing is pushed: the text and stack ids every
  // shard's keys hold, as bitmaps (InternTable::Sweep); nullopt on timeout.
  struct Marks {
    std::vector<uint64_t> text, stacks;
  };
  std::optional<Marks> CollectMarks(std::chrono::milliseconds timeout);

  // Publisher thread only. RequestSnapshots returns the request's epoch; SnapshotsAnswered
  // says whether every shard has pushed its snapshot for it (or a later one), so that
  // LatestSnapshots now returns snapshots taken after the request.
  // The cut (ADR 0032): each shard's snapshot holds the batches of chunks before `through`
  // (DeltaBatch::chunk_seq < through) and none of a later chunk, so the shards' parts of
  // a snapshot are one cut through the input. The caller makes sure every batch of those
  // chunks was pushed before the call (Pipeline::RequestSnapshots); kAllChunks: no cut,
  // whatever each shard has applied at its next loop turn. One request in flight: a shard
  // that sees a newer request mid-pass answers that one, with its cut, and
  // SnapshotsAnswered(older) then says yes for shards cut at different chunks.
  static constexpr uint64_t kAllChunks = UINT64_MAX;
  uint64_t RequestSnapshots(uint64_t through = kAllChunks);
  bool SnapshotsAnswered(uint64_t epoch) const;
  std::vector<std::shared_ptr<const ShardSnapshot>> LatestSnapshots();

  // Partition-scoped, one caller at a time, while nothing is pushed (the pipeline idle):
  // every shard drops the states of `slots` (slot 0 starts empty again) at its next loop
  // turn; waits up to `timeout`. False on timeout (the shards that had not answered still
  // drop them, before any later request and any batch pushed after this call).
  bool DropSlots(std::vector<uint16_t> slots, std::chrono::milliseconds timeout);
  // Partition-scoped, the same way: slot `slot` (empty in every shard) takes a partition
  // restored from the aggregates topic while the pipeline runs (ADR 0024): its series (each
  // to the shard of its key) at its stream time, its shard counters (kept by shard 0's
  // part) and its crash ids (each to the shard its crash routes to). False on timeout: the
  // shards that had not answered still do it, before any later request and any batch pushed
  // after this call.
  bool AdoptSlot(uint16_t slot, MovedPartition partition, std::chrono::milliseconds timeout);

  // After Stop(): move every shard (every slot's state) to `t`, then read the states.
  void AdvanceAllTo(EventTime t);
  // After Stop(): move one slot's state in every shard to `t` (a partition's own time).
  void AdvanceSlotTo(uint16_t slot, EventTime t);
  std::vector<std::shared_ptr<const ShardSnapshot>> FinalSnapshots();
  // After Stop(): one slot's state in every shard that has one (a partition's own
  // aggregate; merge them routed by key).
  std::vector<std::shared_ptr<const ShardSnapshot>> FinalSlotSnapshots(uint16_t slot);
  std::vector<ShardImage> FinalImages() const;
  const Symbols& symbols() const { return *symbols_; }

 private:
  struct Shard;
  void Run(Shard& shard);

  std::vector<std::unique_ptr<Shard>> shards_;
  const bool partition_scoped_;
  const std::atomic<int64_t>* stream_time_;
  std::atomic<uint64_t> snapshot_epoch_{0};  // request_epoch_, for a shard's quick look
  // The latest snapshot request, read as a pair (a shard must not take one's cut with
  // another's epoch).
  Mutex request_mu_;
  uint64_t request_epoch_ GUARDED_BY(request_mu_) = 0;
  uint64_t request_through_ GUARDED_BY(request_mu_) = kAllChunks;
  std::atomic<uint64_t> image_epoch_{0};
  std::atomic<uint64_t> mark_epoch_{0};
  std::atomic<uint64_t> drop_epoch_{0};
  // What the shards do with slots at drop_epoch_: drop some, or fill one.
  struct SlotRequest {
    std::vector<uint16_t> drop;
    std::optional<uint16_t> adopt;
    int64_t adopt_stream_time_ms = INT64_MIN;
    ShardCounters adopt_counters;
    std::vector<std::vector<SeriesImage>> adopt_series;  // per shard
    std::vector<ShardCrashIds> adopt_crash_ids;          // per shard
  };
  bool RequestSlots(std::shared_ptr<SlotRequest> request, std::chrono::milliseconds timeout);
  void ApplySlotRequest(Shard& shard, SlotRequest& request);
  Mutex drop_mu_;
  // Requests by drop epoch, each done by every shard in order: one that timed out is still
  // done, before any later one (kept until every shard has done it).
  std::map<uint64_t, std::shared_ptr<SlotRequest>> slot_requests_ GUARDED_BY(drop_mu_);
  Symbols* symbols_;
  std::atomic<uint64_t> batches_pushed_{0};   // by producers
  std::atomic<uint64_t> batches_applied_{0};  // by shard threads
  std::vector<std::vector<std::shared_ptr<const ShardSnapshot>>> latest_;  // per shard; publisher thread only
  std::atomic<bool> stopping_{false};
  bool running_ = false;
  std::chrono::milliseconds apply_delay_for_testing_{0};
  std::atomic<bool> hold_slot_requests_for_testing_{false};
};

}  // namespace seismo
