// HangRows: the hang table's rows with a value in one window, their window sums made once,
// dense and in stack order: what the default answers of one snapshot share (issue 19).
//
//   WarmDefaultAnswers ── HangRows(snap, default window, no filter) ──┬─> /builds ×2
//                         one walk of the table, window sums once      ├─> /hangs ×3
//                                                                      └─> flame graph
//
// Each of those answers used to walk every hang series and sum its window again (a pointer
// chase into the series' hours per row per answer): six walks of 10⁶ series a round. An
// answer reads a HangRows it is given when the rows serve its query (Serves), else walks the
// table as before (ForEachHangRow); both ways give the same rows, so the same bytes
// (HangRows.* tests). Rows come in stack order, so IdSums sums their stacks without sorting
// by stack (id_sums.h).
//
// The warm-up keeps its rows from round to round and updates them from what changed since
// the snapshot they were made from (Update, ADR 0034): a round then costs the changed rows,
// not a walk of 10⁶ series and a sort.
//
// Memory: BytesFor(series), reserved by the warm-up from the answer budget and held between
// rounds while it keeps the rows (api.h WarmCarry); ScratchBytesFor(series) more while they
// are made or updated, within the hold of the answer they are made for (ADR 0037).
//
// Threading: one thread at a time (the warm-up's); read by one round's answers, one at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "seismo/aggregate/row_changes.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/core/huge_pages.h"
#include "seismo/query/params.h"
#include "seismo/query/selection.h"

namespace seismo {

struct HangRow {
  SeriesKey key;
  HangSums sums;  // in the window
  // The series, in the snapshot the rows were made from or updated to (which outlives the
  // rows' use of it): read again when the window moves on (HangRows::Update). Null in rows
  // made elsewhere (tests, RowDelta readers need only key and sums).
  const SeriesData* series = nullptr;
};

// What an Update changed, row by row: the rows of `before` that changed or left, with their
// sums as they were, and the rows of `after` that changed or came, with their sums now. The
// rows before, without `left`, with `came`, are the rows after (a changed row is in both):
// what the groups kept beside the rows are brought up to date with (hang_groups.h).
struct RowDelta {
  std::vector<HangRow> left;
  std::vector<HangRow> came;
};

class HangRows {
 public:
  // The rows of `snap`'s hang table that pass `filters` with a value in window `window_ms`
  // (fewer than 2³² rows: a hang series takes hundreds of bytes).
  HangRows(const Snapshot& snap, int64_t window_ms, const Filters& filters);

  // Makes these rows, made from `before` (or updated to it), the rows of `after`, from the
  // rows the two differ by (`changes`: ChangedRows(before, after, Table::kHangs) of
  // aggregate/row_changes.h, which the warm-up makes once for this and its text index): a
  // changed row's sums are replaced where it stands, a removed one leaves, an added one is
  // merged in at its stack (ADR 0034). The cost is the changed rows and the rows moved to
  // make room, not a walk of the table.
  // When stream time crossed a bucket boundary between the two, the window's first buckets
  // left it and new ones came: a series no delta touched may have had a value in those that
  // left. Then every row the change set leaves alone is read again from its series (one pass
  // over the rows, no sort), and those whose sums moved are changed rows too (or leave, at 0).
  // The buckets that came hold values of changed series, and of the series kept aside as
  // ahead: those with no value in the window but one past its end (a hang event later than
  // stream time, from a source ahead of the slowest, up to `max_clock_skew`, ADR 0017), noted
  // when the rows were made and each time such a series changed. A move reads them again
  // too, and those with a value in the window now come as rows. Each update reads that list
  // (a lookup each in the change set); more of them than AheadBound, and the list is dropped
  // and the next move refuses, until the rows are made anew.
  // Returns false, the rows untouched, where an update would not give the rows a walk of
  // `after` gives: another bucket length, window span or reading of an unknown window, or a
  // window that moved back, or a move after the series kept aside overflowed (above); or
  // where it would take too much scratch: the rows removed and added
  // together (a changed row is both, and so is a row whose sums the window's move changed)
  // are more than ChangeBound (an eighth of the rows and 1 024). Then make them anew.
  // `before` must be the snapshot they were made from, still alive. A throw (out of memory)
  // leaves rows that are neither before's nor after's: drop them. With `delta`, what changed
  // is written there (cleared first) when it returns true.
  bool Update(const Snapshot& before, const Snapshot& after, const RowChanges& changes,
              RowDelta* delta = nullptr);

