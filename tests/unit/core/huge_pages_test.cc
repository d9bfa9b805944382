// HugePageAllocator: small blocks as std::allocator's, large ones mapped on their own on a
// huge page's boundary; both hold what is written to them through a vector's growth.
#include "seismo/core/huge_pages.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

namespace seismo {
namespace {

// The kernel's THP mode: "[always]", "[madvise]", "[never]" or "" (no THP).
std::string ThpMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(in, modes);
  for (const char* mode : {"[always]", "[madvise]", "[never]"}) {
    if (modes.find(mode) != std::string::npos) return mode;
  }
  return "";
}
// Whether this kernel backs advised memory with huge pages.
bool KernelHasAdvisedThp() { return ThpMode() == "[always]" || ThpMode() == "[madvise]"; }

// The THPeligible field of the mapping that holds `p` (/proc/self/smaps), or -1.
int ThpEligible(const void* p) {
  std::ifstream in("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    uintptr_t start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2 && line.find(':') > 8 &&
        line.find('-') < line.find(' ')) {
      inside = start <= at && at < end;
      continue;
    }
    int eligible = 0;
    if (inside && std::sscanf(line.c_str(), "THPeligible: %d", &eligible) == 1) return eligible;
  }
  return -1;
}

TEST(HugePageAllocator, ALargeBlockStartsOnAHugePageAndHoldsEveryByteWrittenToIt) {
  HugePageAllocator<uint64_t> alloc;
  // Just past the threshold, and not a whole number of huge pages: the last one is partly used.
  const size_t n = kHugePageBlockFrom / sizeof(uint64_t) + 12345;
  uint64_t* p = alloc.allocate(n);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u);
  // Advised: the kernel may back it with huge pages (whether it does depends on free memory).
  if (KernelHasAdvisedThp()) EXPECT_EQ(ThpEligible(p), 1);
  for (size_t i = 0; i < n; ++i) p[i] = i * 7;
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += p[i] - i * 7;
  EXPECT_EQ(sum, 0u);
  alloc.deallocate(p, n);
}

TEST(HugePageAllocator, ALargeBlockTakesWholeHugePagesASmallOneItsBytes) {
  EXPECT_EQ(HugePageBlockBytes(100), 100u);
  EXPECT_EQ(HugePageBlockBytes(kHugePageBlockFrom - 1), kHugePageBlockFrom - 1);
  EXPECT_EQ(HugePageBlockBytes(kHugePageBlockFrom), kHugePageBlockFrom);
  EXPECT_EQ(HugePageBlockBytes(kHugePageBlockFrom + 1), kHugePageBlockFrom + kHugePageBytes);
  EXPECT_EQ(HugePageBlockBytes(5 * kHugePageBytes), 5 * kHugePageBytes);
}

TEST(HugePageAllocator, ASmallBlockComesFromOperatorNew) {
  HugePageAllocator<uint32_t> alloc;
  uint32_t* p = alloc.allocate(10);
  // Where only advised memory gets huge pages, a small block is the heap's, not advised.
  if (ThpMode() == "[madvise]") EXPECT_EQ(ThpEligible(p), 0);
  ASSERT_NE(p, nullptr);
  for (uint32_t i = 0; i < 10; ++i) p[i] = i;
  EXPECT_EQ(p[9], 9u);
  alloc.deallocate(p, 10);
}

// A vector that grows from small blocks through large ones keeps its items in every move
// (each block is given back at the size it was taken at: deallocate picks the path by size).
TEST(HugePageAllocator, AVectorGrowingPastTheThresholdKeepsItsItems) {
  std::vector<uint32_t, HugePageAllocator<uint32_t>> v;
  const size_t n = 3 * kHugePageBlockFrom / sizeof(uint32_t);
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<uint32_t>(i));
  ASSERT_EQ(v.size(), n);
  std::vector<uint32_t, HugePageAllocator<uint32_t>> copy = v;
  v.clear();
  v.shrink_to_fit();
  uint64_t expected = 0;
  for (size_t i = 0; i < n; ++i) expected += i;
  EXPECT_EQ(std::accumulate(copy.begin(), copy.end(), uint64_t{0}), expected);
}

TEST(HugePageAllocator, AnImpossibleSizeThrowsAsStdAllocatorDoes) {
  HugePageAllocator<uint64_t> alloc;
  EXPECT_THROW((void)alloc.allocate(static_cast<size_t>(-1) / 4), std::bad_array_new_length);
  // Possible to ask for, more than the address space can map.
  EXPECT_THROW((void)alloc.allocate(size_t{1} << 60), std::bad_alloc);
}

}  // namespace
}  // namespace seismo
