#include "seismo/query/hang_rows.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>

#include "seismo/aggregate/row_changes.h"
#include "seismo/query/radix_sort.h"

namespace seismo {
namespace {

// Whether `s` holds a bucket past the window's last (`win` a window of buckets): a hang event
// later than stream time, which a move of the window may bring into it.
bool HoldsBucketsPast(const SeriesData& s, const WindowSel& win) {
  if (!win.span) return false;
  for (auto it = s.hours.rbegin(); it != s.hours.rend(); ++it) {
    if (!(*it)->buckets.empty()) return (*it)->buckets.back() > win.range.to;
  }
  return false;
}

}  // namespace

size_t HangRows::AheadBound(size_t series) { return std::min(series, series / 16 + 1024); }

HangRows::HangRows(const Snapshot& snap, int64_t window_ms, const Filters& filters)
    : window_ms_(window_ms), filters_(filters) {
  const WindowSel win = ResolveWindow(snap, window_ms);
  std::vector<HangRow, HugePageAllocator<HangRow>> walked;  // gathered out of order below
  walked.reserve(CandidateRows(snap, Table::kHangs, filters).size());
  StackId max_stack = 0;
  ForEachHangSeries(
      snap, win, filters, [](const SeriesKey&) { return true; },
      [&](const SeriesData& s, const HangSums& sums) {
        walked.push_back({s.key, sums, &s});
        max_stack = std::max(max_stack, s.key[hang_field::kStack]);
      },
      [&](const SeriesData& s) {
        if (HoldsBucketsPast(s, win)) ahead_.push_back(&s);
      });
  if (ahead_.size() > AheadBound(snap.table(Table::kHangs).size())) {  // a move then refuses
    ahead_ = {};
    ahead_overflowed_ = true;
  }
  // Sorted as (stack, place) pairs, 8 bytes each, then gathered: a radix sort moving the
  // rows themselves took twice as long at 10⁶ rows.
  struct Place {
    StackId stack;
    uint32_t row;
  };
  assert(walked.size() <= UINT32_MAX);
  std::vector<Place, HugePageAllocator<Place>> order;
  order.reserve(walked.size());
  for (size_t i = 0; i < walked.size(); ++i) {
    order.push_back({walked[i].key[hang_field::kStack], static_cast<uint32_t>(i)});
  }
  RadixSortBy(order, std::bit_width(max_stack), [](const Place& p) { return uint64_t{p.stack}; });
  rows_.reserve(walked.size());
  for (const Place& p : order) rows_.push_back(walked[p.row]);
}

bool HangRows::Update(const Snapshot& before, const Snapshot& after, const RowChanges& changes,
                      RowDelta* delta) {
  const WindowSel was = ResolveWindow(before, window_ms_), now = ResolveWindow(after, window_ms_);
  if (before.bucket_ms != after.bucket_ms || was.span != now.span || was.unknown != now.unknown ||
      now.range.from < was.range.from || now.range.to < was.range.to) {
    return false;
  }
  // The window moved on: its first buckets left it (every row is read again below). The
  // buckets that came in may hold values of series no delta touched since `before` only when
  // one of its hang events was later than its window's end (a source ahead of the slowest, up
  // to `max_clock_skew`, ADR 0017): those are kept aside (ahead_), and read again below.
  const bool moved = was.range.from != now.range.from || was.range.to != now.range.to;
  if (moved && ahead_overflowed_) return false;
  if (changes.removed.size() + changes.added.size() > ChangeBound(rows_.size())) return false;
  auto by_stack = [](const HangRow& a, const HangRow& b) {
    return a.key[hang_field::kStack] < b.key[hang_field::kStack];
  };
  // The rows after's changed series give, by key (a key is one row of a snapshot).
  RowFilter filter(after, Table::kHangs, filters_);
  std::vector<HangRow> added;
  absl::flat_hash_map<SeriesKey, uint32_t> added_at;
  std::vector<const SeriesData*> ahead;  // after's: ahead_ once nothing refuses
  // Each at its size from the start (ScratchBytesFor counts no growth by doubling).
  added.reserve(changes.added.size() + (moved ? ahead_.size() : 0));
  added_at.reserve(changes.added.size());
  for (const SeriesData* s : changes.added) {
    if (!filter.Matches(s->key)) continue;
    const Values v = ValuesIn(*s, now);
    if (v[0] == 0 && v[1] == 0) {
      if (HoldsBucketsPast(*s, now)) ahead.push_back(s);
      continue;
    }
    added_at.emplace(s->key, static_cast<uint32_t>(added.size()));
    added.push_back({s->key, HangSums{v[0], v[1]}, s});
  }
  // Where before's changed series stand, found in the runs of their stacks: a row whose key
  // comes back takes its new sums in place (`to` its row in `added`); the others leave (-1).
  absl::flat_hash_set<SeriesKey> removed;
  std::vector<StackId> stacks;
  removed.reserve(changes.removed.size());
  stacks.reserve(changes.removed.size());
  for (const SeriesData* s : changes.removed) {
    if (removed.insert(s->key).second) stacks.push_back(s->key[hang_field::kStack]);
  }
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  struct Hit {
    size_t row;
    int64_t to;
  };
  std::vector<Hit> hits;  // ascending rows
  hits.reserve(changes.removed.size());
  for (StackId stack : stacks) {
    auto it = std::lower_bound(rows_.begin(), rows_.end(), stack,
                               [](const HangRow& r, StackId s) { return r.key[hang_field::kStack] < s; });
    for (; it != rows_.end() && it->key[hang_field::kStack] == stack; ++it) {
      if (!removed.contains(it->key)) continue;
      const auto a = added_at.find(it->key);
      hits.push_back(
          {static_cast<size_t>(it - rows_.begin()), a != added_at.end() ? int64_t{a->second} : -1});
    }
  }
  // The window moved: the other rows' sums read again from their series (unchanged, so the
  // same objects in `after`), before anything is touched, so that too many of them refuse.
  struct Moved {
    size_t row;
    HangSums sums;  // 0 and 0: the row leaves
  };
  std::vector<Moved> moves;  // ascending rows
  if (moved) {
    for (size_t i = 0, h = 0; i < rows_.size(); ++i) {
      if (h < hits.size() && hits[h].row == i) {
        ++h;
        continue;
      }
      const HangRow& r = rows_[i];
      const Values v = ValuesIn(*r.series, now);
      if (v[0] == r.sums.hang_us && v[1] == r.sums.hang_count) continue;
      moves.push_back({i, HangSums{v[0], v[1]}});
      if (changes.removed.size() + changes.added.size() + 2 * moves.size() > ChangeBound(rows_.size())) {
        return false;
      }
    }
  }
  // The series kept aside that no delta touched (the same objects in `after`): still aside
  // while the window has not moved; else read again, and come as rows where the window now
  // holds a value of theirs (a row whose series leaves the window keeps no bucket past it
  // unless it is read again: below, among the rows that leave).
  size_t came_from_ahead = 0;
  for (const SeriesData* s : ahead_) {
    if (removed.contains(s->key)) continue;  // changed or gone: from the change set above
    if (!moved) {
      ahead.push_back(s);
      continue;
    }
    const Values v = ValuesIn(*s, now);
    if (v[0] == 0 && v[1] == 0) {
      if (HoldsBucketsPast(*s, now)) ahead.push_back(s);
      continue;
    }
    added.push_back({s->key, HangSums{v[0], v[1]}, s});
    ++came_from_ahead;
  }
  if (changes.removed.size() + changes.added.size() + 2 * moves.size() + came_from_ahead >
      ChangeBound(rows_.size())) {
    return false;
  }
  if (delta != nullptr) {
    delta->left.clear();
    delta->came.clear();
    delta->left.reserve(hits.size() + moves.size());
    delta->came.reserve(added.size() + moves.size());
  }
  std::vector<bool> replaced(added.size(), false);
  std::vector<size_t> leaving;                      // ascending
  leaving.reserve(hits.size() + moves.size());
  auto change = [&](size_t i, const HangRow& to) {  // row i takes `to`'s sums (and series)
    HangRow& r = rows_[i];
    if (delta != nullptr) delta->left.push_back(r);
    r.sums = to.sums;
    r.series = to.series;
    if (delta != nullptr) delta->came.push_back(r);
  };
  for (size_t h = 0, m = 0; h < hits.size() || m < moves.size();) {
    if (m == moves.size() || (h < hits.size() && hits[h].row < moves[m].row)) {
      const Hit& hit = hits[h++];
      if (hit.to >= 0) {
        change(hit.row, added[static_cast<size_t>(hit.to)]);
        replaced[static_cast<size_t>(hit.to)] = true;
      } else {
        if (delta != nullptr) delta->left.push_back(rows_[hit.row]);
        leaving.push_back(hit.row);
      }
      continue;
    }
    const Moved& mv = moves[m++];
    if (mv.sums.hang_us == 0 && mv.sums.hang_count == 0) {
      if (delta != nullptr) delta->left.push_back(rows_[mv.row]);
      leaving.push_back(mv.row);
      if (HoldsBucketsPast(*rows_[mv.row].series, now)) ahead.push_back(rows_[mv.row].series);
    } else {
      change(mv.row, HangRow{rows_[mv.row].key, mv.sums, rows_[mv.row].series});
    }
  }
  if (!leaving.empty()) {
    size_t out = leaving.front();
    for (size_t i = leaving.front(), next = 0; i < rows_.size(); ++i) {
      if (next < leaving.size() && leaving[next] == i) {
        ++next;
        continue;
      }
      rows_[out++] = rows_[i];
    }
    rows_.resize(out);
  }
  // The new rows, merged in from the back: each row moves once, and those before the first
  // new stack not at all.
  size_t kept = 0;
  for (size_t a = 0; a < added.size(); ++a) {
    if (!replaced[a]) added[kept++] = added[a];
  }
  added.resize(kept);
  if (delta != nullptr) delta->came.insert(delta->came.end(), added.begin(), added.end());
  if (ahead.size() > AheadBound(after.table(Table::kHangs).size())) {  // the next move refuses
    ahead = {};
    ahead_overflowed_ = true;
  }
  ahead_.swap(ahead);
  if (added.empty()) return true;
  std::sort(added.begin(), added.end(), by_stack);
  size_t old_end = rows_.size();
  const size_t size = rows_.size() + added.size();
  if (size > rows_.capacity()) rows_.reserve(size + size / 16);  // not twice: a row grows the table by one
  rows_.resize(size);
  for (size_t k = rows_.size(), a = added.size(); a > 0;) {
    if (old_end > 0 && by_stack(added[a - 1], rows_[old_end - 1])) {
      rows_[--k] = rows_[--old_end];
    } else {
      rows_[--k] = added[--a];
    }
  }
  return true;
}

bool HangRows::Serves(int64_t window_ms, const Filters& filters) const {
  if (window_ms != window_ms_) return false;
  for (size_t d = 0; d < kDimCount; ++d) {
    if (filters_.value[d] && filters.value[d] != filters_.value[d]) return false;
  }
  return true;
}

}  // namespace seismo
