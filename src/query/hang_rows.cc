#include "seismo/query/hang_rows.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>

#include "seismo/query/radix_sort.h"

namespace seismo {

HangRows::HangRows(const Snapshot& snap, int64_t window_ms, const Filters& filters)
    : window_ms_(window_ms), filters_(filters) {
  const WindowSel win = ResolveWindow(snap, window_ms);
  std::vector<HangRow, HugePageAllocator<HangRow>> walked;  // gathered out of order below
  walked.reserve(CandidateRows(snap, Table::kHangs, filters).size());
  StackId max_stack = 0;
  ForEachHangRow(snap, win, filters, nullptr, [&](const SeriesKey& key, const HangSums& sums) {
    walked.push_back({key, sums});
    max_stack = std::max(max_stack, key[hang_field::kStack]);
  });
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

bool HangRows::Serves(int64_t window_ms, const Filters& filters) const {
  if (window_ms != window_ms_) return false;
  for (size_t d = 0; d < kDimCount; ++d) {
    if (filters_.value[d] && filters.value[d] != filters_.value[d]) return false;
  }
  return true;
}

}  // namespace seismo
