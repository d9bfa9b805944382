// ShardState: windowed aggregates of the series routed to one shard.
//
//   series_[id]  key, table, total (within retention), bucket list
//   index_[table]: key -> id
//
//   buckets_ (event-time buckets, one per bucket_ms, kept for the retention)
//   ┌────────┬────────┬────────┬─────── ... ──────┬────────┐
//   │ b-R    │        │        │                  │ b(st)  │   st = stream time
//   └────────┴────────┴────────┴─────── ... ──────┴────────┘
//                               <──── span W ────────────────>  span_sums_[W]
//
// Every span (each configured window W and its double 2W, for "previous
// window" comparisons) keeps running sums, updated on Apply and when stream
// time moves buckets out of it. A bucket older than the retention is removed
// from the totals and freed.
//
// Budget (ADR 0010): a shard holds at most `max_series` series of all tables and
// about ShardStateBudget() bytes (an estimate kept up to date on every change).
// Beyond either, the least significant series (smallest share of its table's
// total) fold one level up their table's chain (fold.h), so every total stays
// exact and the largest series keep their own rows. Remembered crash ids are bounded too: when
// they outgrow their share, the older generation is forgotten early
// (`dedup_forgotten`).
//
// Ownership: owned by one shard. Threading: every method runs on the shard
// thread only; Snapshot() builds an immutable copy for readers.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/fold.h"
#include "seismo/aggregate/hll.h"
#include "seismo/aggregate/options.h"

namespace seismo {

struct ShardImage;
struct SeriesImage;

struct SeriesValues {
  std::array<int64_t, kMaxValues> v{};
  HyperLogLog installs;  // distinct installs (Delta::install_hash); empty when none known

  void Add(const SeriesValues& o);
  void Subtract(const std::array<int64_t, kMaxValues>& o);
  bool IsZero() const;
};

using SeriesTable = std::unordered_map<std::string, SeriesValues>;

struct ShardCounters {
  uint64_t deltas = 0;
  uint64_t duplicates = 0;    // crash deltas whose document id was seen before
  uint64_t late_dropped = 0;  // deltas older than stream time - retention
  uint64_t folded = 0;        // series folded into "(other)"
  uint64_t dedup_forgotten = 0;  // crash ids forgotten before their time (id memory full)
};

// One point of a series' time series: its first two values.
struct BucketPoint {
  int64_t bucket = 0;  // bucket index: start = bucket * bucket_ms
  std::array<int64_t, 2> v{};
};

// One hour of a series: every value (the alert rules need kBuildUsage's sub-process
// crash counts per hour to age-match them).
struct HourPoint {
  int64_t bucket = 0;  // hour index: start = bucket * 3 600 000
  std::array<int64_t, kMaxValues> v{};
};

// An immutable copy of one shard's state for readers.
struct ShardSnapshot {
  struct Series {
    Table table;
    std::string key;
    SeriesValues total;
    std::vector<SeriesValues> spans;  // per ShardState::spans(); installs only for crashes
    std::vector<BucketPoint> points;  // buckets within the longest window, ascending
    std::vector<HourPoint> hourly;    // the whole retention summed per hour
    int64_t first_ms = 0;             // earliest event time still retained
  };
  int64_t stream_time_ms = 0;
  std::array<int64_t, kTableCount> table_time_ms = MakeTableTimes();  // latest event time applied per table
  std::vector<int64_t> spans_ms;
  std::vector<Series> series;
  ShardCounters counters;
  size_t memory_bytes = 0;
};

class ShardState {
 public:
  explicit ShardState(AggregateOptions options = {});
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
  const std::vector<int64_t>& spans_ms() const { return spans_ms_; }
  size_t series_count() const;
  // Estimated heap bytes of the state: series, bucket entries, sketches, remembered ids.
  size_t MemoryBytes() const;
  // The same, recounted from scratch (tests check the running estimate against it).
  size_t RecountMemoryBytes() const;

  // Totals within the retention, by table (for replay output and tests).
  SeriesTable Totals(Table t) const;

  std::unique_ptr<ShardSnapshot> Snapshot() const;

  // Checkpoint support (shard thread, or the owner while the shard is stopped).
  // Image(): the whole state. RestoreBegin() then RestoreSeries() for each
  // series routed here rebuilds it (window sums and totals are recomputed).
  ShardImage Image() const;
  void RestoreBegin(const ShardImage& image, bool with_dedup, bool with_counters);
  void RestoreSeries(const SeriesImage& series);

 private:
  struct Series;
  struct Bucket;
  uint32_t SeriesFor(Table table, const std::string& key);
  void FoldIfOverBudget();
  void FoldOnce(size_t target);
  void Fold(uint32_t id);
  void ReleaseIfEmpty(uint32_t id);
  bool SeenBefore(uint64_t doc_hash);
  // Estimated heap bytes of one series (without its bucket entries) and of one
  // bucket entry; `memory_bytes_` is the running sum.
  size_t SeriesBytes(const Series& s) const;
  void AddInstall(HyperLogLog& h, uint64_t hash);
  void MergeInstalls(HyperLogLog& into, const HyperLogLog& from);
  int64_t BucketOf(int64_t ms) const;
  int64_t SpanStart(size_t span) const;  // first bucket index inside the span

  AggregateOptions options_;
  std::vector<int64_t> spans_ms_;
  int64_t stream_time_ms_ = INT64_MIN;
  // Latest event time applied per table: where each input has got to (not checkpointed;
  // after a restore it starts again with the next delta).
  std::array<int64_t, kTableCount> table_time_ms_ = MakeTableTimes();
  std::vector<std::unique_ptr<Series>> series_;  // index = series id; null = free slot
  std::vector<uint32_t> free_ids_;
  std::array<std::unordered_map<std::string, uint32_t>, kTableCount> index_;
  std::map<int64_t, Bucket> buckets_;
  std::vector<int64_t> span_start_;  // first bucket currently summed, per span
  std::unordered_set<uint64_t> seen_crash_docs_;  // crash document ids, this generation
  std::unordered_set<uint64_t> seen_previous_;    // ... and the previous one
  int64_t dedup_epoch_ = INT64_MIN;
  size_t live_series_ = 0;
  int64_t memory_bytes_ = 0;  // estimate of series, entries and sketches (not ids: see MemoryBytes)
  size_t state_budget_ = 0;   // ShardStateBudget(options_)
  ShardCounters counters_;
};

}  // namespace seismo
