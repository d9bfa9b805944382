// Selection helpers shared by the JSON builders: which rows of a Snapshot table
// a Query selects, and which of a series' sums a window reads.
//
//   window W      -> MergedSeries::spans[SpanIndex(W)]
//   window "all"  -> MergedSeries::total
//   previous W    -> spans[index of 2W (or the retention cap)] - spans[W]
//
// Time series read MergedSeries::points (buckets within the longest window).
// Windows longer than 24 h are rolled up to hours:
//
//   buckets  b0 b1 b2 ... (bucket_ms each)         first = Bucket(stream) - W/bucket + 1
//   points   [ step buckets ][ step buckets ] ...  step = 1, or 3600000/bucket_ms past 24 h
//
// Threading: pure functions on an immutable Snapshot.
#pragma once

#include <array>
#include <cstdint>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/query/params.h"

namespace seismo {

using Values = std::array<int64_t, kMaxValues>;

struct WindowSel {
  int64_t window_ms = 0;               // 0 = all
  std::optional<size_t> span;          // index into spans_ms; nullopt with window_ms == 0 or unknown
  std::optional<size_t> previous;      // the span just longer than W (2W, or capped at retention)
  bool unknown = false;                // a window the snapshot does not keep: every sum reads 0
};

WindowSel ResolveWindow(const Snapshot& snap, int64_t window_ms);

// Sums of `s` within the window (zeros when the window is unknown).
Values ValuesIn(const MergedSeries& s, const WindowSel& w);
// Sums of `s` in the previous window of equal length (zeros when there is none).
Values PreviousValuesIn(const MergedSeries& s, const WindowSel& w);
// Install sketch within the window (null when not kept).
const HyperLogLog* InstallsIn(const MergedSeries& s, const WindowSel& w);

// Whether a row with key fields `f` of table `t` passes the filters. Filters
// on dimensions the table lacks are ignored; `ignore` lists dimensions the
// caller applies itself (or wants ignored, e.g. hang-only filters on usage).
bool RowMatches(Table t, const std::vector<std::string_view>& f, const Filters& filters,
                std::initializer_list<Dim> ignore = {});

// SplitKey into a reused vector (no allocation once it has grown): the hot
// loops split every series key of a table per request.
// At most `max_fields`: the last one keeps the rest (a hang key's stack is
// long and has no key separator, so it is not scanned).
void SplitKeyInto(std::string_view key, std::vector<std::string_view>& out, size_t max_fields = SIZE_MAX);

// Field of `f` holding dimension `d` in table `t`; build_date of build and crash
// rows is the first 8 characters of build_id; "" when the table lacks it.
std::string_view Field(Table t, const std::vector<std::string_view>& f, Dim d);

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

// Adds the points of `s` to `into` (size axis.size()), value i into into[..][i].
void AddPoints(const MergedSeries& s, const TimeAxis& axis, std::vector<std::array<int64_t, 2>>& into);

// The snapshot to read when none has been published yet: empty tables.
const Snapshot& EmptySnapshot();

}  // namespace seismo
