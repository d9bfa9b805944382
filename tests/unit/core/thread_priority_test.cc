// RequestShortSlice: the calling thread's turn (EEVDF's custom slice, read back from
// /proc/self/task/<tid>/sched's se.slice) becomes the one asked for, and its nice value stays.
#include "seismo/core/thread_priority.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <thread>

#include "unit/core/thread_slice.h"

namespace seismo {
namespace {

using namespace std::chrono_literals;

TEST(ThreadPriority, AShortSliceIsTheCallingThreadsAndKeepsItsNice) {
  const auto tid = static_cast<int>(syscall(SYS_gettid));
  const std::optional<uint64_t> before = testing::ThreadSliceNs(tid);
  if (!before) GTEST_SKIP() << "this kernel shows no se.slice (before Linux 6.6)";
  const int base = ThisThreadNice();
  if (base > 17) GTEST_SKIP() << "this process already runs at nice " << base;
  std::thread([&] {
    const auto me = static_cast<int>(syscall(SYS_gettid));
    ASSERT_TRUE(LowerThisThreadPriority(2));
    ASSERT_TRUE(RequestShortSlice(kClientThreadSlice));
    EXPECT_EQ(testing::ThreadSliceNs(me), uint64_t{100'000});
    EXPECT_EQ(ThisThreadNice(), base + 2) << "its nice value is kept";
    ASSERT_TRUE(RequestShortSlice(3ms));
    EXPECT_EQ(testing::ThreadSliceNs(me), uint64_t{3'000'000});
  }).join();
  EXPECT_EQ(testing::ThreadSliceNs(tid), before) << "only the calling thread's turn changes";
  EXPECT_EQ(ThisThreadNice(), base);
}

}  // namespace
}  // namespace seismo
