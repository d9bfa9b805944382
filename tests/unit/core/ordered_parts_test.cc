// MakeInOrder: every part taken once, in order, whatever thread made it; no more than the
// window made ahead of the one taken; an exception from a part or from the taker stops the
// rest and reaches the caller.
#include "seismo/core/ordered_parts.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace seismo {
namespace {

// Work that differs from part to part, so threads finish out of order.
std::string Made(size_t i) {
  std::string s = std::to_string(i) + ":";
  for (size_t k = 0; k < (i * 7919) % 5000; ++k) s += static_cast<char>('a' + (k * i) % 26);
  return s + ";";
}

TEST(MakeInOrder, EveryPartIsTakenOnceInOrderWithinTheWindow) {
  for (int threads : {1, 2, 3, 8}) {
    for (size_t parts : {size_t{0}, size_t{1}, size_t{2}, size_t{500}}) {
      for (size_t window : {size_t{1}, size_t{4}}) {
        std::atomic<int> waiting{0}, most{0};
        std::string taken, expected;
        for (size_t i = 0; i < parts; ++i) expected += Made(i);
        MakeInOrder(
            parts, threads, window,
            [&](size_t i, std::string& text) {
              text = Made(i);
              const int now = ++waiting;
              for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
              }
            },
            [&](std::string& text) {
              taken += text;
              --waiting;
            });
        EXPECT_EQ(taken, expected) << threads << " threads, " << parts << " parts, window " << window;
        // The window is widened to one part per thread at least.
        EXPECT_LE(most.load(), static_cast<int>(std::max<size_t>(window, static_cast<size_t>(threads))));
      }
    }
  }
}

TEST(MakeInOrder, AnExceptionFromAPartOrTheTakerStopsTheRestAndReachesTheCaller) {
  for (int threads : {1, 2, 4}) {
    std::vector<size_t> taken;
    std::atomic<size_t> made{0};
    EXPECT_THROW(MakeInOrder(
                     1000, threads, 8,
                     [&](size_t i, std::string& text) {
                       if (i == 100) throw std::runtime_error("part 100");
                       ++made;
                       text = std::to_string(i);
                     },
                     [&](std::string& text) { taken.push_back(std::stoul(text)); }),
                 std::runtime_error);
    ASSERT_LE(taken.size(), 100u);
    for (size_t i = 0; i < taken.size(); ++i) EXPECT_EQ(taken[i], i);
    EXPECT_LT(made.load(), 100u + 8u + static_cast<size_t>(threads));  // the rest never began

    size_t takes = 0;
    EXPECT_THROW(MakeInOrder(
                     1000, threads, 8, [](size_t i, std::string& text) { text = std::to_string(i); },
                     [&](std::string&) {
                       if (++takes == 10) throw std::runtime_error("the sink");
                     }),
                 std::runtime_error);
    EXPECT_EQ(takes, 10u);
  }
}

}  // namespace
}  // namespace seismo
