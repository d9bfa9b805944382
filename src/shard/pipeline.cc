#include "seismo/shard/pipeline.h"

#include <algorithm>
#include <thread>

#include "seismo/aggregate/options.h"
#include "seismo/core/thread_priority.h"
#include "seismo/parse/nesting.h"
#include "seismo/shard/backoff.h"

namespace seismo {

namespace {

// A document of the chunk in hand that parsed: where its deltas are, and what its
// chunk's turn decided about its time (none: held for later chunks).
struct Staged {
  uint32_t ref = 0;  // index into DocChunk::docs
  DocKind kind = DocKind::kMain;
  size_t deltas_begin = 0, deltas_end = 0;  // into Worker::deltas
  std::optional<int64_t> time;              // its event time, when it has one
  std::optional<TimeDecision> decision;
  uint16_t slot = 0;  // its source's (Pipeline::SlotOf)
};

}  // namespace

struct Pipeline::Worker {
  Worker(const ParseOptions& o, Symbols* symbols, const SignatureGenerator* g, size_t ring_capacity)
      : parser(o, g), encoder(symbols), ring(ring_capacity) {}
  Parser parser;
  ParsedDocument doc;  // the document in hand, reused
  DeltaEncoder encoder;
  SpscRing<DocChunkPtr> ring;  // producer: the source thread; consumer: this worker
  std::thread thread;
  // Scratch for the chunk in hand, reused.
  std::vector<Staged> staged;
  std::vector<int32_t> staged_of;  // per document of the chunk: index into `staged`, -1 if rejected
  std::vector<int8_t> reject_of;   // partition-scoped, per document: its RejectReason, -1 if parsed
  std::vector<Delta> deltas;
  std::vector<TimeDecision> decisions;
  std::vector<std::pair<HeldDoc, TimeDecision>> released;  // held earlier, decided in this turn
  std::vector<DeltaBatchPtr> batches;                      // per shard
  // Partition-scoped: the slots of the turn's decided documents, and each one's stream time.
  std::vector<uint16_t> slots;
  std::vector<std::pair<uint16_t, int64_t>> slot_times;
};

RecordCounts CountsOf(const PipelineCounters& c) {
  RecordCounts out;
  for (size_t i = 0; i < out.by_kind.size(); ++i) out.by_kind[i] = c.records[i].load();
  for (size_t i = 0; i < kRejectReasonCount; ++i) out.rejected[i] = c.rejected[i].load();
  out.documents = c.documents.load();
  out.bytes = c.bytes.load();
  return out;
}

void AddDocument(DocChunk& chunk, DocRef ref, std::string_view body, uint64_t full_bytes,
                 size_t max_document_bytes, size_t max_depth) {
  const uint64_t size = std::max<uint64_t>(full_bytes, body.size());
  ref.cut_from_bytes = 0;
  ref.nesting = {};
  if (size > max_document_bytes) {
    body = body.substr(0, std::min(body.size(), kMaxDeadLetterDocumentBytes));
    ref.cut_from_bytes = size;
  }
  // The data always ends with kParsePadding bytes after its last document, so a worker
  // parses every document where it is (Parser::ParseInto): they go before the document
  // and come back after it.
  if (!chunk.docs.empty()) chunk.data.resize(chunk.data.size() - kParsePadding);
  ref.begin = static_cast<uint32_t>(chunk.data.size());
  ref.length = static_cast<uint32_t>(body.size());
  chunk.data.append(body);
  chunk.data.append(kParsePadding, ' ');
  // After the copy: the bytes are in this thread's cache (a second pass costs ~4 % of a
  // parse worker's time on the corpora, measured in ADR 0042). A cut document is not parsed.
  if (max_depth > 0 && ref.cut_from_bytes == 0) {
    ref.nesting = {max_depth,
                   NestsDeeperThan(std::string_view(chunk.data).substr(ref.begin, ref.length), max_depth)};
  }
  chunk.docs.push_back(ref);
}

DocChunkPtr ChunkPool::Take() {
  {
    MutexLock lock(mutex_);
    if (!kept_.empty()) {
      DocChunkPtr c = std::move(kept_.back());
      kept_.pop_back();
      return c;
    }
  }
  auto c = std::make_unique<DocChunk>();
  c->data.reserve(kChunkBytes + (kChunkBytes >> 4));  // a chunk is handed on past kChunkBytes
  return c;
}

void ChunkPool::Give(DocChunkPtr chunk) {
  chunk->data.clear();
  chunk->docs.clear();
  chunk->idle.clear();
  chunk->ended.clear();
  chunk->settle = false;
  chunk->end_of_input = false;
  chunk->seq = 0;
  MutexLock lock(mutex_);
  if (kept_.size() < max_kept_) kept_.push_back(std::move(chunk));
}

namespace {
// Intern tables smaller than this are never swept: one copy of the aggregate state's
// share of memory_limit (series are charged for their keys' texts, so the live part of
// the tables fits in it; ADR 0010, 0021), at least 8 MiB.
size_t SweepFloorBytes(const PipelineOptions& o) {
  if (o.sweep_floor_bytes_for_testing > 0) return o.sweep_floor_bytes_for_testing;
  return std::max<size_t>(size_t{8} << 20,
                          ShardStateBudget(o.aggregate) * std::max<size_t>(o.aggregate.shards, 1));
}
}  // namespace

Pipeline::Pipeline(PipelineOptions options, Symbols* symbols, const SignatureGenerator* signatures,
                   DeadLetterSink* dead_letters, const Clock* clock)
    : options_(std::move(options)),
      symbols_(symbols),
      signatures_(signatures),
      dead_letters_(dead_letters),
      clock_(clock),
      shards_(options_.shards, options_.parse_threads == 0 ? 1 : options_.parse_threads,
              options_.delta_ring_capacity, options_.aggregate, &stream_time_, symbols,
              options_.partition_scoped),
      watermarks_(options_.max_clock_skew_ms),
      swept_floor_bytes_(SweepFloorBytes(options_)),
      // Enough for the chunks one worker parses while the source fills the next ones.
      chunk_pool_(4 * std::max<size_t>(options_.parse_threads, 1)) {
  if (options_.parse_threads == 0) options_.parse_threads = 1;
  shards_.SetApplyDelayForTesting(options_.apply_delay_for_testing);
  for (size_t i = 0; i < options_.parse_threads; ++i) {
    workers_.push_back(
        std::make_unique<Worker>(options_.parse, symbols_, signatures_, options_.chunk_ring_capacity));
  }
}

Pipeline::~Pipeline() { Finish(); }

void Pipeline::Start() {
  started_ = true;
  shards_.Start(options_.ingest_nice);
  for (size_t i = 0; i < workers_.size(); ++i) {
    workers_[i]->thread = std::thread([this, i] {
      LowerThisThreadPriority(options_.ingest_nice);
      RunWorker(i);
    });
  }
}

bool Pipeline::TrySubmit(DocChunkPtr& chunk) {
  const size_t docs = chunk->docs.size();
  for (size_t tries = 0; tries < workers_.size(); ++tries) {
    size_t w = next_worker_;
    next_worker_ = (next_worker_ + 1) % workers_.size();
    chunk->seq = chunks_submitted_;
    if (workers_[w]->ring.TryPush(chunk)) {
      submitted_docs_ += docs;
      ++chunks_submitted_;
      return true;
    }
  }
  return false;
}

bool Pipeline::WaitIdle(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  Backoff backoff;
  for (;;) {
    // acquire: pairs with the workers' release after they pushed a chunk's batches.
    bool parsed = chunks_done_.load(std::memory_order_acquire) == chunks_submitted_;
    if (parsed && shards_.Idle()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    backoff.Idle();
  }
}

std::optional<SourceKey> Pipeline::KeyOf(const PartitionName& name) const {
  std::optional<SourceKey> key;  // the last source of that name, as configured
  for (size_t s = 0; s < options_.sources.size(); ++s) {
    if (options_.sources[s].name == name.first) key = SourceKey{static_cast<uint16_t>(s), name.second};
  }
  return key;
}

void Pipeline::Restore(const RecordCounts& counts, std::vector<ShardImage> shards,
                       const std::vector<std::optional<PartitionName>>& partitions,
                       const std::map<PartitionName, RecordCounts>& source_counts) {
  for (size_t i = 0; i < counts.by_kind.size(); ++i) counters_.records[i].store(counts.by_kind[i]);
  for (size_t i = 0; i < kRejectReasonCount; ++i) counters_.rejected[i].store(counts.rejected[i]);
  counters_.documents.store(counts.documents);
  counters_.bytes.store(counts.bytes);
  if (options_.partition_scoped) {
    // Before Start(): the turn's members are the owner's. Images of no known partition share
    // a slot no source has (reserved before any source gets one).
    for (size_t i = 0; i < shards.size(); ++i) {
      const std::optional<SourceKey> key =
          i < partitions.size() && partitions[i] ? KeyOf(*partitions[i]) : std::nullopt;
      shards[i].slot = SlotOf(key.value_or(kUnscopedSource));
      if (key) watermarks_.RestoreSource(*key, shards[i].stream_time_ms);
    }
    for (const auto& [name, n] : source_counts) {
      if (std::optional<SourceKey> key = KeyOf(name)) slot_counts_[SlotOf(*key)] = n;
    }
  }
  shards_.Restore(shards);
  for (const ShardImage& image : shards) watermarks_.Restore(image.stream_time_ms);
  stream_time_.store(watermarks_.stream_time(), std::memory_order_relaxed);
}

void Pipeline::Submit(DocChunkPtr chunk) {
  Backoff backoff;
  while (!TrySubmit(chunk)) backoff.Idle();
}

void Pipeline::Finish() {
  if (finishing_.load(std::memory_order_relaxed)) return;  // owner thread only: no race
  if (started_ && !abandoned_.load(std::memory_order_relaxed)) {
    auto end = std::make_unique<DocChunk>();
    end->end_of_input = true;
    Submit(std::move(end));
  }
  // release: pairs with the workers' acquire; every chunk pushed before is visible to them.
  finishing_.store(true, std::memory_order_release);
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  shards_.Stop();
  if (options_.partition_scoped) {
    // Each partition's state to its own stream time, in every shard (ADR 0024). The
    // workers have stopped: the turn's members are the owner's now.
    for (size_t slot = 0; slot < source_of_slot_.size(); ++slot) {
      const int64_t t = watermarks_.source_time(source_of_slot_[slot]);
      if (t != INT64_MIN) shards_.AdvanceSlotTo(static_cast<uint16_t>(slot), EventTime{t});
    }
    return;
  }
  int64_t st = stream_time_.load(std::memory_order_relaxed);
  if (st != INT64_MIN) shards_.AdvanceAllTo(EventTime{st});
}

void Pipeline::Abandon() {
  // relaxed: the workers only need to see it eventually; Finish() joins them.
  abandoned_.store(true, std::memory_order_relaxed);
  Finish();
}

std::shared_ptr<const Snapshot> Pipeline::FinalSnapshot() {
  return MergeSnapshots(shards_.FinalSnapshots(), *symbols_, options_.aggregate.bucket_ms,
                        options_.aggregate.windows_ms, options_.aggregate.retention_ms,
                        shards_.routed_by_key());
}

std::vector<std::optional<Pipeline::PartitionName>> Pipeline::PartitionsOf(
    const std::vector<ShardImage>& images) const {
  std::vector<std::optional<PartitionName>> out(images.size());
  if (!options_.partition_scoped) return out;
  // At a barrier no turn runs, and the last one's writes are visible (WaitIdle acquires).
  for (size_t i = 0; i < images.size(); ++i) {
    if (images[i].slot >= source_of_slot_.size()) continue;
    const SourceKey key = source_of_slot_[images[i].slot];
    if (key.source >= options_.sources.size()) continue;  // the slot of images of no partition
    out[i] = PartitionName{options_.sources[key.source].name, key.partition};
  }
  return out;
}

std::map<Pipeline::PartitionName, RecordCounts> Pipeline::SourceCounts() const {
  std::map<PartitionName, RecordCounts> out;
  if (!options_.partition_scoped) return out;
  // At a barrier no turn runs, and the last one's writes are visible (WaitIdle acquires).
  for (size_t slot = 0; slot < source_of_slot_.size(); ++slot) {
    const SourceKey key = source_of_slot_[slot];
    if (key.source >= options_.sources.size()) continue;  // no partition's
    out[{options_.sources[key.source].name, key.partition}] = slot_counts_[slot];
  }
  return out;
}

std::optional<uint16_t> Pipeline::SlotOfSource(SourceKey source) const {
  auto it = slot_of_.find(source);  // the workers have stopped: no turn runs
  if (it == slot_of_.end()) return std::nullopt;
  return it->second;
}

std::shared_ptr<const Snapshot> Pipeline::FinalSlotSnapshot(uint16_t slot) {
  return MergeSnapshots(shards_.FinalSlotSnapshots(slot), *symbols_, options_.aggregate.bucket_ms,
                        options_.aggregate.windows_ms, options_.aggregate.retention_ms);
}

bool Pipeline::DropSources(const std::vector<SourceKey>& sources, std::chrono::milliseconds timeout) {
  if (!options_.partition_scoped) return true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!WaitIdle(timeout)) return false;
  // Idle: no turn runs, and the last one's writes are visible (WaitIdle acquires); the
  // chunks submitted after this see what it changes (their rings' push releases it).
  std::vector<uint16_t> slots;
  for (const SourceKey& source : sources) {
    auto it = slot_of_.find(source);
    // The last slot, shared by every source past 65 535, is never dropped (others use it).
    if (it == slot_of_.end() || it->second == UINT16_MAX) continue;
    for (const auto& [id, held] : held_) {
      if (held.slot == it->second) return false;  // undecided documents of it
    }
    slots.push_back(it->second);
  }
  const auto left =
      std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration(0));
  const bool dropped = shards_.DropSlots(slots, std::chrono::duration_cast<std::chrono::milliseconds>(left));
  // Dropped or not, the sources leave their slots: a shard that had not answered in time
  // may still drop its part later, so a slot is free for reuse only when every shard
  // answered (otherwise it stays unused: a source that comes back gets another).
  for (uint16_t slot : slots) {
    const SourceKey source = source_of_slot_[slot];
    (void)watermarks_.Forget(source);  // holds nothing (checked above)
    slot_of_.erase(source);
    source_of_slot_[slot] = kUnscopedSource;  // names no partition any more (PartitionsOf)
    slot_counts_[slot] = RecordCounts{};
    if (dropped) free_slots_.push_back(slot);
  }
  return dropped;
}

