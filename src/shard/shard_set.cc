#include "seismo/shard/shard_set.h"

#include "seismo/shard/backoff.h"

namespace seismo {

ShardSet::ShardSet(size_t shards, size_t producers, size_t ring_capacity) {
  if (shards == 0) shards = 1;
  for (size_t s = 0; s < shards; ++s) {
    auto shard = std::make_unique<Shard>();
    for (size_t p = 0; p < producers; ++p) {
      shard->rings.push_back(std::make_unique<SpscRing<DeltaBatchPtr>>(ring_capacity));
    }
    shards_.push_back(std::move(shard));
  }
}

ShardSet::~ShardSet() { Stop(); }

void ShardSet::Start() {
  stopping_.store(false, std::memory_order_relaxed);
  for (auto& shard : shards_) {
    Shard* s = shard.get();
    s->thread = std::thread([this, s] { Run(*s); });
  }
  running_ = true;
}

void ShardSet::Stop() {
  if (!running_) return;
  // release: everything producers pushed before Stop() is visible to the shard
  // threads once they observe stopping_ (acquire in Run).
  stopping_.store(true, std::memory_order_release);
  for (auto& shard : shards_) shard->thread.join();
  running_ = false;
}

void ShardSet::Run(Shard& shard) {
  Backoff backoff;
  for (;;) {
    bool any = false;
    for (auto& ring : shard.rings) {
      while (std::optional<DeltaBatchPtr> batch = ring->TryPop()) {
        for (const Delta& d : (*batch)->deltas) shard.state.Apply(d);
        any = true;
      }
    }
    if (any) {
      backoff.Reset();
      continue;
    }
    if (stopping_.load(std::memory_order_acquire)) {
      // Producers are done; one last sweep catches batches pushed just before.
      bool empty = true;
      for (auto& ring : shard.rings) empty = empty && ring->SizeApprox() == 0;
      if (empty) return;
      continue;
    }
    backoff.Idle();
  }
}

void ShardSet::Push(size_t p, size_t s, DeltaBatchPtr batch) {
  Backoff backoff;
  while (!shards_[s]->rings[p]->TryPush(batch)) backoff.Idle();
}

bool ShardSet::TryPush(size_t p, size_t s, DeltaBatchPtr& batch) {
  return shards_[s]->rings[p]->TryPush(batch);
}

size_t ShardSet::QueuedBatches() const {
  size_t n = 0;
  for (const auto& shard : shards_) {
    for (const auto& ring : shard->rings) n += ring->SizeApprox();
  }
  return n;
}

Aggregates ShardSet::Merge() const {
  Aggregates out;
  for (const auto& shard : shards_) out.Merge(shard->state);
  return out;
}

}  // namespace seismo
