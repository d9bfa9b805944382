// A text index's order (Snapshot::RowsWithTextHash): (hash, row address) ascending, as one
// std::sort would leave it, from the counting sort on the hashes' top bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "seismo/aggregate/snapshot.h"

namespace seismo {
namespace {

TEST(TextIndexOrder, EqualsOneWholeSortAtEverySize) {
  uint64_t x = 88172645463325252ull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (size_t n : {0u, 1u, 2u, 3u, 17u, 100u, 4096u, 100'000u}) {
    TextIndexKeys keyed(n);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t r = next();
      // Rows without the text (hash 0), repeated texts, clustered and uniform hashes.
      const uint64_t hash = r % 5 == 0   ? 0
                            : r % 5 == 1 ? keyed[r % (i + 1)].first
                            : r % 5 == 2 ? (r & 0xff)
                                         : r;
      keyed[i] = {hash, static_cast<uintptr_t>(next())};  // addresses in no order
    }
    TextIndexKeys expected = keyed;
    std::sort(expected.begin(), expected.end());
    SortByHashThenAddress(keyed);
    EXPECT_EQ(keyed, expected) << n << " rows";
  }
}

}  // namespace
}  // namespace seismo
