// RadixSortBy: a stable LSD radix sort of a vector by an unsigned integer key of at most
// `key_bits` bits, 11 bits a pass, skipping a pass where every item has the same digit.
// The answers sort by intern ids (dense, below the table's IdBound): a million distinct
// ids take two passes over the items, where a comparison sort of them took ~20 (issue 19).
//
//   items ──count every pass's digits (one read)──> per pass: scatter by digit into scratch,
//                                                   swap (stable: equal digits keep order)
//
// Used by IdSums (sums by (group, id)), HangRows (hang rows in stack order), BuildFlameTree
// (a wide node's stacks by their next frame) and StackOrder (made anew: a run's stacks by
// their next frame).
//
// Threading: one thread at a time.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace seismo {

template <typename T, typename Alloc, typename KeyOf>
void RadixSortBy(std::vector<T, Alloc>& items, int key_bits, KeyOf key_of) {
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  assert(key_bits >= 0 && key_bits <= 64);
  const int passes = (key_bits + kDigitBits - 1) / kDigitBits;
  if (passes <= 0 || items.size() < 2) return;
  // Every pass's digit counts in one read of the items.
  std::vector<std::array<size_t, kBuckets>> counts(static_cast<size_t>(passes));
  for (const T& item : items) {
    const uint64_t key = key_of(item);
    for (int p = 0; p < passes; ++p)
      ++counts[static_cast<size_t>(p)][(key >> (p * kDigitBits)) & (kBuckets - 1)];
  }
  std::vector<T, Alloc> scratch;  // the items' allocator (core/huge_pages.h for large ones)
  for (int p = 0; p < passes; ++p) {
    std::array<size_t, kBuckets>& count = counts[static_cast<size_t>(p)];
    if (std::find(count.begin(), count.end(), items.size()) != count.end()) continue;  // one digit: in order
    if (scratch.empty()) scratch.resize(items.size());
    size_t at = 0;
    for (size_t& c : count) at += std::exchange(c, at);
    const int shift = p * kDigitBits;
    for (const T& item : items) scratch[count[(key_of(item) >> shift) & (kBuckets - 1)]++] = item;
    items.swap(scratch);
  }
}

}  // namespace seismo
