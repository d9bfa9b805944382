// NthHeaviest: where the n heaviest of many entries begin, by a number alone, so that an
// order that ranks by that number first, and by text among equals, compares texts only
// among the entries that can be in its first n (issue 19).
//
//   hang_us  9 7 7 7 5 3 ...  n = 2 -> 7: the first two of any order by hang_us descending
//                                          are among the entries of 7 or more
//
// At 10⁶ rows a top-N by (hang time, text) compared texts for most of them (a text each
// side, out of order in memory), wherever hang times tie with the N-th. With the threshold,
// rows below it are dropped by one integer compare and the texts are read for the
// contenders only: as many as tie at the threshold (all of them when all tie, as before).
//
// Threading: a pure function.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <vector>

namespace seismo {

// The n-th largest of weight(e) over [first, last), or the least int64_t when there are n
// or fewer entries (then every entry can be in the first n); for n = 0 the largest int64_t
// (no entry can, though one of that weight still passes `>=`: harmless to a top-0). One
// pass, keeping the n largest weights in a heap: for a top-N of a few hundred, numbers only.
template <typename It, typename Weight>
int64_t NthHeaviest(It first, It last, size_t n, Weight&& weight) {
  if (n == 0) return std::numeric_limits<int64_t>::max();
  if (static_cast<size_t>(std::distance(first, last)) <= n) return std::numeric_limits<int64_t>::min();
  std::vector<int64_t> heaviest;  // a heap whose top is the lightest of them
  heaviest.reserve(n);
  for (It it = first; it != last; ++it) {
    const int64_t w = weight(*it);
    if (heaviest.size() < n) {
      heaviest.push_back(w);
      std::push_heap(heaviest.begin(), heaviest.end(), std::greater<>());
    } else if (w > heaviest.front()) {
      std::pop_heap(heaviest.begin(), heaviest.end(), std::greater<>());
      heaviest.back() = w;
      std::push_heap(heaviest.begin(), heaviest.end(), std::greater<>());
    }
  }
  return heaviest.front();
}

}  // namespace seismo
