#include "seismo/aggregate/hll.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seismo/core/hash.h"

namespace seismo {
namespace {

double CountDistinct(uint64_t n, uint64_t seed) {
  HyperLogLog h;
  for (uint64_t i = 0; i < n; ++i) h.Add(Hash64(std::to_string(i), seed));
  return h.Estimate();
}

TEST(HyperLogLog, SmallSetsAreNearlyExact) {
  EXPECT_EQ(HyperLogLog().Estimate(), 0);
  EXPECT_NEAR(CountDistinct(1, 1), 1.0, 0.01);
  EXPECT_NEAR(CountDistinct(50, 1), 50.0, 1.0);
}

TEST(HyperLogLog, RepeatsCountOnce) {
  HyperLogLog h;
  for (int i = 0; i < 1000; ++i) h.Add(Hash64("same-install"));
  EXPECT_NEAR(h.Estimate(), 1.0, 0.01);
}

TEST(HyperLogLog, LargeSetsWithinFourStandardErrors) {
  for (uint64_t n : {5'000ull, 100'000ull}) {
    double e = CountDistinct(n, 7);
    EXPECT_LT(std::abs(e - n) / n, 4 * 0.0163) << n;
  }
}

TEST(HyperLogLog, MergeEqualsUnionInAnyOrder) {
  HyperLogLog a, b, all;
  for (int i = 0; i < 3000; ++i) {
    uint64_t x = Hash64(std::to_string(i));
    (i % 3 == 0 ? a : b).Add(x);
    all.Add(x);
  }
  HyperLogLog ab = a;
  ab.Merge(b);
  HyperLogLog ba = b;
  ba.Merge(a);
  EXPECT_EQ(ab.Estimate(), all.Estimate());
  EXPECT_EQ(ba.Estimate(), all.Estimate());
}

TEST(HyperLogLog, SparseSketchesStaySmall) {
  HyperLogLog h;
  for (int i = 0; i < 10; ++i) h.Add(Hash64(std::to_string(i)));
  EXPECT_LT(h.MemoryBytes(), 200u);
}

}  // namespace
}  // namespace seismo
