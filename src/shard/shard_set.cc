#include "seismo/shard/shard_set.h"

#include <algorithm>

#include "seismo/core/hash.h"
#include "seismo/core/thread_priority.h"
#include "seismo/shard/backoff.h"

namespace seismo {

int64_t DeltaBatch::StreamTimeOf(uint16_t slot) const {
  auto it = std::lower_bound(slot_stream_time_ms.begin(), slot_stream_time_ms.end(), slot,
                             [](const std::pair<uint16_t, int64_t>& e, uint16_t s) { return e.first < s; });
  return it != slot_stream_time_ms.end() && it->first == slot ? it->second : stream_time_ms;
}

// A shard's images (one per slot) with the request they answer.
struct TaggedImage {
  uint64_t epoch = 0;
  std::unique_ptr<std::vector<ShardImage>> images;
};

// A shard's marks with the request they answer.
struct TaggedMarks {
  uint64_t epoch = 0;
  std::unique_ptr<ShardSet::Marks> marks;
};

using SlotSnapshots = std::vector<std::shared_ptr<const ShardSnapshot>>;

struct ShardSet::Shard {
  Shard(size_t i, const AggregateOptions& o, Symbols* s)
      : index(static_cast<uint32_t>(i)), options(o), symbols(s), snapshots(4), images(2), marks(2) {
    states.push_back(std::make_unique<ShardState>(o, s));
  }
  // The state of `slot`, made on its first delta (shard thread).
  ShardState& State(uint16_t slot) {
    if (slot >= states.size()) states.resize(size_t{slot} + 1);
    if (!states[slot]) states[slot] = std::make_unique<ShardState>(options, symbols);
    return *states[slot];
  }
  template <typename F>  // f(ShardState&) for every live slot's state, in slot order
  void ForEachState(F&& f) {
    for (auto& state : states) {
      if (state) f(*state);
    }
  }
  template <typename F>
  void ForEachState(F&& f) const {
    for (const auto& state : states) {
      if (state) f(static_cast<const ShardState&>(*state));
    }
  }
  SlotSnapshots Snapshots() {
    SlotSnapshots out;
    ForEachState([&](ShardState& state) { out.push_back(state.Snapshot()); });
    return out;
  }
  // Partition-scoped: the slots share the shard's budget (ADR 0010, 0024). Past it, the
  // slot with the most series folds, as one state past its own budget would.
  void FoldSlotsIfOverBudget() {
    if (states.size() < 2) return;  // one state: its own check is the shard's
    for (int round = 0; round < 4; ++round) {
      size_t series = 0, bytes = 0;
      ShardState* largest = nullptr;
      ForEachState([&](ShardState& state) {
        series += state.series_count();
        bytes += state.MemoryBytes();
        if (largest == nullptr || state.series_count() > largest->series_count()) largest = &state;
      });
      const size_t before = largest->series_count();
      if (series > options.max_series) {
        largest->FoldDownTo(before - std::min(before, series - options.max_series * 9 / 10));
      } else if (bytes > budget_bytes) {
        largest->FoldDownTo(before * 7 / 10);
      } else {
        return;
      }
      if (largest->series_count() == before) return;  // nothing left to fold there
    }
  }

  std::vector<ShardImage> Images() const {
    std::vector<ShardImage> out;
    for (size_t slot = 0; slot < states.size(); ++slot) {
      if (!states[slot]) continue;
      out.push_back(states[slot]->Image());
      out.back().shard = index;
      out.back().slot = static_cast<uint16_t>(slot);
    }
    return out;
  }

