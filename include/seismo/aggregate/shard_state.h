// ShardState: windowed aggregates of the series routed to one shard (ADR 0021).
//
//   index_        SeriesKey ─> (table, slot)       open addressing: (hash's upper half, ref)
//                                                  entries, keys compared through the slot
//   slots_[table] slot ─> shared_ptr<SeriesData>   series-major: each series holds its
//                                                  own hours and buckets (series_data.h)
//   members_      bucket ─> series with a value there, for the buckets within the
//                 retention (expiry visits exactly the series that lose a bucket)
//   pages_[table] the slots in pages of kSeriesPage, as the last snapshot saw them;
//                 a page is copied again only when one of its series changed
//
// Stream time only moves forward. A delta older than stream time − retention is
// `late_dropped`; any other lands in its own bucket. Buckets older than the
// retention leave their series' totals and are freed; a series left with no bucket
// is released. Windows are not kept as running sums: a reader sums a window from
// the hours' sums at read time (series_data.h), so moving time changes nothing but
// the expired buckets.
//
// Budget (ADR 0010): a shard holds at most `max_series` series of all tables and
// about ShardStateBudget() bytes (a running estimate of the state's heap). Beyond
// either, the least significant series (smallest share of its table's total) fold
// one level up their table's chain (fold.h), so every total stays exact and the
// largest series keep their own rows. The check runs when the state grew, not per
// delta. Remembered crash ids are bounded too: when they outgrow their share, the
// older generation is forgotten early (`dedup_forgotten`).
//
// Ownership: owned by one shard; borrows Symbols (which must outlive it and every
// snapshot). Threading: every method runs on the shard thread only (or on the
// owner's thread while the shard is stopped); snapshots are immutable and may be
// read by any thread. Debug builds check it (core/thread_owner.h): the methods that
// change or walk the state abort when called from another thread than the one the state
// was constructed on or last handed to with BindToCurrentThread().
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/fold.h"
#include "seismo/aggregate/options.h"
#include "seismo/aggregate/series_data.h"
#include "seismo/core/thread_owner.h"

namespace seismo {

struct ShardImage;
struct SeriesImage;

struct ShardCounters {
  uint64_t deltas = 0;
  uint64_t duplicates = 0;       // crash deltas whose document id was seen before
  uint64_t late_dropped = 0;     // deltas older than stream time - retention
  uint64_t folded = 0;           // series folded into "(other)"
  uint64_t dedup_forgotten = 0;  // crash ids forgotten before their time (id memory full)
};

inline constexpr size_t kSeriesPage = 256;

// The series of one table in one page of slots (null: a free slot).
struct SeriesPage {
  std::array<std::shared_ptr<const SeriesData>, kSeriesPage> series;
};

// An immutable view of one shard's state for readers: shares every series and
// hour that did not change since the previous snapshot.
struct ShardSnapshot {
  int64_t stream_time_ms = INT64_MIN;
  std::array<int64_t, kTableCount> table_time_ms = MakeTableTimes();  // latest event time applied per table
  std::array<std::vector<std::shared_ptr<const SeriesPage>>, kTableCount> pages;
  // pages[t][i] holds the slots of page page_numbers[t][i] (empty pages are left out): what
  // ChangedRows aligns the pages of two snapshots of one shard by.
  std::array<std::vector<uint32_t>, kTableCount> page_numbers;
  ShardCounters counters;
  size_t memory_bytes = 0;
  // Taken when the snapshot was built: every id it holds stays readable.
  std::shared_ptr<const InternPin> text_pin, stack_pin;

  template <typename F>  // f(const SeriesData&) for every series of table t
  void ForEach(Table t, F&& f) const {
    for (const auto& page : pages[static_cast<size_t>(t)]) {
      for (const auto& s : page->series) {
        if (s) f(*s);
      }
    }
  }
};

class ShardState {
 public:
  ShardState(AggregateOptions options, Symbols* symbols);
  ~ShardState();
  ShardState(const ShardState&) = delete;
  ShardState& operator=(const ShardState&) = delete;

