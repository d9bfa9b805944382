// RowChanges: the rows one snapshot holds and another does not, found in what changed between
// them (ADR 0034, issue 19). A reader that keeps sums over the rows of `before` reaches those of
// `after` by subtracting each removed row and adding each added one.
//
//   before ─┬─ shard i, page number p: the same page pointer ──> nothing changed in it
//           └─ a new page: slot by slot, a new series pointer ──> old removed, new added
//   + every row that may repeat across shards (crash, "(other)": merged, ADR 0021): all of
//     before's removed and all of after's added, every time
//
// Copy-on-write (ADR 0021) gives a changed series a new pointer and a page of unchanged series
// is shared, so the cost is the changed pages' slots and the repeatable rows, not the table.
// Pages are matched by number (ShardSnapshot::page_numbers): a shard's snapshot leaves empty
// pages out, and matched by place every page after one that emptied would differ.
// The result is exact for any two snapshots, as multisets of rows: rows(before) − removed +
// added = rows(after) (a series that moved slot is removed and added again). Snapshots of
// different shard sets (a restore, a rebalance, a cluster's view) share no pages: every row
// changes, which is correct and costs a full walk.
//
// Threading: a pure function; `before` must stay alive while the pointers are compared and
// read (a reader that keeps it holds its series, and so the ids they hold).
#pragma once

#include <cstddef>
#include <vector>

#include "seismo/aggregate/snapshot.h"

namespace seismo {

struct RowChanges {
  std::vector<const SeriesData*> removed;  // rows of `before`
  std::vector<const SeriesData*> added;    // rows of `after`
};

RowChanges ChangedRows(const Snapshot& before, const Snapshot& after, Table t);

// Whether a structure over `rows` rows is cheaper to update by `changed` removed and added rows
// (a changed row counts as both) than to make anew: up to a quarter of the rows, and 1 024
// more. The rule of every reader of a change set (HangRows::Update, Snapshot::IndexTextsFrom).
inline bool CheaperThanAWalk(size_t changed, size_t rows) { return changed <= rows / 4 + 1024; }

}  // namespace seismo
