#include "seismo/aggregate/hll.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

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

// A naive model of the registers: max rank per index, as Add defines them.
std::vector<uint8_t> ModelRegisters(uint64_t n, uint64_t seed) {
  std::vector<uint8_t> r(HyperLogLog::kRegisters, 0);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t hash = Hash64(std::to_string(i), seed);
    const auto index = static_cast<uint32_t>(hash >> (64 - HyperLogLog::kPrecision));
    const uint64_t rest = hash << HyperLogLog::kPrecision;
    const auto rank =
        static_cast<uint8_t>(rest == 0 ? 64 - HyperLogLog::kPrecision + 1 : std::countl_zero(rest) + 1);
    r[index] = std::max(r[index], rank);
  }
  return r;
}

std::vector<uint8_t> Registers(const HyperLogLog& h) {
  if (!h.dense().empty()) return {h.dense().begin(), h.dense().end()};
  std::vector<uint8_t> r(HyperLogLog::kRegisters, 0);
  uint32_t previous = 0;
  for (size_t i = 0; i < h.sparse().size(); ++i) {
    const uint32_t e = h.sparse()[i];
    if (i > 0) EXPECT_GT(e >> 8, previous) << "sparse entries sorted by index, each once";
    previous = e >> 8;
    r[e >> 8] = static_cast<uint8_t>(e & 0xff);
  }
  return r;
}

// Sparse up to a quarter of the registers (4 bytes an entry), dense beyond: the registers
// are the model's on both sides of the switch, and copies, moves and parts keep them.
TEST(HyperLogLog, RegistersAreTheModelsInEveryForm) {
  for (uint64_t n : {0ull, 1ull, 7ull, 900ull, 1024ull, 1100ull, 2000ull, 20'000ull}) {
    HyperLogLog h;
    for (uint64_t i = 0; i < n; ++i) h.Add(Hash64(std::to_string(i), 3));
    const std::vector<uint8_t> model = ModelRegisters(n, 3);
    EXPECT_EQ(Registers(h), model) << n;
    const size_t listed = std::count_if(model.begin(), model.end(), [](uint8_t r) { return r != 0; });
    EXPECT_EQ(h.dense().empty(), listed <= HyperLogLog::kRegisters / 4) << n;
    EXPECT_EQ(h.empty(), n == 0);
    EXPECT_EQ(h.MemoryBytes() >= (h.dense().empty() ? listed * 4 : HyperLogLog::kRegisters), true) << n;

    HyperLogLog copy = h;
    EXPECT_EQ(Registers(copy), model) << n;
    EXPECT_EQ(copy.Estimate(), h.Estimate());
    HyperLogLog assigned;
    assigned.Add(Hash64("other"));
    assigned = h;
    EXPECT_EQ(Registers(assigned), model) << n;
    HyperLogLog parts = HyperLogLog::FromParts(h.sparse(), h.dense());
    EXPECT_EQ(Registers(parts), model) << n;
    HyperLogLog moved = std::move(copy);
    EXPECT_EQ(Registers(moved), model) << n;
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from sketch is empty
    EXPECT_EQ(copy.Estimate(), 0);
    copy.Add(Hash64("again"));  // and usable
    EXPECT_NEAR(copy.Estimate(), 1.0, 0.01);
  }
}

TEST(HyperLogLog, AnEmptySketchHoldsNoBlockAndSixteenBytes) {
  EXPECT_EQ(sizeof(HyperLogLog), 16u);
  EXPECT_EQ(HyperLogLog().MemoryBytes(), 0u);
  HyperLogLog h;
  h.Merge(HyperLogLog());
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.MemoryBytes(), 0u);
}

TEST(HyperLogLog, MergeOfSparseIntoDenseAndBackIsTheUnion) {
  HyperLogLog small, large;
  for (int i = 0; i < 10; ++i) small.Add(Hash64(std::to_string(i), 5));
  for (int i = 5; i < 5000; ++i) large.Add(Hash64(std::to_string(i), 5));
  HyperLogLog a = small;
  a.Merge(large);
  HyperLogLog b = large;
  b.Merge(small);
  EXPECT_EQ(Registers(a), ModelRegisters(5000, 5));
  EXPECT_EQ(Registers(b), ModelRegisters(5000, 5));
}

}  // namespace
}  // namespace seismo
