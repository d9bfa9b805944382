#include "seismo/shard/spsc_ring.h"

#include <gtest/gtest.h>

#include <thread>

namespace seismo {
namespace {

TEST(SpscRing, RefusesWhenFullAndKeepsTheValue) {
  SpscRing<std::unique_ptr<int>> ring(2);
  auto a = std::make_unique<int>(1), b = std::make_unique<int>(2), c = std::make_unique<int>(3);
  EXPECT_TRUE(ring.TryPush(a));
  EXPECT_TRUE(ring.TryPush(b));
  EXPECT_FALSE(ring.TryPush(c));
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, 3);
  EXPECT_EQ(**ring.TryPop(), 1);
  EXPECT_TRUE(ring.TryPush(c));
  EXPECT_EQ(**ring.TryPop(), 2);
  EXPECT_EQ(**ring.TryPop(), 3);
  EXPECT_FALSE(ring.TryPop());
}

TEST(SpscRing, TransfersEveryElementInOrderAcrossThreads) {
  SpscRing<uint64_t> ring(64);
  constexpr uint64_t kN = 200'000;
  std::thread producer([&] {
    for (uint64_t i = 1; i <= kN; ++i) {
      uint64_t v = i;
      while (!ring.TryPush(v)) std::this_thread::yield();
    }
  });
  uint64_t expected = 1, sum = 0;
  while (expected <= kN) {
    if (auto v = ring.TryPop()) {
      ASSERT_EQ(*v, expected);
      sum += *v;
      ++expected;
    }
  }
  producer.join();
  EXPECT_EQ(sum, kN * (kN + 1) / 2);
}

}  // namespace
}  // namespace seismo