  // Whether every row a query of this window and these filters reads is here: the same
  // window, and each filter of these rows the query has too, with the same value (the
  // query's other filters are applied to these rows).
  bool Serves(int64_t window_ms, const Filters& filters) const;
  std::span<const HangRow> rows() const { return rows_; }
  // Bytes the rows of a hang table of `series` hold between rounds, at most: the rows, a
  // sixteenth more once an update grew them, one block of HugePageAllocator's; and the series
  // kept aside as ahead, a pointer each, at most AheadBound (a list that grows by doubling).
  // What the warm-up holds from the answer budget while it keeps them (api.h WarmCarry).
  static uint64_t BytesFor(size_t series) {
    return HugePageBlockBytes(sizeof(HangRow) * (series + series / 16)) +
           2 * sizeof(const SeriesData*) * AheadBound(series);
  }
  // Bytes making or updating them takes beside those, given back when it returns (ADR 0037).
  // An update: the rows' new block when they grow, and for each change it allows
  // (ChangeBound: a removed or an added series counts one, a row whose sums the window's move
  // changed two) at most 320 bytes: an added series' row, its RowDelta row and its entry in a
  // hash table of keys (made at its size, so at least 7/16 full: under 96 bytes an entry); a
  // removed one's entry in another, its hit, stack and RowDelta row; a moved row's two
  // RowDelta rows and its place in a list that doubles; and a pointer each in the lists of
  // the series aside and of the rows leaving. A sort takes less: the rows as walked, two
  // arrays of 8 bytes a row, and every series met ahead before the bound drops them (a list
  // that doubles). The warm-up makes them under the hold of the answer they are made for,
  // which covers this (api.h AnswerBytesFor; tested).
  static uint64_t ScratchBytesFor(size_t series) {
    constexpr uint64_t kPerChange = 2 * sizeof(HangRow) + 3 * (sizeof(SeriesKey) + 8) + 4 * 8 + 2 * 8;
    static_assert(kPerChange <= 320);
    const uint64_t update = HugePageBlockBytes(sizeof(HangRow) * (series + series / 16)) +
                            kPerChange * ChangeBound(series) +
                            2 * sizeof(const SeriesData*) * AheadBound(series);
    const uint64_t sort = HugePageBlockBytes(sizeof(HangRow) * series) + 2 * HugePageBlockBytes(8 * series) +
                          2 * sizeof(const SeriesData*) * series;
    return std::max(update, sort);
  }
  // The most changes an Update makes instead of refusing (see Update): an eighth of the rows
  // and 1 024. A quarter (CheaperThanAWalk) would be cheaper than the walk and sort too, but
  // its scratch would pass what an answer's hold covers (ScratchBytesFor).
  static size_t ChangeBound(size_t rows) { return rows / 8 + 1024; }
  // The most series kept aside as ahead for a hang table of `series` (a sixteenth and 1 024,
  // at most all of them): a source ahead of the slowest by minutes sends the hangs of a few
  // minutes, of series that mostly have values in the window already.
  static size_t AheadBound(size_t series);
  // The series kept aside as ahead (Update): in the snapshot the rows were made from or
  // updated to, in no order.
  std::span<const SeriesData* const> ahead() const { return ahead_; }

 private:
  int64_t window_ms_;
  Filters filters_;
  std::vector<HangRow, HugePageAllocator<HangRow>> rows_;  // huge_pages.h
  std::vector<const SeriesData*> ahead_;                   // passing filters_, no value in the window
  bool ahead_overflowed_ = false;                          // ahead_ dropped: a move refuses
};

// Calls fn(const SeriesData&, const HangSums&) for each hang series of `snap` that passes
// `filters` and `keep(const SeriesKey&)` with a value in `win`, walking the table
// (CandidateRows: the table, or a text index's rows; `keep` first, so a series it drops costs
// no window sum), and `empty(const SeriesData&)` for each that passes them with none.
template <typename Keep, typename Fn, typename Empty>
void ForEachHangSeries(const Snapshot& snap, const WindowSel& win, const Filters& filters, Keep&& keep,
                       Fn&& fn, Empty&& empty) {
  RowFilter filter(snap, Table::kHangs, filters);
  for (const SeriesData* s : CandidateRows(snap, Table::kHangs, filters)) {
    if (!keep(s->key) || !filter.Matches(s->key)) continue;
    const Values v = ValuesIn(*s, win);
    if (v[0] == 0 && v[1] == 0) {
      empty(*s);
      continue;
    }
    fn(*s, HangSums{v[0], v[1]});
  }
}
template <typename Keep, typename Fn>
void ForEachHangSeries(const Snapshot& snap, const WindowSel& win, const Filters& filters, Keep&& keep,
                       Fn&& fn) {
  ForEachHangSeries(snap, win, filters, std::forward<Keep>(keep), std::forward<Fn>(fn),
                    [](const SeriesData&) {});
}

// Calls fn(const SeriesKey&, const HangSums&) for each hang row of `snap` that passes
// `filters` and `keep(const SeriesKey&)` with a value in `win`: from `shared` (rows made from
// `snap`: Serves cannot tell) when it serves them, in stack order; else from the table
// (CandidateRows: the table, or a text index's rows; `keep` first, so a row it drops costs no
// window sum).
template <typename Keep, typename Fn>
void ForEachHangRow(const Snapshot& snap, const WindowSel& win, const Filters& filters,
                    const HangRows* shared, Keep&& keep, Fn&& fn) {
  // Not where an index narrows the walk (a signature or build date filter; a thread or process
  // filter where the warm-up made their index, for values under half the table: ADR 0036):
  // that walk is shorter.
  if (shared != nullptr &&
      CandidateRows(snap, Table::kHangs, filters).size() == snap.table(Table::kHangs).size() &&
      shared->Serves(win.window_ms, filters)) {
    RowFilter filter(snap, Table::kHangs, filters);
    for (const HangRow& r : shared->rows()) {
      if (filter.Matches(r.key) && keep(r.key)) fn(r.key, r.sums);
    }
    return;
  }
  ForEachHangSeries(snap, win, filters, keep,
                    [&fn](const SeriesData& s, const HangSums& v) { fn(s.key, v); });
}
template <typename Fn>
void ForEachHangRow(const Snapshot& snap, const WindowSel& win, const Filters& filters,
                    const HangRows* shared, Fn&& fn) {
  ForEachHangRow(
      snap, win, filters, shared, [](const SeriesKey&) { return true; }, std::forward<Fn>(fn));
}

}  // namespace seismo