  // Aggregates one delta; moves stream time forward to its time if later.
  void Apply(const Delta& d);
  // Aggregates one delta whose document was accepted at `stream_time` (the pipeline's
  // stream time after the document's chunk): moves stream time forward to it (never to
  // the delta's own time) and judges lateness against it, so that whether a delta is
  // late does not depend on what other chunks this shard has applied before it. A delta
  // not late against its own stream time whose bucket this shard has already expired
  // (a later chunk's batch came first) is dropped uncounted: it would be expired by now
  // (a crash's id is remembered first, as if it had been applied).
  void Apply(const Delta& d, EventTime stream_time);
  // Moves stream time forward (never back) and expires buckets.
  void AdvanceTo(EventTime stream_time);

  EventTime stream_time() const { return EventTime{stream_time_ms_}; }
  const ShardCounters& counters() const { return counters_; }
  const AggregateOptions& options() const { return options_; }
  size_t series_count() const { return live_series_; }
  // Folds the least significant series (as past the budget) until at most `series`
  // remain: a partition-scoped shard's slots share its budget, and the shard decides
  // which of them folds (ADR 0024).
  void FoldDownTo(size_t series);
  // Estimated heap bytes of the state: series, hours, buckets, sketches, index, ids, and
  // the intern table entries of the texts and stacks its keys use (each counted once per
  // shard, however many keys use it: ADR 0021).
  size_t MemoryBytes() const;
  // The last part alone.
  size_t KeyTextBytes() const { return static_cast<size_t>(key_text_bytes_); }
  // The same, recounted from scratch (tests check the running estimate against it).
  size_t RecountMemoryBytes() const;
  // What the estimate counts per series of table t for the snapshots' readers (row lists,
  // text indexes and build index, held outside the state: ADR 0025).
  static size_t ReaderBytes(Table t);

  // Every live series of table t (tests and the stopped state's readers).
  template <typename F>
  void ForEach(Table t, F&& f) const {
    for (const auto& s : slots_[static_cast<size_t>(t)]) {
      if (s) f(static_cast<const SeriesData&>(*s));
    }
  }

  // An immutable view sharing everything unchanged since the previous one.
  std::shared_ptr<const ShardSnapshot> Snapshot();

  // Sets the bit of every text and stack id the state's keys hold (the intern
  // tables' sweep keeps them): bit i of word i / 64.
  void MarkIds(std::vector<uint64_t>& text, std::vector<uint64_t>& stacks) const;

  // Checkpoint support (shard thread, or the owner while the shard is stopped).
  // Image(): the whole state. RestoreBegin() then RestoreSeries() for each
  // series routed here rebuilds it.
  ShardImage Image() const;
  void RestoreBegin(const ShardImage& image, bool with_dedup, bool with_counters);
  void RestoreSeries(const SeriesImage& series);

  // Hands the state to the calling thread (debug builds check every later call against
  // it): the shard thread when it starts, the owner's thread once it has joined it.
  void BindToCurrentThread() { owner_.Assign(); }

