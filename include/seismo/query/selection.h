// Selection helpers shared by the JSON builders: which rows of a Snapshot table
// a Query selects, and which of a series' sums a window reads.
//
//   window W      -> Snapshot::Span(s, SpanIndex(W))
//   window "all"  -> SeriesData::total
//   previous W    -> Span(s, index of 2W (or the retention cap)) - Span(s, W)
//
// Time series read a series' buckets within the window. Windows longer than 24 h
// are rolled up to hours:
//
//   buckets  b0 b1 b2 ... (bucket_ms each)         first = Bucket(stream) - W/bucket + 1
//   points   [ step buckets ][ step buckets ] ...  step = 1, or 3600000/bucket_ms past 24 h
//
// Rows are typed keys (aggregate/series_key.h); answers group them by text ids in
// hash maps and order what they print by the texts (TextsLess), the order the
// string-keyed maps of the answers had.
//
// Threading: pure functions on an immutable Snapshot; a RowFilter belongs to one call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/query/params.h"

namespace seismo {

struct WindowSel {
  int64_t window_ms = 0;               // 0 = all
  std::optional<size_t> span;          // index into spans_ms; nullopt with window_ms == 0 or unknown
  std::optional<size_t> previous;      // the span just longer than W (2W, or capped at retention)
  bool unknown = false;                // a window the snapshot does not keep: every sum reads 0
  BucketRange range;                   // span's buckets (Snapshot::SpanRange), when span
  BucketRange previous_range;          // previous's, when previous
};

WindowSel ResolveWindow(const Snapshot& snap, int64_t window_ms);

// Totals of hang series within a window: hang time (µs) and hang count (values 0 and 1).
struct HangSums {
  int64_t hang_us = 0;
  int64_t hang_count = 0;
  void Add(const HangSums& s) {
    hang_us += s.hang_us;
    hang_count += s.hang_count;
  }
};

// Sums of `s` within the window (zeros when the window is unknown). Inline: answers call it
// for every row they walk.
inline Values ValuesIn(const SeriesData& s, const WindowSel& w) {
  if (w.window_ms == 0) return s.total();
  if (!w.span) return Values{};
  return SumBuckets(s, w.range);
}
// Sums of `s` in the previous window of equal length (zeros when there is none), given
// its sums in the window (ValuesIn).
Values PreviousValuesIn(const SeriesData& s, const WindowSel& w, const Values& in_window);
// Merges the installs of `s` within the window into `into` (nothing when the window is unknown).
void AddInstallsIn(const SeriesData& s, const WindowSel& w, HyperLogLog& into);

// The text of dimension `d` in a key of table key.table: build_date of build and crash
// rows is the first 8 characters of build_id; "" when the table lacks it.
std::string_view DimText(const Snapshot& snap, const SeriesKey& key, Dim d);

// Whether a `process` filter can match anything: one of the names SPEC §2 normalises to
// (parent, content, gpu, rdd, socket, utility, gmplugin, plugin), or another name a hang
// or crash row of `snap` holds (other process names pass through lower-cased). The API
// answers 400 otherwise, so a stale link never shows an empty list as if it were data.
bool KnownProcess(const Snapshot& snap, std::string_view process);

// Whether rows of one table pass a query's filters, resolved once per answer. Filters on
// dimensions the table lacks are ignored; `ignore` lists dimensions the caller applies
// itself (or wants ignored). Texts are compared (a filter is a string, and an id of an
// old snapshot may have been given out again for another text since), with the last
// id seen per filter remembered: rows share most of their fields.
class RowFilter {
 public:
  RowFilter(const Snapshot& snap, Table t, const Filters& filters, std::initializer_list<Dim> ignore = {});
  bool Matches(const SeriesKey& key);

