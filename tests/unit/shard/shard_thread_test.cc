// A shard's state is used by one thread at a time (aggregate/shard_state.h, "Threading"):
// its shard thread while the set runs, the owner's thread while it is stopped. Debug builds
// check it (core/thread_owner.h); a call from another thread aborts with the method's name.
// Release builds compile the check out, and the death tests are skipped there.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "seismo/aggregate/shard_state.h"
#include "seismo/shard/shard_set.h"
#include "support/keys.h"
#include "support/wait_for.h"

namespace seismo {
namespace {

using namespace std::chrono_literals;

#ifdef NDEBUG
constexpr bool kChecked = false;
#else
constexpr bool kChecked = true;
#endif

DeltaBatchPtr UsageBatch(Symbols& sym) {
  auto batch = std::make_unique<DeltaBatch>();
  batch->deltas.push_back(test::MakeDelta(sym, Table::kUsage, {"main", "nightly", "Linux", "20261101"},
                                          1'795'000'000'000, {60'000, 1}));
  return batch;
}

TEST(ShardStateThreadDeathTest, AnotherThreadThanTheOwnerAborts) {
  if (!kChecked) GTEST_SKIP() << "the check is compiled into debug builds only";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Symbols sym;
  ShardState state({}, &sym);
  EXPECT_DEATH(std::thread([&] { state.AdvanceTo(EventTime{1'795'000'000'000}); }).join(),
               "ShardState::AdvanceTo called on thread");
}

TEST(ShardStateThread, AThreadTheStateIsHandedToMayUseIt) {
  Symbols sym;
  ShardState state({}, &sym);
  std::thread([&] {
    state.BindToCurrentThread();
    state.Apply(UsageBatch(sym)->deltas[0]);
  }).join();
  state.BindToCurrentThread();  // joined: the owner's again
  EXPECT_EQ(state.Snapshot()->counters.deltas, 1u);
}

TEST(ShardSetThreadDeathTest, RestoringWhileTheShardThreadsRunAborts) {
  if (!kChecked) GTEST_SKIP() << "the check is compiled into debug builds only";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Symbols sym;
  ShardSet set(1, 1, 4, AggregateOptions{}, nullptr, &sym);
  std::vector<ShardImage> images(1);
  set.Start();
  // Once a batch is applied the shard thread holds its state (before that, the thread may
  // not have taken it yet, and a restore from here would be the owner's, which is allowed).
  set.Push(0, 0, UsageBatch(sym));
  ASSERT_TRUE(test::WaitFor([&] { return set.Idle(); }, 10s, 10ms));
  EXPECT_DEATH(set.Restore(images), "ShardState::RestoreBegin called on thread");
  set.Stop();
}

TEST(ShardSetThread, TheOwnerTakesTheStatesBackWhenTheSetStops) {
  Symbols sym;
  ShardSet set(1, 1, 4, AggregateOptions{}, nullptr, &sym);
  set.Start();
  set.Push(0, 0, UsageBatch(sym));
  ASSERT_TRUE(test::WaitFor([&] { return set.Idle(); }, 10s, 10ms));
  set.Stop();
  // The shard thread applied the batch; the owner's thread reads the state after joining it.
  const std::vector<ShardImage> images = set.FinalImages();
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0].series.size(), 1u);
  set.Restore(images);  // stopped: the owner may restore
}

}  // namespace
}  // namespace seismo
