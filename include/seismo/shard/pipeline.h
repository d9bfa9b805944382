// Pipeline: documents in, aggregates out.
//
//   source thread ──DocChunk──> ring ──> parse worker 0 ──DeltaBatch──┐
//   (file reader or   round      ring ──> parse worker 1 ──DeltaBatch──┼──> ShardSet
//    Kafka consumer)  robin                                            ┘
//
// A parse worker parses each document whole (a reject contributes nothing and
// goes to the dead-letter sink) and turns it into deltas. Then, in its chunk's
// turn (chunks take turns in the order they were submitted, whichever worker
// parses them), the chunk's documents go through the Watermarks in input order:
// each is accepted, held for the documents after it, or rejected as
// future_time, and stream time moves (ADR 0017). Out of the turn again, the
// worker groups the accepted documents' deltas (and those of earlier documents
// decided now) by owning shard and pushes one batch per shard, tagged with the
// stream time the chunk left. What is late or future therefore depends on the
// input's order only, never on thread timing or the thread count. The pushes, too,
// go in chunk order, one chunk at a time (under a mutex), so that a snapshot request
// can cut every shard after the same chunk (RequestSnapshots, ADR 0032).
//
// Partition scope (PipelineOptions::partition_scoped, ADR 0024): every source (a file,
// or one partition of a topic) gets a slot in its first turn, and its deltas go to
// that slot's state in their shard, judged late against the source's own stream time
// w(s), so each slot's state is a function of its source's documents alone (what
// lets a partition's state move between instances). The global stream time still
// decides future_time and ends the input. Unscoped, everything is in slot 0.
//
// Ownership: owns workers and the ShardSet; borrows the Symbols, SignatureGenerator,
// DeadLetterSink and Clock, which must outlive it (Symbols also every snapshot).
// Threading: Submit/TrySubmit/WaitIdle/MaybeSweep/Finish are called by one source
// thread; counters() from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "seismo/aggregate/moved_partition.h"
#include "seismo/aggregate/partition_counts.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/core/mutex.h"
#include "seismo/core/record_counts.h"
#include "seismo/core/reject.h"
#include "seismo/core/symbols.h"
#include "seismo/core/time.h"
#include "seismo/parse/options.h"
#include "seismo/parse/parser.h"
#include "seismo/shard/dead_letter.h"
#include "seismo/shard/shard_set.h"
#include "seismo/shard/spsc_ring.h"
#include "seismo/shard/watermarks.h"

namespace seismo {

// Where documents come from: a file or a topic, optionally mapped to a kind.
struct SourceInfo {
  std::string name;
  std::optional<DocKind> kind;
  // Live input (Kafka): future_time is judged against the wall clock. Otherwise (an
  // archive: files, stdin) against the source's watermark, whatever the clock says.
  bool live = false;
};

struct DocRef {
  uint32_t begin = 0;   // into DocChunk::data
  uint32_t length = 0;  // bytes in DocChunk::data
  uint16_t source = 0;  // index into PipelineOptions::sources
  int32_t partition = -1;
  int64_t position = -1;  // where it is in its source: the Kafka offset, or the line number (from 1)
  std::optional<EventTime> transport_time;
  // The document's size when it is over max_document_bytes: only its first `length`
  // bytes (what a dead letter shows) are in the chunk, and it is rejected as
  // too_large without being parsed. 0 = the whole document is in the chunk.
  uint64_t cut_from_bytes = 0;
  // The depth scan, made by the source's thread beside its copy (AddDocument with a
  // max_depth), so the parse worker does not scan it again (ADR 0042).
  Nesting nesting;
};

// Documents for one parse worker. Sources fill them with a ChunkBuilder
// (shard/chunk_builder.h), which hands a chunk on once it holds
// kChunkBytes or its source's document count, so `begin` stays far below 4 GiB
// and `length` is at most max_document_bytes (≤ 2 GiB, config) or the bytes kept
// of a cut document: both fit their 32 bits.
struct DocChunk {
  std::string data;  // the documents, then kParsePadding bytes (AddDocument)
  std::vector<DocRef> docs;
  // After the documents, in this order: sources with nothing more to read for now (a
  // Kafka partition caught up or given up), sources that ended (a file read to its
  // end: its held documents are decided), and whether every held document is decided
  // now (a checkpoint barrier). A chunk may carry these alone, without documents.
  std::vector<SourceKey> idle;
  std::vector<SourceKey> ended;
  bool settle = false;
  bool end_of_input = false;  // Finish(): every source ends
  uint64_t seq = 0;           // set by the pipeline: the chunk's turn
};
using DocChunkPtr = std::unique_ptr<DocChunk>;
inline constexpr size_t kChunkBytes = 1 << 20;

// Chunks whose documents were parsed, kept for a source to fill again: their memory is
// warm (a fresh megabyte costs a page fault per 4 KiB) and sized already. At most
// `max_kept` are kept; the others are freed. Threading: any thread.
class ChunkPool {
 public:
  explicit ChunkPool(size_t max_kept) : max_kept_(max_kept) {}
  // An empty chunk: a kept one (with the room it had), else a new one.
  DocChunkPtr Take();
  // `chunk` is done with; emptied and kept, or freed.
  void Give(DocChunkPtr chunk);

