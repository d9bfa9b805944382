// Snapshot: the merged, immutable view of every shard's state at one moment,
// what the HTTP API, the alert engine and replay output read (ADR 0021). It holds
// the shards' snapshots (which share every unchanged series with the live state)
// (each with a pin on the intern tables, so every id it reaches stays readable for
// as long as it lives); building one copies pointers, not series.
//
// Series of one key held by several shards (a crash series, whose deltas are routed
// by document id; an "(other)" series, which every shard may fold into) are summed
// into one series the snapshot owns. Every other key lives in one shard.
//
// Windows: spans are the configured windows W and their doubles 2W (capped at the
// retention); span i holds the buckets from SpanFirstBucket(i) to stream time, so
// "previous window" sums are span(2W) - span(W). They are summed at read time from
// the series' hours (series_data.h).
//
// Threading: immutable once built; share as shared_ptr<const Snapshot>.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "seismo/aggregate/series_data.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/core/huge_pages.h"
#include "seismo/core/mutex.h"

namespace seismo {

struct BuildIndex;  // aggregate/releases.h
struct RowChanges;  // aggregate/row_changes.h
class Snapshot;
RowChanges ChangedRows(const Snapshot& before, const Snapshot& after, Table t);

class Snapshot {
 public:
  int64_t stream_time_ms = INT64_MIN;
  // Latest event time aggregated per table (INT64_MIN: none yet). Inputs arrive through
  // different topics and can lag one another; rules that compare tables read up to the
  // earliest of these rather than stream_time_ms.
  std::array<int64_t, kTableCount> table_time_ms = MakeTableTimes();
  int64_t bucket_ms = 60'000;
  std::vector<int64_t> windows_ms;
  std::vector<int64_t> spans_ms;
  ShardCounters counters;  // summed over shards
  size_t memory_bytes = 0;
  // Wall clock the snapshot was published at (what seismo_snapshot_age_seconds measures
  // from), set by the publisher; 0 for snapshots nobody publishes (tests, replay).
  int64_t built_at_ms = 0;
  const Symbols* symbols = nullptr;

  // Every series of table t, each key once, in no particular order.
  const std::vector<const SeriesData*>& table(Table t) const { return rows_[static_cast<size_t>(t)]; }
  // The same in key order (KeyLess), sorted once on first use.
  const std::vector<const SeriesData*>& sorted(Table t) const;
  // The series of table t whose key field `field` holds a text of content hash
  // `text_hash` (Hash64 of the text), in the order of their addresses: every series
  // holding that text, and any other whose text collides (a RowFilter drops those). An
  // index per (table, field), built once on first use: the rows sorted by (hash,
  // address), 16 bytes a row. The order is the same however the index was made (below);
  // addresses differ from run to run, so a reader must not depend on it (each sums what it
  // reads, or sorts by a total order), or its output would too.
  std::span<const SeriesData* const> RowsWithTextHash(Table t, size_t field, uint64_t text_hash) const;
  // The same, where that index is made already; nullopt, making nothing, where it is not: for
  // a reader whose walk of the table costs less than the index's first making (a sort).
  std::optional<std::span<const SeriesData* const>> RowsWithTextHashIfMade(Table t, size_t field,
                                                                           uint64_t text_hash) const;
  // Makes this snapshot's (t, field) index from `before`'s, given the rows the two differ by
  // in table t (aggregate/row_changes.h ChangedRows(before, *this, t)): before's entries
  // without the removed rows', the added rows' merged in. It costs the changes and one pass
  // over the index, where a first RowsWithTextHash reads every row and sorts (ADR 0034: the
  // warm-up's round, issue 19). The index is the one RowsWithTextHash would make. Returns
  // false, doing nothing, where before has not made that index, this snapshot already has,
  // or the changes are more than a quarter of before's rows and 1 024 more (a snapshot of
  // another shard set, a cluster's merged view: the full build is then cheaper); its first
  // RowsWithTextHash then makes it as always. `before` and its rows must stay alive until it
  // returns.
  bool IndexTextsFrom(const Snapshot& before, Table t, size_t field,
                      std::span<const SeriesData* const> removed,
                      std::span<const SeriesData* const> added) const;
  // The snapshot's builds (releases.h IndexSnapshot), made once on first use and shared by
  // every reader of the snapshot and its copies: the alert rules' round and the API's
  // release answers of one snapshot walk its tables for them once, not once each.
  const BuildIndex& Builds() const;
  // Makes this snapshot's Builds() from `before`'s, given the hang rows the two differ by
  // (ChangedRows(before, *this, Table::kHangs)): releases.h IndexSnapshotFrom, the warm-up's
  // round (ADR 0034). Returns false, doing nothing, where before has not made its index, this
  // snapshot already has, the two have different symbol tables, or the changes are more than
  // CheaperThanAWalk allows; its first Builds() then makes it in full. `before` and its rows
  // must stay alive until it returns.
  bool BuildsFrom(const Snapshot& before, std::span<const SeriesData* const> removed,
                  std::span<const SeriesData* const> added) const;

  // Index into spans_ms of a span length; nullopt when not kept.
  std::optional<size_t> SpanIndex(int64_t span_ms) const;
  // First bucket of span i (the last is stream time's).
  int64_t SpanFirstBucket(size_t span) const;
  // Span i's buckets (what Span reads): made once by a reader that sums many series.
  BucketRange SpanRange(size_t span) const;
  Values Span(const SeriesData& s, size_t span) const;
  HyperLogLog SpanInstalls(const SeriesData& s, size_t span) const;  // crash series
  // The buckets of the longest window, ascending.
  std::vector<BucketPoint> Points(const SeriesData& s) const;
  int64_t StreamBucket() const;