  const uint32_t index;
  const AggregateOptions options;
  const size_t budget_bytes = static_cast<size_t>(ShardStateBudget(options));
  Symbols* const symbols;
  // Per slot (index Delta::slot; null: none yet); slot 0 always, the only one unscoped.
  std::vector<std::unique_ptr<ShardState>> states;
  std::vector<std::unique_ptr<SpscRing<DeltaBatchPtr>>> rings;  // one per producer
  std::unique_ptr<std::atomic<uint64_t>[]> full_pushes;         // per ring: pushes that found it full
  SpscRing<SlotSnapshots> snapshots;                            // shard thread -> publisher
  SpscRing<TaggedImage> images;                                // shard thread -> checkpoint thread
  SpscRing<TaggedMarks> marks;                                 // shard thread -> sweeping thread
  uint64_t snapshot_epoch = 0;                                  // shard thread only
  std::atomic<uint64_t> answered_epoch{0};                      // the same, for the publisher
  uint64_t image_epoch = 0;                                     // shard thread only
  uint64_t mark_epoch = 0;                                      // shard thread only
  uint64_t drop_epoch = 0;                                      // shard thread only
  std::atomic<uint64_t> dropped_epoch{0};                       // the same, for DropSlots
  std::thread thread;
};

ShardSet::ShardSet(size_t shards, size_t producers, size_t ring_capacity, AggregateOptions options,
                   const std::atomic<int64_t>* stream_time, Symbols* symbols, bool partition_scoped)
    : partition_scoped_(partition_scoped), stream_time_(stream_time), symbols_(symbols) {
  if (shards == 0) shards = 1;
  options.shards = shards;
  for (size_t s = 0; s < shards; ++s) {
    auto shard = std::make_unique<Shard>(s, options, symbols);
    for (size_t p = 0; p < producers; ++p) {
      shard->rings.push_back(std::make_unique<SpscRing<DeltaBatchPtr>>(ring_capacity));
    }
    shard->full_pushes = std::make_unique<std::atomic<uint64_t>[]>(producers);
    shards_.push_back(std::move(shard));
  }
  latest_.resize(shards);
}

ShardSet::~ShardSet() { Stop(); }

void ShardSet::Start(int nice_steps) {
  stopping_.store(false, std::memory_order_relaxed);
  for (auto& shard : shards_) {
    Shard* s = shard.get();
    s->thread = std::thread([this, s, nice_steps] {
      LowerThisThreadPriority(nice_steps);
      Run(*s);
    });
  }
  running_ = true;
}

void ShardSet::Stop() {
  if (!running_) return;
  // release: pairs with the acquire in Run(); producers' pushes before Stop() are visible.
  stopping_.store(true, std::memory_order_release);
  for (auto& shard : shards_) {
    shard->thread.join();
    // The owner's again (debug builds check it).
    shard->ForEachState([](ShardState& state) { state.BindToCurrentThread(); });
  }
  running_ = false;
}

void ShardSet::Run(Shard& shard) {
  // Until Stop() joins this thread (states made later are made here).
  shard.ForEachState([](ShardState& state) { state.BindToCurrentThread(); });
  ShardState* unscoped = shard.states[0].get();  // slot 0 is never null (DropSlots renews it)
  // Does the slot requests made since this shard's last (acquire: pairs with RequestSlots()'
  // release). Before every batch too: a request is made while the pipeline is idle, so a
  // batch popped after it was made was pushed after it, and one whose caller timed out (it
  // went on to push that partition's documents) must still come first.
  auto take_requests = [&] {
    const uint64_t drop_requested = drop_epoch_.load(std::memory_order_acquire);
    if (drop_requested == shard.drop_epoch || hold_slot_requests_for_testing_.load()) return false;
    std::vector<std::shared_ptr<SlotRequest>> requests;
    {
      MutexLock lock(drop_mu_);
      for (auto it = slot_requests_.upper_bound(shard.drop_epoch);
           it != slot_requests_.end() && it->first <= drop_requested; ++it)
        requests.push_back(it->second);
    }
    for (const auto& request : requests) ApplySlotRequest(shard, *request);
    unscoped = shard.states[0].get();
    shard.drop_epoch = drop_requested;
    // release: pairs with RequestSlots()' acquire; the states are changed first.
    shard.dropped_epoch.store(drop_requested, std::memory_order_release);
    return true;
  };
  // The latest snapshot request this shard has seen, and its cut (ADR 0032). Pending while
  // seen_epoch != shard.snapshot_epoch (the one it answered last).
  uint64_t seen_epoch = 0, through = kAllChunks;
  auto see_request = [&] {
    // acquire: pairs with RequestSnapshots()' release.
    if (snapshot_epoch_.load(std::memory_order_acquire) == seen_epoch) return;
    MutexLock lock(request_mu_);
    seen_epoch = request_epoch_;
    through = request_through_;
  };
  Backoff backoff;
  for (;;) {
    bool any = take_requests();
    // A snapshot is taken at the end of a pass that saw its request from the start. Every
    // batch of a chunk before the cut was pushed before the request was made, so a ring
    // found empty in such a pass, or at a batch of a later chunk, holds none of them; and
    // since the request is looked at before every batch, none of a later chunk was applied.
    see_request();
    const uint64_t pass_epoch = seen_epoch;
    for (auto& ring : shard.rings) {
      while (DeltaBatchPtr* front = ring->Front()) {
        // (acquire of the ring's tail: a request made before the push is visible here.)
        see_request();
        // After the cut: left for after the snapshot (not when stopping: nobody may take it).
        if (seen_epoch != shard.snapshot_epoch && (*front)->chunk_seq >= through &&
            !stopping_.load(std::memory_order_relaxed))
          break;
        std::optional<DeltaBatchPtr> batch = ring->TryPop();
        (void)take_requests();
        if (apply_delay_for_testing_.count() > 0) std::this_thread::sleep_for(apply_delay_for_testing_);
        // Late data is judged against the stream time the batch's chunk left: a shard that
        // received nothing for a while must not judge against its own stale stream time, nor
        // against a later chunk's that another parse worker happened to push first.
        // Partition-scoped, against the stream time of the delta's own partition.
        const DeltaBatch& b = **batch;
        if (partition_scoped_) {
          for (const Delta& d : b.deltas) shard.State(d.slot).Apply(d, EventTime{b.StreamTimeOf(d.slot)});
          shard.FoldSlotsIfOverBudget();
        } else {
          const EventTime stream_time{b.stream_time_ms};
          for (const Delta& d : b.deltas) unscoped->Apply(d, stream_time);
        }
        // release: pairs with Idle()'s acquire; the applied state is complete before it counts.
        batches_applied_.fetch_add(1, std::memory_order_release);
        any = true;
      }
    }
    if (stream_time_ != nullptr && !partition_scoped_) {
      // relaxed: a monotonic hint; deltas carry their own times.
      unscoped->AdvanceTo(EventTime{stream_time_->load(std::memory_order_relaxed)});
    }
    if (seen_epoch != shard.snapshot_epoch) {
      if (seen_epoch == pass_epoch) {  // else a newer request came during the pass: one more
        SlotSnapshots snap = shard.Snapshots();
        if (shard.snapshots.TryPush(snap)) {  // full: retry next turn
          shard.snapshot_epoch = seen_epoch;
          // release: pairs with SnapshotsAnswered()' acquire; the snapshot is in the ring first.
          shard.answered_epoch.store(seen_epoch, std::memory_order_release);
        }
      }
      any = true;
    }
    // acquire: pairs with CollectImages()' release.
    uint64_t image_requested = image_epoch_.load(std::memory_order_acquire);
    if (image_requested != shard.image_epoch) {
      TaggedImage image{image_requested, std::make_unique<std::vector<ShardImage>>(shard.Images())};
      if (shard.images.TryPush(image)) shard.image_epoch = image_requested;
      any = true;
    }
    // acquire: pairs with CollectMarks()' release.
    uint64_t mark_requested = mark_epoch_.load(std::memory_order_acquire);
    if (mark_requested != shard.mark_epoch) {
      TaggedMarks marks{mark_requested, std::make_unique<Marks>()};
      shard.ForEachState(
          [&](const ShardState& state) { state.MarkIds(marks.marks->text, marks.marks->stacks); });
      if (shard.marks.TryPush(marks)) shard.mark_epoch = mark_requested;
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

void ShardSet::ApplySlotRequest(Shard& shard, SlotRequest& request) {
  for (uint16_t slot : request.drop) {
    if (slot >= shard.states.size()) continue;
    shard.states[slot].reset();
    if (slot == 0) shard.states[0] = std::make_unique<ShardState>(shard.options, shard.symbols);
  }
  if (!request.adopt) return;
  ShardState& state = shard.State(*request.adopt);
  ShardImage begin;
  begin.stream_time_ms = request.adopt_stream_time_ms;
  begin.counters = request.adopt_counters;  // the partition's, kept by its first shard
  // This shard's parts only: no other thread reads them.
  ShardCrashIds& ids = request.adopt_crash_ids[shard.index];
  begin.dedup_epoch = ids.epoch;
  begin.seen_docs = std::move(ids.current);
  begin.seen_previous = std::move(ids.previous);
  state.RestoreBegin(begin, /*with_dedup=*/true, /*with_counters=*/shard.index == 0);
  for (const SeriesImage& series : request.adopt_series[shard.index]) state.RestoreSeries(series);
  // This shard's copy is done with (the request lives until every shard has answered).
  std::vector<SeriesImage>().swap(request.adopt_series[shard.index]);
}

void ShardSet::Push(size_t p, size_t s, DeltaBatchPtr batch) {
  // relaxed: counted before the push, so pushed >= applied always holds.
  batches_pushed_.fetch_add(1, std::memory_order_relaxed);
  if (shards_[s]->rings[p]->TryPush(batch)) return;
  shards_[s]->full_pushes[p].fetch_add(1, std::memory_order_relaxed);
  Backoff backoff;
  while (!shards_[s]->rings[p]->TryPush(batch)) backoff.Idle();
}

bool ShardSet::TryPush(size_t p, size_t s, DeltaBatchPtr& batch) {
  if (!shards_[s]->rings[p]->TryPush(batch)) {
    shards_[s]->full_pushes[p].fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  batches_pushed_.fetch_add(1, std::memory_order_relaxed);  // TryPush callers only read it after joining
  return true;
}

bool ShardSet::Idle() const {
  // Callers know no producer is pushing (the source is paused and the parse
  // workers are done with everything submitted), so pushed_ is final here.
  return batches_applied_.load(std::memory_order_acquire) == batches_pushed_.load(std::memory_order_relaxed);
}

std::vector<ShardImage> ShardSet::CollectImages(std::chrono::milliseconds timeout) {
  // Late answers to an earlier request that timed out: drop them, so the
  // shards have room to answer this one.
  for (auto& shard : shards_) {
    while (shard->images.TryPop()) {
    }
  }
  // release: pairs with the shard threads' acquire of image_epoch_.
  const uint64_t epoch = image_epoch_.fetch_add(1, std::memory_order_release) + 1;
  std::vector<std::unique_ptr<std::vector<ShardImage>>> got(shards_.size());
  auto deadline = std::chrono::steady_clock::now() + timeout;
  Backoff backoff;
  size_t have = 0;
  while (have < shards_.size()) {
    for (size_t s = 0; s < shards_.size(); ++s) {
      if (got[s]) continue;
      while (auto image = shards_[s]->images.TryPop()) {
        if (image->epoch != epoch) continue;  // answers an earlier request that timed out
        got[s] = std::move(image->images);
        ++have;
        break;
      }
    }
    if (have == shards_.size()) break;
    if (std::chrono::steady_clock::now() > deadline) return {};
    backoff.Idle();
  }
  std::vector<ShardImage> out;
  for (auto& images : got) {
    for (ShardImage& image : *images) out.push_back(std::move(image));
  }
  return out;
}

std::optional<ShardSet::Marks> ShardSet::CollectMarks(std::chrono::milliseconds timeout) {
  for (auto& shard : shards_) {
    while (shard->marks.TryPop()) {
    }
  }
  // release: pairs with the shard threads' acquire of mark_epoch_.
  const uint64_t epoch = mark_epoch_.fetch_add(1, std::memory_order_release) + 1;
  Marks out;
  auto merge = [](std::vector<uint64_t>& into, const std::vector<uint64_t>& from) {
    if (into.size() < from.size()) into.resize(from.size(), 0);
    for (size_t i = 0; i < from.size(); ++i) into[i] |= from[i];
  };
  std::vector<bool> got(shards_.size(), false);
  size_t have = 0;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  Backoff backoff;
  while (have < shards_.size()) {
    for (size_t s = 0; s < shards_.size(); ++s) {
      if (got[s]) continue;
      while (auto marks = shards_[s]->marks.TryPop()) {
        if (marks->epoch != epoch) continue;  // answers an earlier request that timed out
        merge(out.text, marks->marks->text);
        merge(out.stacks, marks->marks->stacks);
        got[s] = true;
        ++have;
        break;
      }
    }
    if (have == shards_.size()) break;
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    backoff.Idle();
  }
  return out;
}

bool ShardSet::DropSlots(std::vector<uint16_t> slots, std::chrono::milliseconds timeout) {
  auto request = std::make_shared<SlotRequest>();
  request->drop = std::move(slots);
  return RequestSlots(std::move(request), timeout);
}

bool ShardSet::AdoptSlot(uint16_t slot, MovedPartition partition, std::chrono::milliseconds timeout) {
  auto request = std::make_shared<SlotRequest>();
  request->adopt = slot;
  request->adopt_stream_time_ms = partition.stream_time_ms;
  request->adopt_counters = partition.counts.shards;
  request->adopt_series.resize(shards_.size());
  for (SeriesImage& s : partition.series) {
    request->adopt_series[ShardFor(KeyContentHash(s.key, *symbols_))].push_back(std::move(s));
  }
  for (size_t s = 0; s < shards_.size(); ++s) {
    request->adopt_crash_ids.push_back(
        CrashIdsOfShard(partition.crash_ids, s, [this](uint64_t id) { return ShardFor(id); }));
  }
  return RequestSlots(std::move(request), timeout);
}

bool ShardSet::RequestSlots(std::shared_ptr<SlotRequest> request, std::chrono::milliseconds timeout) {
  uint64_t epoch = 0;
  {
    MutexLock lock(drop_mu_);
    // Requests every shard has done are forgotten.
    uint64_t done = UINT64_MAX;
    for (const auto& shard : shards_)
      done = std::min(done, shard->dropped_epoch.load(std::memory_order_acquire));
    slot_requests_.erase(slot_requests_.begin(), slot_requests_.upper_bound(done));
    epoch = drop_epoch_.load(std::memory_order_relaxed) + 1;
    slot_requests_.emplace(epoch, std::move(request));
    // release: pairs with the shard threads' acquire of drop_epoch_ (the request is in first).
    drop_epoch_.store(epoch, std::memory_order_release);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Backoff backoff;
  for (;;) {
    bool all = true;
    for (const auto& shard : shards_) {
      // acquire: pairs with the shard thread's release after it dropped the states.
      all = all && shard->dropped_epoch.load(std::memory_order_acquire) >= epoch;
    }
    if (all) {
      MutexLock lock(drop_mu_);
      slot_requests_.erase(slot_requests_.begin(), slot_requests_.upper_bound(epoch));  // done by all
      return true;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    backoff.Idle();
  }
}

void ShardSet::Restore(const std::vector<ShardImage>& images) {
  // The shard count the images were taken with (every shard has a slot-0 image).
  size_t taken_with = 0;
  for (const ShardImage& image : images) taken_with = std::max<size_t>(taken_with, size_t{image.shard} + 1);
  const bool same_layout = taken_with == shards_.size();
  // Each image into its slot's state (slot 0 unscoped).
  for (size_t s = 0; s < shards_.size(); ++s) {
    for (const ShardImage& image : images) {
      // Document ids go back where they were; with another shard count each to the
      // shard its crash routes to now (a crash's route hash is its id: delta.h). Series
      // go to the shard of their key: merges add them.
      ShardState& state = shards_[s]->State(partition_scoped_ ? image.slot : 0);
      if (same_layout) {
        const bool own = image.shard == s;
        state.RestoreBegin(image, own, own);
        continue;
      }
      ShardImage begin;  // the image's header, with this shard's ids
      begin.stream_time_ms = image.stream_time_ms;
      begin.counters = image.counters;
      begin.dedup_epoch = image.dedup_epoch;
      for (uint64_t id : image.seen_docs) {
        if (ShardFor(id) == s) begin.seen_docs.push_back(id);
      }
      for (uint64_t id : image.seen_previous) {
        if (ShardFor(id) == s) begin.seen_previous.push_back(id);
      }
      state.RestoreBegin(begin, /*with_dedup=*/true, /*with_counters=*/s == 0);
    }
  }
  for (const ShardImage& image : images) {
    for (const SeriesImage& series : image.series) {
      shards_[ShardFor(KeyContentHash(series.key, *symbols_))]
          ->State(partition_scoped_ ? image.slot : 0)
          .RestoreSeries(series);
    }
  }
  // The restored states are what the publisher shows until each shard answers its
  // first request: a shard slow to start must not leave its part out of the merge
  // (a merge of some shards' data reads as a drop in usage and fires false alerts).
  for (size_t s = 0; s < shards_.size(); ++s) latest_[s] = shards_[s]->Snapshots();
}

size_t ShardSet::QueuedBatches() const {
  size_t n = 0;
  for (const auto& shard : shards_) {
    for (const auto& ring : shard->rings) n += ring->SizeApprox();
  }
  return n;
}

size_t ShardSet::QueuedImages() const {
  size_t n = 0;
  for (const auto& shard : shards_) n += shard->images.SizeApprox();
  return n;
}

std::vector<uint64_t> ShardSet::FullPushes() const {
  std::vector<uint64_t> full;
  for (const auto& shard : shards_) {
    for (size_t p = 0; p < shard->rings.size(); ++p) {
      full.push_back(shard->full_pushes[p].load(std::memory_order_relaxed));
    }
  }
  return full;
}

uint64_t ShardSet::RequestSnapshots(uint64_t through) {
  MutexLock lock(request_mu_);
  request_through_ = through;
  const uint64_t epoch = ++request_epoch_;
  // release: pairs with the shard thread's acquire; it then reads the pair under the lock.
  snapshot_epoch_.store(epoch, std::memory_order_release);
  return epoch;
}

bool ShardSet::SnapshotsAnswered(uint64_t epoch) const {
  for (const auto& shard : shards_) {
    // acquire: pairs with the shard thread's release after its push.
    if (shard->answered_epoch.load(std::memory_order_acquire) < epoch) return false;
  }
  return true;
}

std::vector<std::shared_ptr<const ShardSnapshot>> ShardSet::LatestSnapshots() {
  std::vector<std::shared_ptr<const ShardSnapshot>> out;
  for (size_t s = 0; s < shards_.size(); ++s) {
    while (auto snap = shards_[s]->snapshots.TryPop()) latest_[s] = std::move(*snap);
    out.insert(out.end(), latest_[s].begin(), latest_[s].end());
  }
  return out;
}

void ShardSet::AdvanceAllTo(EventTime t) {
  for (auto& shard : shards_) shard->ForEachState([&](ShardState& state) { state.AdvanceTo(t); });
}

void ShardSet::AdvanceSlotTo(uint16_t slot, EventTime t) {
  for (auto& shard : shards_) {
    if (slot < shard->states.size() && shard->states[slot]) shard->states[slot]->AdvanceTo(t);
  }
}

std::vector<std::shared_ptr<const ShardSnapshot>> ShardSet::FinalSnapshots() {
  std::vector<std::shared_ptr<const ShardSnapshot>> out;
  for (const auto& shard : shards_) {
    SlotSnapshots snaps = shard->Snapshots();
    out.insert(out.end(), snaps.begin(), snaps.end());
  }
  return out;
}

std::vector<std::shared_ptr<const ShardSnapshot>> ShardSet::FinalSlotSnapshots(uint16_t slot) {
  std::vector<std::shared_ptr<const ShardSnapshot>> out;
  for (const auto& shard : shards_) {
    if (slot < shard->states.size() && shard->states[slot]) out.push_back(shard->states[slot]->Snapshot());
  }
  return out;
}

std::vector<ShardImage> ShardSet::FinalImages() const {
  std::vector<ShardImage> out;
  for (const auto& shard : shards_) {
    for (ShardImage& image : shard->Images()) out.push_back(std::move(image));
  }
  return out;
}

}  // namespace seismo