Pipeline::Adoption Pipeline::AdoptSource(SourceKey source, MovedPartition partition,
                                         std::chrono::milliseconds timeout) {
  if (!options_.partition_scoped) return Adoption::kRefused;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!WaitIdle(timeout)) return Adoption::kRefused;
  // Idle: the turn's members are the source thread's until the next submission (as in
  // DropSources). A drop that timed out has still taken the source out of its slot (the
  // shards drop it before the adoption below): only a source still in its slot is refused.
  if (slot_of_.contains(source) &&
      !DropSources({source}, std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::max(deadline - std::chrono::steady_clock::now(),
                                          std::chrono::steady_clock::duration(0)))) &&
      slot_of_.contains(source))
    return Adoption::kRefused;
  const uint16_t slot = SlotOf(source);
  watermarks_.RestoreSource(source, partition.stream_time_ms);
  slot_counts_[slot] = partition.counts.records;
  const auto left =
      std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration(0));
  return shards_.AdoptSlot(slot, std::move(partition),
                           std::chrono::duration_cast<std::chrono::milliseconds>(left))
             ? Adoption::kDone
             : Adoption::kQueued;
}

bool Pipeline::SweepDue() const {
  return symbols_->text().MemoryBytes() + symbols_->stacks().MemoryBytes() >= swept_floor_bytes_;
}