  // A key field's text (a stack's frames joined by `stack_sep`).
  std::string Field(const SeriesData& s, size_t i, std::string_view stack_sep = "\x1e") const {
    return FieldText(s.key, i, *symbols, stack_sep);
  }
  std::string_view Text(Sym s) const { return symbols->Text(s); }

 private:
  friend std::shared_ptr<Snapshot> MergeSnapshots(
      const std::vector<std::shared_ptr<const ShardSnapshot>>&, const Symbols&, int64_t,
      const std::vector<int64_t>&, int64_t, bool, std::shared_ptr<const Symbols>);
  friend RowChanges ChangedRows(const Snapshot&, const Snapshot&, Table);
  // Key order, computed once per table on first use; shared by copies of the snapshot
  // (a copy holds the same series).
  struct SortedRows {
    std::array<std::once_flag, kTableCount> once;
    std::array<std::vector<const SeriesData*>, kTableCount> rows;
  };
  std::shared_ptr<const Symbols> symbols_owner_;  // declared first: destroyed after the pins below
  std::vector<std::shared_ptr<const ShardSnapshot>> shards_;
  std::vector<std::shared_ptr<const SeriesData>> merged_;
  std::array<std::vector<const SeriesData*>, kTableCount> rows_;
  // The series MergeSnapshots may meet in several shards (a crash series, an "(other)"
  // series, any series of a merge with routed_by_key false): the rows they gave, each its
  // own or a merged one (what ChangedRows counts as changed every time).
  bool routed_by_key_ = true;
  std::array<std::vector<const SeriesData*>, kTableCount> repeatable_rows_;
  std::shared_ptr<SortedRows> sorted_ = std::make_shared<SortedRows>();
  // RowsWithTextHash's indexes, shared by copies as sorted_ is.
  struct TextIndex {
    std::once_flag once;
    std::vector<uint64_t, HugePageAllocator<uint64_t>> hashes;  // ascending (huge_pages.h)
    // rows[i] holds a text of hash hashes[i]; ascending addresses where hashes are equal
    std::vector<const SeriesData*, HugePageAllocator<const SeriesData*>> rows;
    std::atomic<bool> made{false};  // hashes and rows are final (set last, inside `once`)

    void Reserve(size_t n) {
      hashes.reserve(n);
      rows.reserve(n);
    }
    void Append(const std::pair<uint64_t, uintptr_t>& entry) {  // (hash, address), in order
      hashes.push_back(entry.first);
      rows.push_back(reinterpret_cast<const SeriesData*>(entry.second));
    }
  };
  struct TextIndexes {
    Mutex mu;
    std::map<std::pair<Table, size_t>, std::unique_ptr<TextIndex>> by_field GUARDED_BY(mu);
  };
  TextIndex& TextIndexOf(Table t, size_t field) const;  // made empty on first use
  std::shared_ptr<TextIndexes> text_indexes_ = std::make_shared<TextIndexes>();
  // Builds()'s index, shared by copies as sorted_ is.
  struct BuildsOnce {
    std::once_flag once;
    std::shared_ptr<const BuildIndex> index;
    std::atomic<bool> made{false};  // index is final (set last, inside `once`)
  };
  std::shared_ptr<BuildsOnce> builds_ = std::make_shared<BuildsOnce>();
};

// A text index's entries as it is made: (text hash, row address).
using TextIndexKeys =
    std::vector<std::pair<uint64_t, uintptr_t>, HugePageAllocator<std::pair<uint64_t, uintptr_t>>>;
// Sorts them by hash, then address: the order of a text index (exposed for its test).
void SortByHashThenAddress(TextIndexKeys& keyed);

// Spans kept for `windows_ms`: each window and its double capped at the retention,
// ascending, without repeats.
std::vector<int64_t> SpansOf(const std::vector<int64_t>& windows_ms, int64_t retention_ms);

// Merges per-shard snapshots (any order gives the same result). `routed_by_key`:
// the shards are one ShardSet's, so only crash and "(other)" keys can repeat across
// them; false (snapshots of several instances) merges every repeated key.
// `symbols_owner`, when given, is kept alive by the snapshot (a snapshot built
// outside a daemon or pipeline, which otherwise own the Symbols).
std::shared_ptr<Snapshot> MergeSnapshots(const std::vector<std::shared_ptr<const ShardSnapshot>>& shards,
                                         const Symbols& symbols, int64_t bucket_ms,
                                         const std::vector<int64_t>& windows_ms, int64_t retention_ms,
                                         bool routed_by_key = true,
                                         std::shared_ptr<const Symbols> symbols_owner = nullptr);

// Whether MergeSnapshots may meet series `s` of table `t` in several shards, and so sums
// each of its keys into one series of its own when it does: every crash series (routed by
// document), every "(other)" series (any shard may fold into it), and every series of a
// merge of several instances (`routed_by_key` false). ChangedRows counts their rows as
// changed every time.
inline bool MayRepeatAcrossShards(Table t, const SeriesData& s, bool routed_by_key) {
  return !routed_by_key || t == Table::kCrashes || s.level > 0;
}

// Sums `from` into `into` (totals, sketches, hours bucket by bucket): two partial
// series of one key.
void AddSeries(SeriesData& into, const SeriesData& from);

}  // namespace seismo
