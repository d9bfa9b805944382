// BuildDateSums: the /builds answer's hang sums by (source, channel, build date) — a build's
// hang rates are its build date's (docs/api.md) — of the warm-up's hang rows (one window, no
// filter), kept from round to round and brought up to date from the rows that changed: the
// rollup by build of ADR 0034 step 2 (issue 19).
//
//   HangRows::Update ──RowDelta──> Apply: each row that left taken out of its entry, each
//                                  row that came added in (an entry leaves with its last row)
//   BuildsJson(q, kept) ──Serves(q)──> sums(): a few hundred entries, not 10⁶ rows
//
// Each of a round's two /builds answers summed every hang row into these: a walk of 10⁶ rows
// and a hash probe a row (4.4 ms each at 10⁶ on the 2026-12-01 machine). Brought from the
// delta, a round costs the changed rows.
//
// Exact: every sum is an integer, taken out and added back, and an entry is kept while rows
// hold it (it counts them), so the entries are those a walk of the rows finds
// (BuildDateSums.* tests, against the walk, over random rounds).
//
// Memory: MemoryBytes(), an entry per (source, channel, build date) the rows hold; the
// warm-up holds it from the answer budget (api.h WarmCarry).
//
// Threading: one thread at a time (the warm-up's), read by one round's answers in turn.
#pragma once

#include <cstdint>
#include <span>

#include "seismo/aggregate/series_key.h"
#include "seismo/core/symbols.h"
#include "seismo/core/syms_map.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/params.h"

namespace seismo {

// The (source, channel, build date) of a usage or hang key: the fields the two tables share,
// first and in the same places (selection.h).
using BuildDateKey = Syms<3>;
inline BuildDateKey BuildDateOf(const SeriesKey& k) {
  return {k[usage_field::kSource], k[usage_field::kChannel], k[usage_field::kBuildDate]};
}

class BuildDateSums {
 public:
  struct Sums {
    int64_t hang_us = 0;
    int64_t hang_count = 0;
    int64_t rows = 0;  // rows holding the entry: it leaves with the last
  };

  // The sums of `rows` (a HangRows' rows of window `window_ms`, every source, no filter), whose
  // ids are `symbols`'.
  BuildDateSums(std::span<const HangRow> rows, int64_t window_ms, const Symbols* symbols);

  // The rows that left taken out, the rows that came added (what HangRows::Update changed).
  // False where a row that left is in no entry (a delta of other rows): make them anew then
  // (they are neither before's nor after's).
  bool Apply(const RowDelta& delta);

  // Whether they are the sums a /builds query of this window and these filters reads, over a
  // snapshot of `symbols`: the same window, no filter, the same ids.
  bool Serves(int64_t window_ms, const Filters& filters, const Symbols* symbols) const;

  const SymsMap<3, Sums>& sums() const { return sums_; }
  uint64_t MemoryBytes() const;

 private:
  bool Add(const HangRow& r, int64_t sign);

  int64_t window_ms_;
  const Symbols* symbols_;
  SymsMap<3, Sums> sums_;
};

}  // namespace seismo