 private:
  struct Ref {
    Table table;
    uint32_t slot;
  };
  // The index holds refs alone, with the upper half of their keys' content hashes (12 bytes
  // a slot where a key, its hash and a ref took 56): a key is compared with the series its
  // ref names, which is in its slot while the ref is in the index (Release takes it out
  // first). The upper half: a shard's keys may share their low bits (the route).
  struct IndexEntry {
    uint32_t hash;
    Ref ref;
  };
  struct IndexKey {
    const SeriesKey* key;
    uint64_t hash;  // the key's content hash, carried from the parse worker
  };
  static uint32_t IndexHash(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
  struct IndexHasher {
    using is_transparent = void;
    size_t operator()(const IndexEntry& e) const { return e.hash; }
    size_t operator()(const IndexKey& k) const { return IndexHash(k.hash); }
  };
  struct IndexEq {
    using is_transparent = void;
    const ShardState* state;
    bool operator()(const IndexEntry& a, const IndexEntry& b) const {
      return a.ref.table == b.ref.table && a.ref.slot == b.ref.slot;
    }
    bool operator()(const IndexEntry& e, const IndexKey& k) const {
      return e.hash == IndexHash(k.hash) && e.ref.table == k.key->table &&
             state->slots_[static_cast<size_t>(e.ref.table)][e.ref.slot]->key == *k.key;
    }
    bool operator()(const IndexKey& k, const IndexEntry& e) const { return (*this)(e, k); }
  };

  Ref SeriesFor(const SeriesKey& key, uint64_t hash);
  SeriesData& Mutable(Ref r);                      // copy on write; marks the page changed
  HourChunk& MutableHour(SeriesData& s, size_t i);  // copy on write
  void AddToEntry(Ref r, int64_t b, const Values& v, uint64_t install_hash, const HyperLogLog* installs);
  void Release(Ref r);
  void ReleaseIfEmpty(Ref r);
  void ExpireBucket(int64_t b);
  void FoldIfOverBudget();
  void FoldOnce(size_t target);
  void Fold(Ref r);
  bool SeenBefore(uint64_t doc_hash);
  void Touch(Ref r);  // its page must be copied by the next snapshot
  int64_t BucketOf(int64_t ms) const;
  std::vector<std::shared_ptr<SeriesData>>& slots(Table t) { return slots_[static_cast<size_t>(t)]; }

  // Estimated heap bytes of one series without its hours, of an hour without its
  // buckets, and of one bucket entry in a table.
  static size_t SeriesBytes(const SeriesData& s);
  // The index, bucket lists, remembered ids, slot and page vectors (from their capacities).
  size_t TableBytes() const;
  static size_t HourBytes(const HourChunk& c);
  size_t EntryBytes(Table t) const;

  AggregateOptions options_;
  Symbols* symbols_;
  int64_t stream_time_ms_ = INT64_MIN;
  // Latest event time applied per table: where each input has got to (not checkpointed;
  // after a restore it starts again with the next delta).
  std::array<int64_t, kTableCount> table_time_ms_ = MakeTableTimes();
  int64_t expired_through_ = INT64_MIN;  // every bucket <= this has been expired

  absl::flat_hash_set<IndexEntry, IndexHasher, IndexEq> index_{0, IndexHasher{}, IndexEq{this}};
  std::array<std::vector<std::shared_ptr<SeriesData>>, kTableCount> slots_;
  std::array<std::vector<uint32_t>, kTableCount> free_slots_;
  // Bucket -> series with a value in it. A ref may name a series that has since lost
  // the bucket (folded, released) or a slot since reused: checked on use, and the list
  // is compacted when stale refs outnumber the live entries (`live`), so folding
  // cannot grow it without bound.
  struct Members {
    std::vector<Ref> refs;
    uint32_t live = 0;  // series holding a value in the bucket
  };
  absl::flat_hash_map<int64_t, Members> members_;
  bool HasBucket(Ref r, int64_t b) const;
  void Compact(int64_t b, Members& m);
  // Snapshot pages: what the last snapshot holds, and which pages changed since.
  std::array<std::vector<std::shared_ptr<const SeriesPage>>, kTableCount> pages_;
  std::array<std::vector<bool>, kTableCount> page_changed_;
  std::array<std::vector<uint32_t>, kTableCount> changed_pages_;

  absl::flat_hash_set<uint64_t> seen_crash_docs_;  // crash document ids, this generation
  absl::flat_hash_set<uint64_t> seen_previous_;    // ... and the previous one
  int64_t dedup_epoch_ = INT64_MIN;
  size_t live_series_ = 0;
  int64_t memory_bytes_ = 0;  // running estimate (not ids, index: see MemoryBytes)
  // How many live keys use each text (frames of their stacks included) and each stack:
  // an entry's bytes are charged when its first key arrives and returned with its last.
  absl::flat_hash_map<InternId, uint32_t> text_refs_, stack_refs_;
  int64_t key_text_bytes_ = 0;
  // Adds `delta` (+1 or -1) to every id `key` uses; charges or returns their entries.
  void KeyTexts(const SeriesKey& key, int delta);
  // Adds `delta` to `refs[id]`; true (and the entry charged or returned) when it was the
  // id's first or last reference.
  bool Reference(absl::flat_hash_map<InternId, uint32_t>& refs, InternId id, int delta, const InternTable& table);
  size_t state_budget_ = 0;   // ShardStateBudget(options_)
  uint32_t grew_since_check_ = 0;
  ShardCounters counters_;
  ThreadOwner owner_;  // the thread allowed to call (checked in debug builds only)
};

}  // namespace seismo
