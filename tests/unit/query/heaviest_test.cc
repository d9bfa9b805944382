// NthHeaviest (query/heaviest.h): the n-th largest weight, counted with repeats, or the
// least int64_t when every entry can be in the first n.
#include "seismo/query/heaviest.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace seismo {
namespace {

int64_t Nth(const std::vector<int64_t>& v, size_t n) {
  return NthHeaviest(v.begin(), v.end(), n, [](int64_t w) { return w; });
}

TEST(NthHeaviest, IsTheNthLargestCountingRepeats) {
  const std::vector<int64_t> w = {3, 7, 9, 5, 7, 7};  // sorted: 9 7 7 7 5 3
  EXPECT_EQ(Nth(w, 1), 9);
  EXPECT_EQ(Nth(w, 2), 7);
  EXPECT_EQ(Nth(w, 4), 7);
  EXPECT_EQ(Nth(w, 5), 5);
  EXPECT_EQ(Nth({-4, -9, -1}, 2), -4);
}

TEST(NthHeaviest, EveryEntryWhenThereAreNOrFewer) {
  constexpr int64_t kAll = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Nth({3, 7, 9, 5, 7, 7}, 6), kAll);
  EXPECT_EQ(Nth({3, 7, 9, 5, 7, 7}, 100), kAll);
  EXPECT_EQ(Nth({}, 1), kAll);
  EXPECT_EQ(Nth({5}, 0), std::numeric_limits<int64_t>::max()) << "none can be in the first 0";
}

}  // namespace
}  // namespace seismo
