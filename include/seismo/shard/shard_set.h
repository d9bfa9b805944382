// ShardSet: N shard threads, each the single writer of one ShardState, fed by
// one SpscRing per (producer, shard) pair.
//
//   producer 0 ──ring[0][0]──┐                ┌─> shard 0 thread ─ ShardState 0
//   producer 0 ──ring[0][1]──┼── ... ──────── ┤
//   producer 1 ──ring[1][0]──┘                └─> shard 1 thread ─ ShardState 1
//
// Ownership: owns the rings, threads and states. Threading: Push/TryPush for
// producer p are called only by producer p's thread; Start/Stop/Merge by the
// owner's thread. States are read (Merge) only after Stop() has joined the
// shard threads, or through the snapshot hook on the shard thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "seismo/aggregate/aggregates.h"
#include "seismo/aggregate/delta.h"
#include "seismo/shard/spsc_ring.h"

namespace seismo {

struct DeltaBatch {
  std::vector<Delta> deltas;
};
using DeltaBatchPtr = std::unique_ptr<DeltaBatch>;

class ShardSet {
 public:
  ShardSet(size_t shards, size_t producers, size_t ring_capacity = 1024);
  ~ShardSet();  // stops the threads if still running

  void Start();
  // Drains every ring, then joins the shard threads. Producers must have stopped.
  void Stop();

  size_t shard_count() const { return shards_.size(); }
  size_t ShardFor(uint64_t route_hash) const { return route_hash % shards_.size(); }

  // Producer `p` hands a batch to shard `s`; blocks (with backoff) while the ring is full.
  void Push(size_t p, size_t s, DeltaBatchPtr batch);
  // As Push, but returns false (keeping `batch`) when the ring is full.
  bool TryPush(size_t p, size_t s, DeltaBatchPtr& batch);

  // Total batches waiting in all rings (monitoring).
  size_t QueuedBatches() const;

  // After Stop(): combine every shard's state.
  Aggregates Merge() const;

 private:
  struct Shard {
    ShardState state;
    std::vector<std::unique_ptr<SpscRing<DeltaBatchPtr>>> rings;  // one per producer
    std::thread thread;
  };
  void Run(Shard& shard);

  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<bool> stopping_{false};
  bool running_ = false;
};

}  // namespace seismo