bool Pipeline::MaybeSweep(std::chrono::milliseconds timeout, const ExtraMarks& extra) {
  if (!SweepDue()) return true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!WaitIdle(timeout)) return false;
  auto marks = shards_.CollectMarks(std::chrono::duration_cast<std::chrono::milliseconds>(
      std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration(0))));
  if (!marks) return false;
  // Documents the watermarks hold keep their keys too. The workers are idle: the last
  // turn's writes to held_ happened before its chunk counted as done (WaitIdle acquires).
  for (const auto& [id, held] : held_) {
    for (const Delta& d : held.deltas) MarkKeyIds(d.key, marks->text, marks->stacks);
  }
  if (extra) extra(marks->text, marks->stacks);
  // Nothing is in flight and every worker revalidates its caches before its next chunk.
  symbols_->Sweep(marks->text, marks->stacks);
  ++sweeps_;
  const size_t live = symbols_->text().MemoryBytes() + symbols_->stacks().MemoryBytes();
  swept_floor_bytes_ = std::max(SweepFloorBytes(options_), 2 * live);
  return true;
}

size_t Pipeline::QueuedChunks() const {
  size_t n = 0;
  for (const auto& w : workers_) n += w->ring.SizeApprox();
  return n;
}

bool Pipeline::WaitTurn(const std::atomic<uint64_t>& turn, uint64_t seq) {
  Backoff backoff;
  // acquire: pairs with the release that passed the turn on, so this turn sees what the
  // previous one wrote (turn_: watermarks_, held_, next_doc_id_; handed_: its pushes).
  while (turn.load(std::memory_order_acquire) != seq) {
    if (abandoned_.load(std::memory_order_relaxed)) return false;
    backoff.Idle();
  }
  return true;
}