 private:
  const size_t max_kept_;
  Mutex mutex_;
  std::vector<DocChunkPtr> kept_ GUARDED_BY(mutex_);
};

// Appends one document to `chunk`, described by `ref` (its begin, length and
// cut_from_bytes are set here). `full_bytes` is the document's size when `body`
// is only its start (a LineReader line that was cut), else 0. A document over
// `max_document_bytes` keeps only the bytes its dead letter shows. With a `max_depth`, the
// document is scanned for too_deep here, while its bytes are in this thread's cache, and the
// verdict goes with it (DocRef::nesting; 0: the parser scans it).
void AddDocument(DocChunk& chunk, DocRef ref, std::string_view body, uint64_t full_bytes,
                 size_t max_document_bytes, size_t max_depth = 0);

struct PipelineOptions {
  size_t parse_threads = 1;
  size_t shards = 1;
  size_t chunk_ring_capacity = 64;
  size_t delta_ring_capacity = 1024;
  ParseOptions parse;
  AggregateOptions aggregate;
  int64_t max_clock_skew_ms = 600'000;  // further ahead of stream time (or the clock): future_time
  // Nice steps the parse workers and shard threads run below the starting thread
  // (core/thread_priority.h): the daemon's [ingest] nice; 0 for replay, all ingest.
  int ingest_nice = 0;
  std::chrono::milliseconds parse_delay_for_testing{0};  // tests only: slow workers down per chunk
  std::chrono::milliseconds apply_delay_for_testing{0};  // tests only: slow shards down per batch
  size_t sweep_floor_bytes_for_testing = 0;  // tests only: intern bytes a sweep starts at (0: the default)
  std::vector<SourceInfo> sources;
  // One state per source (file or partition) in each shard; see the header comment.
  bool partition_scoped = false;
};

// Live counters of what the parse workers decided; every field monotonically increases.
// Three sets, one per owner: these atomics (written by the workers), their plain copy
// RecordCounts (core/record_counts.h: outputs, checkpoints, status) and ShardCounters
// (aggregate/shard_state.h: what each shard thread decided — duplicates, late, folded).
struct PipelineCounters {
  std::array<std::atomic<uint64_t>, 3> records{};  // accepted, by DocKind
  std::array<std::atomic<uint64_t>, kRejectReasonCount> rejected{};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> documents{0};
};
// A plain copy of the counters, each read once.
RecordCounts CountsOf(const PipelineCounters& counters);

class Pipeline {
 public:
  Pipeline(PipelineOptions options, Symbols* symbols, const SignatureGenerator* signatures,
           DeadLetterSink* dead_letters, const Clock* clock);
  ~Pipeline();

  void Start();
  // An empty chunk for the source to fill (recycled from parsed ones).
  DocChunkPtr NewChunk() { return chunk_pool_.Take(); }
  void Submit(DocChunkPtr chunk);           // blocks while the chosen worker is full
  [[nodiscard]] bool TrySubmit(DocChunkPtr& chunk);  // false (chunk kept) when full
  // Ends the input (every source ends: held documents are decided and stream time
  // goes to where the furthest source got, as replay's does), drains everything and
  // stops all threads.
  void Finish();
  // Stops every thread without parsing the chunks still queued (the shutdown
  // budget ran out). The state is then incomplete: it must not be output or
  // checkpointed. Idempotent; a no-op after Finish().
  void Abandon();