 private:
  struct Check {
    Dim dim;
    size_t field;
    std::string want;  // a copy: the filters may be a temporary (HangFilters)
    Sym last = kNoId;  // memo of the last id compared and its outcome
    bool last_match = false;
  };
  const Snapshot& snap_;
  std::vector<Check> checks_;
};

// Key prefixes the answers rely on: a hang key starts with its usage key (source,
// channel, os, build_date), and a crash key with its build usage key (channel,
// product, version, build_id, os).
static_assert(int{hang_field::kSource} == usage_field::kSource &&
              int{hang_field::kChannel} == usage_field::kChannel &&
              int{hang_field::kOs} == usage_field::kOs &&
              int{hang_field::kBuildDate} == usage_field::kBuildDate);
static_assert(int{crash_field::kChannel} == build_field::kChannel &&
              int{crash_field::kProduct} == build_field::kProduct &&
              int{crash_field::kVersion} == build_field::kVersion &&
              int{crash_field::kBuildId} == build_field::kBuildId &&
              int{crash_field::kOs} == build_field::kOs);

// Orders tuples of text ids by their texts, field by field (kNoId only where both hold it).
template <size_t N>
bool TextsLess(const Snapshot& snap, const std::array<Sym, N>& a, const std::array<Sym, N>& b) {
  for (size_t i = 0; i < N; ++i) {
    if (a[i] == b[i]) continue;
    return snap.Text(a[i]) < snap.Text(b[i]);
  }
  return false;
}

// Bucketed time axis of a window (see the picture above).
struct TimeAxis {
  int64_t bucket_ms = 0;
  int64_t step = 1;         // source buckets per point
  int64_t first = 0;        // first source bucket inside the window
  int64_t last = -1;        // last source bucket (the stream time's); last < first = empty
  size_t size() const;      // number of points
  // Point index of source bucket b, or -1 when outside.
  int64_t IndexOf(int64_t b) const;
  int64_t PointStartMs(size_t i) const;
  int64_t PointMs() const { return bucket_ms * step; }
};
TimeAxis AxisFor(const Snapshot& snap, int64_t window_ms);

// Adds the buckets of `s` to `into` (size axis.size()), value i into into[..][i].
void AddPoints(const SeriesData& s, const TimeAxis& axis, std::vector<std::array<int64_t, 2>>& into);

// The rows of table t a query's filters can select, from a text index (Snapshot::RowsWithTextHash)
// of a dimension they name:
//   1. a signature (hang and crash rows), a build id (crash rows) or a build date (hang rows):
//      the rows holding that text, the first of these in that order, the index made on first
//      use if it is not yet (a few rows of 10⁶: its sort is paid once a snapshot);
//   2. else a thread or a process (hang rows, kHangFieldsIndexedAhead): the fewest rows of
//      those indexes the snapshot has made (the warm-up's round, while a view in use filters
//      on a value of theirs not known to hold half the table: ADR 0036), never making
//      one (a thread's rows can be most of the table: a sort would cost more than the walk);
//   3. else the whole table.
// Only for a RowFilter built from the same `filters` with nothing ignored: it still decides,
// and no row outside these can pass it (those dimensions compare exactly).
// In no order a reader may keep (an index's is by address, which differs between runs): sum
// the rows, or sort what they give by a total order.
std::span<const SeriesData* const> CandidateRows(const Snapshot& snap, Table t, const Filters& filters);

// How many rows CandidateRows gives for these filters when it reads an index `snap` has made
// already; nullopt when it would make one (rule 1's, not made yet) or read the whole table.
// Makes nothing. (A view this few rows select is built over the newest snapshot on request,
// ADR 0039.)
std::optional<size_t> RowsFromMadeIndexes(const Snapshot& snap, Table t, const Filters& filters);

// The hang table's fields CandidateRows reads an index of only where it is made (rule 2): the
// warm-up makes them while a view in use filters on them, from the previous round's where it
// can (api.cc WarmDefaultAnswers, ADR 0036).
struct IndexedAhead {
  Dim dim;
  size_t field;
};
inline constexpr std::array<IndexedAhead, 2> kHangFieldsIndexedAhead = {
    {{Dim::kThread, hang_field::kThread}, {Dim::kProcess, hang_field::kProcess}}};

// The snapshot to read when none has been published yet: empty tables.
const Snapshot& EmptySnapshot();

}  // namespace seismo
