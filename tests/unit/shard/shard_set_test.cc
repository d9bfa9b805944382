// ShardSet's checkpoint images: an image always answers the request it is
// collected for, never an earlier one that timed out; restored states are
// published whole before any shard thread answers; a snapshot stops at its cut.
#include "seismo/shard/shard_set.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "seismo/core/hash.h"
#include "support/keys.h"
#include "support/wait_for.h"

namespace seismo {
namespace {

using namespace std::chrono_literals;

Symbols& Sym() {
  static Symbols* symbols = new Symbols();  // shared by this file's tests, never freed
  return *symbols;
}

DeltaBatchPtr UsageBatch(int64_t usage_ms, const std::string& build = "20261101") {
  Delta d = test::MakeDelta(Sym(), Table::kUsage, {"main", "nightly", "Linux", build}, 1'795'000'000'000,
                            {usage_ms, 1});
  auto batch = std::make_unique<DeltaBatch>();
  batch->deltas.push_back(std::move(d));
  return batch;
}

int64_t UsageIn(const std::vector<ShardImage>& images) {
  int64_t sum = 0;
  for (const ShardImage& image : images) {
    for (const SeriesImage& s : image.series) {
      for (const SeriesImage::Entry& e : s.entries) sum += e.v[0];
    }
  }
  return sum;
}

bool WaitIdle(const ShardSet& set) {
  for (int i = 0; i < 500 && !set.Idle(); ++i) std::this_thread::sleep_for(10ms);
  return set.Idle();
}

TEST(ShardSet, AnImageOfATimedOutRequestIsNeverTakenForALaterOne) {
  ShardSet set(1, 1, 4, AggregateOptions{}, nullptr, &Sym());
  set.SetApplyDelayForTesting(300ms);  // the shard is busy when the first request comes
  set.Start();
  set.Push(0, 0, UsageBatch(1));
  EXPECT_TRUE(set.CollectImages(1ms).empty());
  ASSERT_TRUE(WaitIdle(set));
  // The shard answers the timed-out request late, before it sees the next batch.
  for (int i = 0; i < 500 && set.QueuedImages() == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(set.QueuedImages(), 1u);
  set.Push(0, 0, UsageBatch(2));
  ASSERT_TRUE(WaitIdle(set));
  const std::vector<ShardImage> images = set.CollectImages(5s);
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(UsageIn(images), 3) << "an image from before the second batch";
  set.Stop();
}

int64_t UsageIn(const std::vector<std::shared_ptr<const ShardSnapshot>>& snapshots) {
  int64_t sum = 0;
  for (const auto& snap : snapshots) {
    if (!snap) continue;
    snap->ForEach(Table::kUsage, [&](const SeriesData& s) { sum += s.total()[0]; });
  }
  return sum;
}

TEST(ShardSet, RestoredStatesArePublishedBeforeAnyShardAnswers) {
  std::vector<ShardImage> images;
  {
    ShardSet first(4, 1, 64, AggregateOptions{}, nullptr, &Sym());
    first.Start();
    for (int64_t ms = 1; ms <= 40; ++ms) {
      DeltaBatchPtr batch = UsageBatch(ms, std::to_string(ms));  // one series per batch
      const size_t shard = first.ShardFor(batch->deltas[0].route_hash);
      first.Push(0, shard, std::move(batch));
    }
    ASSERT_TRUE(WaitIdle(first));
    first.Stop();
    images = first.FinalImages();
  }
  ASSERT_EQ(UsageIn(images), 40 * 41 / 2);
  size_t shards_with_data = 0;
  for (const ShardImage& image : images) shards_with_data += image.series.empty() ? 0 : 1;
  ASSERT_GT(shards_with_data, 1u) << "the series spread over several shards";

  ShardSet second(4, 1, 64, AggregateOptions{}, nullptr, &Sym());
  second.Restore(images);
  // No shard thread runs yet, so none has answered: the restored states stand in.
  EXPECT_EQ(UsageIn(second.LatestSnapshots()), 40 * 41 / 2);
}

// ADR 0032's cut, on two shards fed by two producers. Chunk c adds 2^c of usage on each
// shard; chunks alternate between the producers' rings.
void PushChunk(ShardSet& set, uint64_t chunk) {
  for (size_t shard = 0; shard < 2; ++shard) {
    DeltaBatchPtr batch = UsageBatch(int64_t{1} << chunk, "2026110" + std::to_string(shard));
    batch->chunk_seq = chunk;
    set.Push(chunk % 2, shard, std::move(batch));
  }
}

// The usage of the snapshots answering request `epoch`, once every shard has (-1: not in time).
int64_t UsageAnswering(ShardSet& set, uint64_t epoch) {
  if (!test::WaitFor([&] { return set.SnapshotsAnswered(epoch); }, 5s, 1ms)) return -1;
  return UsageIn(set.LatestSnapshots());
}

// A request's snapshot holds the batches of the chunks before its cut and none after,
// whatever else sits in the rings; the next request without a cut takes the rest.
TEST(ShardSet, ASnapshotHoldsTheChunksBeforeItsCutAndNoneAfter) {
  ShardSet set(2, 2, 16, AggregateOptions{}, nullptr, &Sym());
  // Queued before the threads start, so the shards see the request before any batch.
  for (uint64_t chunk = 0; chunk < 6; ++chunk) PushChunk(set, chunk);
  const uint64_t epoch = set.RequestSnapshots(/*through=*/4);
  set.Start();
  EXPECT_EQ(UsageAnswering(set, epoch), 2 * 0b1111) << "chunks 0-3 on both shards";
  EXPECT_EQ(UsageAnswering(set, set.RequestSnapshots()), 2 * 0b111111);
  set.Stop();
}

// The same with the shards running and slow: the request comes while they apply the first
// chunks, and the chunks after its cut are pushed right after it.
TEST(ShardSet, ARequestMadeWhileTheShardsRunStopsAtItsCut) {
  ShardSet set(2, 2, 16, AggregateOptions{}, nullptr, &Sym());
  set.SetApplyDelayForTesting(20ms);
  set.Start();
  for (uint64_t chunk = 0; chunk < 4; ++chunk) PushChunk(set, chunk);
  const uint64_t epoch = set.RequestSnapshots(/*through=*/4);
  PushChunk(set, 4);
  PushChunk(set, 5);
  EXPECT_EQ(UsageAnswering(set, epoch), 2 * 0b1111) << "chunks 0-3 on both shards";
  EXPECT_EQ(UsageAnswering(set, set.RequestSnapshots()), 2 * 0b111111);
  set.Stop();
}

}  // namespace
}  // namespace seismo