  // Source thread: waits (up to `timeout`) until everything submitted so far
  // has been parsed and aggregated. The caller submits nothing meanwhile.
  [[nodiscard]] bool WaitIdle(std::chrono::milliseconds timeout);
  // A source partition by name: (source name, partition; -1 for a file).
  using PartitionName = std::pair<std::string, int32_t>;
  // Before Start(): continue from a checkpoint. `partitions` (empty, or one per image):
  // the source partition of each image, which a partition-scoped pipeline restores into
  // that partition's slot with its stream time; an image of none (an unscoped
  // checkpoint, or a source no longer configured) goes to a slot of its own, shared.
  // `source_counts`: each partition's record counts (SourceCounts()), partition-scoped.
  void Restore(const RecordCounts& counts, std::vector<ShardImage> shards,
               const std::vector<std::optional<PartitionName>>& partitions = {},
               const std::map<PartitionName, RecordCounts>& source_counts = {});
  // At a barrier (WaitIdle() returned true, or after Finish()): the source partition of
  // each image of this pipeline's ShardSet (CollectImages, FinalImages), for its
  // checkpoint; nullopt each unscoped.
  std::vector<std::optional<PartitionName>> PartitionsOf(const std::vector<ShardImage>& images) const;
  // At a barrier, partition-scoped: what the parse workers decided of each source
  // partition's documents (ADR 0024, "Counts"): the partition's share of counters(),
  // which moves with it (AdoptSource, DropSources). Empty unscoped.
  std::map<PartitionName, RecordCounts> SourceCounts() const;

  // Source thread, partition-scoped: `sources` leave this instance (revoked partitions,
  // whose state another instance restores from the aggregates topic: ADR 0024). Waits
  // until idle, then every shard drops their slots' states and the slots are free for
  // other sources; a source that sends documents again starts empty. The documents they
  // hold must have been decided (a settle chunk first, as a checkpoint's barrier does).
  // False while one holds documents (nothing dropped), or on a timeout: the sources leave
  // their slots all the same (the shards that had not answered drop their part before
  // anything submitted later), and those slots are never reused. True unscoped.
  [[nodiscard]] bool DropSources(const std::vector<SourceKey>& sources, std::chrono::milliseconds timeout);

  // Source thread, partition-scoped: `source` joins this instance with the state it had
  // elsewhere (a partition restored from the aggregates topic: ADR 0024), before any of its
  // documents is submitted. Waits until idle, gives the source a slot, puts the partition's
  // series into it (each in the shard of its key) and sets the source's watermark to its
  // stream time, so its next document is judged as it would have been where it came from;
  // its counts become the source's (SourceCounts() and its state's ShardCounters), and its
  // crash ids are remembered as they were there (a copy of a crash counted there is a
  // duplicate here). A state the source already has here (an older one, from the local
  // checkpoint) is dropped first.
  enum class Adoption {
    kDone,     // the source's slot holds the state in every shard
    kQueued,   // some shard had not answered within `timeout`: each takes the state before
               // anything submitted after this call (ShardSet's slot requests are done in
               // order, before batches), so the source's documents may follow as after kDone
    kRefused,  // nothing changed: the pipeline did not drain in time, the source holds
               // undecided documents, or the pipeline is not partition-scoped
  };
  [[nodiscard]] Adoption AdoptSource(SourceKey source, MovedPartition partition,
                                     std::chrono::milliseconds timeout);

  // Source thread, between submissions: when the intern tables have grown past
  // twice what was live at the last sweep (and past a floor), waits until idle and
  // sweeps the ids no shard holds any more (ADR 0021). False on a timeout (nothing
  // swept); true otherwise. `extra` marks ids held outside the pipeline (a cluster's global
  // view and publish ledger: ADR 0024), at the quiescent point; the caller keeps their
  // holders from interning until MaybeSweep returns.
  using ExtraMarks = std::function<void(std::vector<uint64_t>& text, std::vector<uint64_t>& stacks)>;
  bool MaybeSweep(std::chrono::milliseconds timeout, const ExtraMarks& extra = nullptr);
  // Whether the intern tables are past the floor MaybeSweep sweeps at (source thread).
  bool SweepDue() const;
  size_t sweeps() const { return sweeps_.load(std::memory_order_relaxed); }

  // After Finish(): every shard has been moved to the final stream time.
  std::shared_ptr<const Snapshot> FinalSnapshot();
  // After Finish(), partition-scoped: the slot `source` was given (nullopt: none, it sent
  // no document that parsed), and that slot's state alone, merged over the shards.
  std::optional<uint16_t> SlotOfSource(SourceKey source) const;
  std::shared_ptr<const Snapshot> FinalSlotSnapshot(uint16_t slot);

  // Stream time (the watermark), ms; INT64_MIN before the first accepted document.
  EventTime stream_time() const { return EventTime{stream_time_.load(std::memory_order_relaxed)}; }
  ShardSet& shards() { return shards_; }
  // Publisher thread: asks the shards for snapshots cut after the chunks handed to them so
  // far, so that a snapshot holds every document of those chunks whole and none of a later
  // one (ShardSet::RequestSnapshots, ADR 0032). Returns the request's epoch. One request at
  // a time: the next only once every shard answered this one. May wait for a chunk's pushes
  // (a full ring: until its shard applies a batch).
  uint64_t RequestSnapshots();

