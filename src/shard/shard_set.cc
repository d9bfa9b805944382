#include "seismo/shard/shard_set.h"

#include "seismo/shard/backoff.h"

namespace seismo {

struct ShardSet::Shard {
  explicit Shard(const AggregateOptions& o) : state(o), snapshots(4) {}
  ShardState state;
  std::vector<std::unique_ptr<SpscRing<DeltaBatchPtr>>> rings;  // one per producer
  SpscRing<std::unique_ptr<ShardSnapshot>> snapshots;          // shard thread -> publisher
  uint64_t snapshot_epoch = 0;                                  // shard thread only
  std::thread thread;
};

ShardSet::ShardSet(size_t shards, size_t producers, size_t ring_capacity, AggregateOptions options,
                   const std::atomic<int64_t>* stream_time)
    : stream_time_(stream_time) {
  if (shards == 0) shards = 1;
  options.shards = shards;
  for (size_t s = 0; s < shards; ++s) {
    auto shard = std::make_unique<Shard>(options);
    for (size_t p = 0; p < producers; ++p) {
      shard->rings.push_back(std::make_unique<SpscRing<DeltaBatchPtr>>(ring_capacity));
    }
    shards_.push_back(std::move(shard));
  }
  latest_.resize(shards);
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
  // release: pairs with the acquire in Run(); producers' pushes before Stop() are visible.
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
    if (stream_time_ != nullptr) {
      // relaxed: a monotonic hint; deltas carry their own times.
      shard.state.AdvanceTo(EventTime{stream_time_->load(std::memory_order_relaxed)});
    }
    // acquire: pairs with RequestSnapshots()' release (nothing else is published through it).
    uint64_t requested = snapshot_epoch_.load(std::memory_order_acquire);
    if (requested != shard.snapshot_epoch) {
      auto snap = shard.state.Snapshot();
      if (shard.snapshots.TryPush(snap)) shard.snapshot_epoch = requested;  // full: retry next turn
      any = true;
    }
    if (any) {
      backoff.Reset();
      continue;
    }
    if (stopping_.load(std::memory_order_acquire)) {
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

double ShardSet::MaxRingFill() const {
  double fill = 0;
  for (const auto& shard : shards_) {
    for (const auto& ring : shard->rings) {
      fill = std::max(fill, static_cast<double>(ring->SizeApprox()) / static_cast<double>(ring->capacity()));
    }
  }
  return fill;
}

void ShardSet::RequestSnapshots() { snapshot_epoch_.fetch_add(1, std::memory_order_release); }

std::vector<std::shared_ptr<const ShardSnapshot>> ShardSet::LatestSnapshots() {
  for (size_t s = 0; s < shards_.size(); ++s) {
    while (auto snap = shards_[s]->snapshots.TryPop()) latest_[s] = std::move(*snap);
  }
  return latest_;
}

void ShardSet::AdvanceAllTo(EventTime t) {
  for (auto& shard : shards_) shard->state.AdvanceTo(t);
}

Aggregates ShardSet::Merge() const {
  Aggregates out;
  for (const auto& shard : shards_) out.Merge(shard->state);
  return out;
}

std::vector<std::shared_ptr<const ShardSnapshot>> ShardSet::FinalSnapshots() const {
  std::vector<std::shared_ptr<const ShardSnapshot>> out;
  for (const auto& shard : shards_) out.push_back(shard->state.Snapshot());
  return out;
}

}  // namespace seismo