void Pipeline::Reject(RejectReason reason, const DocRef& ref, std::string_view body) {
  counters_.rejected[static_cast<size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
  if (dead_letters_ != nullptr && reason != RejectReason::kFiltered) {
    dead_letters_->Write(
        {reason, options_.sources[ref.source].name, ref.partition, ref.position, body, ref.cut_from_bytes});
  }
}

uint16_t Pipeline::SlotOf(SourceKey source) {
  if (!options_.partition_scoped) return 0;
  auto [it, inserted] = slot_of_.try_emplace(source, 0);
  if (inserted && !free_slots_.empty()) {
    it->second = free_slots_.back();  // every shard dropped its old state (DropSources)
    free_slots_.pop_back();
    source_of_slot_[it->second] = source;
    slot_counts_[it->second] = RecordCounts{};
  } else if (inserted) {
    // Past 65 535 sources the last slot is shared (ADR 0024: a slot per assigned partition;
    // freeing the slots of revoked partitions is not built yet).
    it->second = static_cast<uint16_t>(std::min<size_t>(source_of_slot_.size(), UINT16_MAX));
    if (source_of_slot_.size() < UINT16_MAX + size_t{1}) source_of_slot_.push_back(source);
    if (slot_counts_.size() <= it->second) slot_counts_.resize(it->second + size_t{1});
  }
  return it->second;
}

void Pipeline::CountBySlot(const Worker& worker, const DocChunk& c) {
  // What HandOver() and ParseChunk() count in counters_, per slot: the same decisions.
  for (uint32_t i = 0; i < c.docs.size(); ++i) {
    const DocRef& ref = c.docs[i];
    RecordCounts& n = slot_counts_[SlotOf({ref.source, ref.partition})];
    ++n.documents;
    n.bytes += ref.cut_from_bytes > 0 ? ref.cut_from_bytes : ref.length;
    if (worker.reject_of[i] >= 0) ++n.rejected[static_cast<size_t>(worker.reject_of[i])];
  }
  auto decided = [&](uint16_t slot, DocKind kind, const TimeDecision& d) {
    RecordCounts& n = slot_counts_[slot];
    if (d.accepted) {
      ++n.by_kind[static_cast<size_t>(kind)];
    } else {
      ++n.rejected[static_cast<size_t>(RejectReason::kFutureTime)];
    }
  };
  for (const Staged& st : worker.staged) {
    if (st.decision) decided(st.slot, st.kind, *st.decision);
  }
  for (const auto& [held, decision] : worker.released) decided(held.slot, held.kind, decision);
}

void Pipeline::SlotTimes(std::vector<uint16_t>& slots, std::vector<std::pair<uint16_t, int64_t>>& out) const {
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  out.clear();
  for (uint16_t slot : slots) out.emplace_back(slot, watermarks_.source_time(source_of_slot_[slot]));
}

void Pipeline::ParseChunk(Worker& worker, const DocChunk& c) {
  worker.staged.clear();
  worker.deltas.clear();
  worker.staged_of.assign(c.docs.size(), -1);
  if (options_.partition_scoped) worker.reject_of.assign(c.docs.size(), -1);
  for (uint32_t i = 0; i < c.docs.size(); ++i) {
    const DocRef& ref = c.docs[i];
    std::string_view body(c.data.data() + ref.begin, ref.length);
    counters_.documents.fetch_add(1, std::memory_order_relaxed);  // monitoring only
    counters_.bytes.fetch_add(ref.cut_from_bytes > 0 ? ref.cut_from_bytes : ref.length, std::memory_order_relaxed);
    // A document cut at max_document_bytes (ingest) is rejected whole, with its real size.
    // The chunk keeps kParsePadding bytes after its last document (AddDocument), so every
    // document is parsed where it is.
    const size_t readable_after = c.data.size() - (ref.begin + ref.length);
    const std::optional<RejectReason> rejected =
        ref.cut_from_bytes > 0
            ? std::optional<RejectReason>(RejectReason::kTooLarge)
            : worker.parser.ParseInto(body, DocHints{options_.sources[ref.source].kind, ref.nesting},
                                      worker.doc, readable_after);
    if (rejected) {
      Reject(*rejected, ref, body);
      if (options_.partition_scoped) worker.reject_of[i] = static_cast<int8_t>(*rejected);
      continue;
    }
    const ParsedDocument& doc = worker.doc;
    Staged st;
    st.ref = i;
    st.kind = doc.kind;
    const std::optional<EventTime> t = ResolveEventTime(doc, ref.transport_time);
    if (t) st.time = t->ms;
    st.deltas_begin = worker.deltas.size();
    // Deltas get their time in the turn (a document without one takes its source's).
    worker.encoder.Encode(doc, EventTime{0}, worker.deltas);
    st.deltas_end = worker.deltas.size();
    worker.staged_of[i] = static_cast<int32_t>(worker.staged.size());
    worker.staged.push_back(st);
  }
}

int64_t Pipeline::TakeTurn(Worker& worker, const DocChunk& c) {
  const int64_t now = clock_->Now().ms;
  const uint64_t first_id = next_doc_id_;  // the chunk's documents are first_id + index
  next_doc_id_ += c.docs.size();
  worker.decisions.clear();
  for (Staged& st : worker.staged) {
    const DocRef& ref = c.docs[st.ref];
    st.slot = SlotOf({ref.source, ref.partition});
    watermarks_.Add(first_id + st.ref, {ref.source, ref.partition}, st.time,
                    options_.sources[ref.source].live, now, worker.decisions);
  }
  for (const SourceKey& key : c.idle) watermarks_.Idle(key);
  for (const SourceKey& key : c.ended) watermarks_.End(key, now, worker.decisions);
  if (c.settle) watermarks_.Settle(now, worker.decisions);
  if (c.end_of_input) watermarks_.EndInput(now, worker.decisions);
  watermarks_.Advance();

  worker.released.clear();
  for (const TimeDecision& d : worker.decisions) {
    if (d.id >= first_id) {
      worker.staged[static_cast<size_t>(worker.staged_of[d.id - first_id])].decision = d;
      continue;
    }
    auto it = held_.find(d.id);
    worker.released.emplace_back(std::move(it->second), d);
    held_.erase(it);
  }
  for (const Staged& st : worker.staged) {
    if (st.decision) continue;
    const DocRef& ref = c.docs[st.ref];
    HeldDoc& h = held_[first_id + st.ref];
    h.kind = st.kind;
    h.deltas.assign(std::make_move_iterator(worker.deltas.begin() + static_cast<ptrdiff_t>(st.deltas_begin)),
                    std::make_move_iterator(worker.deltas.begin() + static_cast<ptrdiff_t>(st.deltas_end)));
    h.source = ref.source;
    h.partition = ref.partition;
    h.slot = st.slot;
    h.position = ref.position;
    h.body.assign(c.data.data() + ref.begin, ref.length);
  }
  if (options_.partition_scoped) {
    worker.slots.clear();
    for (const Staged& st : worker.staged) {
      if (st.decision) worker.slots.push_back(st.slot);
    }
    for (const auto& [held, decision] : worker.released) worker.slots.push_back(held.slot);
    SlotTimes(worker.slots, worker.slot_times);
    CountBySlot(worker, c);
  }
  const int64_t stream_time = watermarks_.stream_time();
  // relaxed: a hint for idle shards (batches carry their own); only the turn writes it.
  stream_time_.store(stream_time, std::memory_order_relaxed);
  return stream_time;
}

uint64_t Pipeline::RequestSnapshots() {
  MutexLock lock(handover_mu_);
  return shards_.RequestSnapshots(handed_.load(std::memory_order_acquire));
}

bool Pipeline::HandOver(size_t index, Worker& worker, const DocChunk& c, int64_t stream_time) {
  std::vector<DeltaBatchPtr>& batches = worker.batches;
  batches.resize(shards_.shard_count());
  auto route = [&](std::vector<Delta>::iterator begin, std::vector<Delta>::iterator end, int64_t t,
                   uint16_t slot) {
    for (auto d = begin; d != end; ++d) {
      d->time = EventTime{t};
      d->slot = slot;
      const size_t s = shards_.ShardFor(d->route_hash);
      if (!batches[s]) {
        batches[s] = std::make_unique<DeltaBatch>();
        batches[s]->stream_time_ms = stream_time;
        batches[s]->chunk_seq = c.seq;
        if (options_.partition_scoped) batches[s]->slot_stream_time_ms = worker.slot_times;
      }
      batches[s]->deltas.push_back(std::move(*d));
    }
  };
  for (const Staged& st : worker.staged) {
    if (!st.decision) continue;  // held
    const DocRef& ref = c.docs[st.ref];
    if (!st.decision->accepted) {
      Reject(RejectReason::kFutureTime, ref, std::string_view(c.data.data() + ref.begin, ref.length));
      continue;
    }
    counters_.records[static_cast<size_t>(st.kind)].fetch_add(1, std::memory_order_relaxed);
    route(worker.deltas.begin() + static_cast<ptrdiff_t>(st.deltas_begin),
          worker.deltas.begin() + static_cast<ptrdiff_t>(st.deltas_end), st.decision->time_ms, st.slot);
  }
  for (auto& [held, decision] : worker.released) {
    if (!decision.accepted) {
      DocRef ref;
      ref.source = held.source;
      ref.partition = held.partition;
      ref.position = held.position;
      Reject(RejectReason::kFutureTime, ref, held.body);
      continue;
    }
    counters_.records[static_cast<size_t>(held.kind)].fetch_add(1, std::memory_order_relaxed);
    route(held.deltas.begin(), held.deltas.end(), decision.time_ms, held.slot);
  }
  if (!WaitTurn(handed_, c.seq)) return false;  // the previous chunk's release below
  MutexLock lock(handover_mu_);
  for (size_t s = 0; s < batches.size(); ++s) {
    if (batches[s] && !batches[s]->deltas.empty()) shards_.Push(index, s, std::move(batches[s]));
    batches[s].reset();
  }
  // release: the next chunk's pushes, and a snapshot request's cut, come after these.
  handed_.store(c.seq + 1, std::memory_order_release);
  return true;
}

void Pipeline::RunWorker(size_t index) {
  Worker& worker = *workers_[index];
  Backoff backoff;
  for (;;) {
    if (abandoned_.load(std::memory_order_relaxed)) break;
    std::optional<DocChunkPtr> chunk = worker.ring.TryPop();
    if (!chunk) {
      // acquire: pairs with the release in Finish(); chunks pushed before it are visible.
      if (finishing_.load(std::memory_order_acquire) && worker.ring.SizeApprox() == 0) break;
      backoff.Idle();
      continue;
    }
    backoff.Reset();
    // Test seam: slept in steps, so that Abandon() is not held up by it.
    for (auto slept = std::chrono::milliseconds(0);
         slept < options_.parse_delay_for_testing && !abandoned_.load(std::memory_order_relaxed);
         slept += std::chrono::milliseconds(10)) {
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
          std::chrono::milliseconds(10), options_.parse_delay_for_testing - slept));
    }
    if (abandoned_.load(std::memory_order_relaxed)) break;  // dropped with the queued ones
    const DocChunk& c = **chunk;
    worker.encoder.Revalidate();  // the tables may have been swept since the last chunk
    ParseChunk(worker, c);
    if (!WaitTurn(turn_, c.seq)) break;
    const int64_t stream_time = TakeTurn(worker, c);
    // release: pairs with WaitTurn()'s acquire in the next chunk's worker.
    turn_.store(c.seq + 1, std::memory_order_release);

    if (!HandOver(index, worker, c, stream_time)) break;
    chunk_pool_.Give(std::move(*chunk));  // held documents keep copies of their bodies
    // release: the chunk's batches were pushed before it counts as done.
    chunks_done_.fetch_add(1, std::memory_order_release);
  }
}

}  // namespace seismo