  const PipelineCounters& counters() const { return counters_; }
  size_t QueuedChunks() const;
  size_t QueuedBatches() const { return shards_.QueuedBatches(); }

 private:
  struct Worker;
  // A document the Watermarks hold; its chunk is gone by the time it is decided.
  struct HeldDoc {
    DocKind kind = DocKind::kMain;
    std::vector<Delta> deltas;
    uint16_t source = 0;
    int32_t partition = -1;
    uint16_t slot = 0;
    int64_t position = -1;  // DocRef::position
    std::string body;  // for its dead letter, should it turn out future_time
  };
  void RunWorker(size_t index);
  // Parses the chunk into the worker's staged documents and deltas (rejects counted).
  void ParseChunk(Worker& worker, const DocChunk& chunk);
  // Waits until `turn` (turn_ or handed_) is chunk `seq`'s; false when the pipeline was
  // abandoned meanwhile.
  bool WaitTurn(const std::atomic<uint64_t>& turn, uint64_t seq);
  // In the chunk's turn: the Watermarks decide its documents (and held ones); returns
  // the stream time the chunk leaves.
  int64_t TakeTurn(Worker& worker, const DocChunk& chunk);
  // After the turn: decided documents' deltas to the shards, future_time ones rejected.
  // The batches are pushed in chunk order (false: the pipeline was abandoned first).
  bool HandOver(size_t index, Worker& worker, const DocChunk& chunk, int64_t stream_time);
  void Reject(RejectReason reason, const DocRef& ref, std::string_view body);
  // The source a partition-scoped pipeline files restored images of no partition under.
  static constexpr SourceKey kUnscopedSource{UINT16_MAX, INT32_MIN};
  // The configured source a partition name is of (nullopt: none).
  std::optional<SourceKey> KeyOf(const PartitionName& name) const;
  // In a turn: the slot of `source` (0 unscoped), given on its first document.
  uint16_t SlotOf(SourceKey source);
  // In a turn, partition-scoped: the chunk's documents counted to their sources' slots.
  void CountBySlot(const Worker& worker, const DocChunk& chunk);
  // In a turn, after the watermarks moved: each slot of `slots` with its stream time.
  void SlotTimes(std::vector<uint16_t>& slots, std::vector<std::pair<uint16_t, int64_t>>& out) const;

  PipelineOptions options_;
  Symbols* symbols_;
  const SignatureGenerator* signatures_;
  DeadLetterSink* dead_letters_;
  const Clock* clock_;
  // Raised by workers at the end of each turn (relaxed; a hint for idle shards, which
  // follow it so their windows end where the others' do: batches carry their own).
  std::atomic<int64_t> stream_time_{INT64_MIN};
  ShardSet shards_;
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t next_worker_ = 0;
  uint64_t submitted_docs_ = 0;    // source thread only
  uint64_t chunks_submitted_ = 0;  // source thread only
  bool started_ = false;           // owner thread only

  // The turn: chunk `turn_` may use the members below. A worker waits for its chunk's
  // turn (acquire) and passes it on (release), so each sees what the previous turn wrote.
  std::atomic<uint64_t> turn_{0};
  Watermarks watermarks_;                       // turn only
  std::unordered_map<uint64_t, HeldDoc> held_;  // turn only: documents held, by id
  std::map<SourceKey, uint16_t> slot_of_;       // turn only: partition-scoped sources' slots
  std::vector<SourceKey> source_of_slot_;       // turn only: the same, by slot
  std::vector<uint16_t> free_slots_;            // turn only: slots of dropped sources, for reuse
  std::vector<RecordCounts> slot_counts_;       // turn only: per slot, its source's SourceCounts()
  uint64_t next_doc_id_ = 0;                    // turn only
  std::atomic<uint64_t> chunks_done_{0};  // parse workers: chunks parsed and handed to shards
  // Chunks hand their batches to the shards in order, one at a time: chunk `handed_` is next
  // (acquire/release, as turn_), and it pushes under handover_mu_, so RequestSnapshots sees
  // every chunk before handed_ pushed whole and none after it began.
  std::atomic<uint64_t> handed_{0};
  Mutex handover_mu_;
  std::atomic<bool> finishing_{false};
  std::atomic<bool> abandoned_{false};  // set by Abandon(); workers stop at the next chunk
  size_t swept_floor_bytes_;  // intern bytes that trigger the next sweep (source thread)
  std::atomic<size_t> sweeps_{0};  // written by the source thread; read by anyone (relaxed)
  PipelineCounters counters_;
  ChunkPool chunk_pool_;
};

}  // namespace seismo
