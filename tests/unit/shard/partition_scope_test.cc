// A partition-scoped pipeline (ADR 0024, step 1): one state per source partition in
// each shard, each judged by its partition's own stream time. Every partition's state
// equals the same partition's documents run alone, whatever the other partitions did
// (what lets a partition's state move to another instance), and merging the
// partitions equals the corpus aggregated unscoped.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seismo/core/hash.h"
#include "seismo/shard/pipeline.h"
#include "seismo/sim/synth.h"
#include "support/keys.h"
#include "support/signatures.h"
#include "test_clock.h"

namespace seismo {
namespace {

constexpr int32_t kPartitions = 3;
constexpr int64_t kDay = 86'400'000;

struct Doc {
  int32_t partition = 0;
  std::string body;
};

// Input in order, `per_chunk` documents a chunk; `idle_after` (chunk index → partitions)
// marks partitions caught up after that chunk, as the Kafka source does.
struct Input {
  std::vector<Doc> docs;
  size_t per_chunk = 40;
  std::map<size_t, std::vector<int32_t>> idle_after;
};

struct PipelineRun {
  std::unique_ptr<Symbols> symbols = std::make_unique<Symbols>();
  std::unique_ptr<Pipeline> pipeline;
  std::shared_ptr<const Snapshot> snapshot;
};

AggregateOptions Options(int64_t retention_ms) {
  AggregateOptions o;
  o.retention_ms = retention_ms;
  o.windows_ms = {3'600'000, kDay};
  return o;
}

std::unique_ptr<Pipeline> MakePipeline(Symbols* symbols, bool scoped, int64_t retention_ms, size_t max_series,
                                       size_t shards = 2) {
  static test::ManualClock clock(0);  // archive sources: the clock decides nothing
  PipelineOptions o;
  o.parse_threads = 2;
  o.shards = shards;
  o.aggregate = Options(retention_ms);
  o.aggregate.max_series = max_series;
  o.sources = {{"telemetry", std::nullopt, false}};
  o.partition_scoped = scoped;
  return std::make_unique<Pipeline>(o, symbols, &test::DefaultSignatures(), nullptr, &clock);
}

// Submits the input's documents in chunks, with its idle marks.
void Feed(Pipeline& p, const Input& input) {
  DocChunkPtr chunk = p.NewChunk();
  size_t chunks = 0;
  auto submit = [&] {
    auto idle = input.idle_after.find(chunks);
    if (idle != input.idle_after.end()) {
      for (int32_t partition : idle->second) chunk->idle.push_back({0, partition});
    }
    p.Submit(std::move(chunk));
    chunk = p.NewChunk();
    ++chunks;
  };
  for (size_t i = 0; i < input.docs.size(); ++i) {
    DocRef ref;
    ref.source = 0;
    ref.partition = input.docs[i].partition;
    ref.position = static_cast<int64_t>(i);
    AddDocument(*chunk, ref, input.docs[i].body, 0, size_t{1} << 30);
    if (chunk->docs.size() == input.per_chunk) submit();
  }
  if (!chunk->docs.empty()) submit();
}

// The input's first and second halves.
std::pair<Input, Input> Halves(const Input& input) {
  const auto half = static_cast<ptrdiff_t>(input.docs.size() / 2);
  std::pair<Input, Input> out;
  out.first.docs.assign(input.docs.begin(), input.docs.begin() + half);
  out.second.docs.assign(input.docs.begin() + half, input.docs.end());
  return out;
}

// As the daemon's checkpoint barrier: every held document decided, everything applied.
bool Barrier(Pipeline& p) {
  DocChunkPtr barrier = p.NewChunk();
  barrier->settle = true;
  p.Submit(std::move(barrier));
  return p.WaitIdle(std::chrono::seconds(60));
}

PipelineRun RunPipeline(const Input& input, bool scoped, int64_t retention_ms, size_t max_series = 200'000) {
  PipelineRun run;
  run.pipeline = MakePipeline(run.symbols.get(), scoped, retention_ms, max_series);
  run.pipeline->Start();
  Feed(*run.pipeline, input);
  run.pipeline->Finish();
  run.snapshot = run.pipeline->FinalSnapshot();
  return run;
}

// Only partition `partition`'s documents, in their order.
Input Alone(const Input& input, int32_t partition) {
  Input out;
  out.per_chunk = input.per_chunk;
  for (const Doc& d : input.docs) {
    if (d.partition == partition) out.docs.push_back(d);
  }
  return out;
}

void ExpectSameTotals(const Snapshot& a, const Snapshot& b) {
  for (size_t t = 0; t < kTableCount; ++t) {
    SCOPED_TRACE(testing::Message() << "table " << t);
    const auto x = test::Totals(a, static_cast<Table>(t));
    const auto y = test::Totals(b, static_cast<Table>(t));
    ASSERT_EQ(x.size(), y.size());
    for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j) {
      ASSERT_EQ(i->first, j->first);
      EXPECT_EQ(i->second.total, j->second.total) << i->first;
      EXPECT_EQ(i->second.installs.Estimate(), j->second.installs.Estimate()) << i->first;
      EXPECT_EQ(i->second.first_ms, j->second.first_ms) << i->first;
    }
  }
}

// Every kind of document of the generator; each goes to the partition its content
// hashes to (so copies of a crash meet in one partition, as its id's memory requires).
Input GeneratedCorpus() {
  SynthOptions o;
  o.seed = 24;
  o.spacing_ms = 20'000;
  Synth synth(o);
  Input input;
  for (size_t i = 0; i < 900; ++i) {
    const std::string doc = i % 3 == 0   ? synth.Main(i)
                            : i % 3 == 1 ? synth.Bhr(i)
                            : i % 6 == 2 ? synth.ProcessedCrash(i)
                                         : synth.CrashPing(i);
    input.docs.push_back({static_cast<int32_t>(Hash64(doc) % kPartitions), doc});
  }
  return input;
}

void ExpectSameCounts(const RecordCounts& a, const RecordCounts& b) {
  EXPECT_EQ(a.by_kind, b.by_kind);
  EXPECT_EQ(a.rejected, b.rejected);
  EXPECT_EQ(a.documents, b.documents);
  EXPECT_EQ(a.bytes, b.bytes);
}

// The generated corpus with documents of every fate: unparsable, future-dated, repeated.
Input CorpusWithRejects() {
  Input input = GeneratedCorpus();
  SynthOptions o;
  o.seed = 24;
  o.spacing_ms = 20'000;
  Synth synth(o);
  std::vector<Doc> docs;
  for (size_t i = 0; i < input.docs.size(); ++i) {
    docs.push_back(input.docs[i]);
    const auto partition = static_cast<int32_t>(i % kPartitions);
    if (i % 40 == 7) docs.push_back({partition, "{not json"});
    if (i % 60 == 11) docs.push_back({partition, synth.Main(i + 10'000'000)});  // years ahead
    if (i % 6 == 2) docs.push_back(input.docs[i]);                              // a processed crash again
  }
  input.docs = std::move(docs);
  return input;
}

TEST(PartitionScope, MergedPartitionsEqualTheCorpusAggregatedWhole) {
  const Input input = GeneratedCorpus();
  PipelineRun scoped = RunPipeline(input, true, 365 * kDay);
  PipelineRun whole = RunPipeline(input, false, 365 * kDay);
  ASSERT_GT(test::Totals(*whole.snapshot, Table::kHangs).size(), 100u);
  ASSERT_GT(test::Totals(*whole.snapshot, Table::kCrashes).size(), 10u);
  ExpectSameTotals(*scoped.snapshot, *whole.snapshot);
  EXPECT_EQ(scoped.snapshot->counters.deltas, whole.snapshot->counters.deltas);
}

TEST(PartitionScope, EachPartitionsStateEqualsItsDocumentsRunAlone) {
  const Input input = GeneratedCorpus();
  PipelineRun scoped = RunPipeline(input, true, 365 * kDay);
  std::map<uint16_t, int32_t> partition_of_slot;
  for (int32_t partition = 0; partition < kPartitions; ++partition) {
    SCOPED_TRACE(testing::Message() << "partition " << partition);
    const std::optional<uint16_t> slot = scoped.pipeline->SlotOfSource({0, partition});
    ASSERT_TRUE(slot);
    EXPECT_TRUE(partition_of_slot.emplace(*slot, partition).second) << "two partitions share a slot";
    PipelineRun alone = RunPipeline(Alone(input, partition), false, 365 * kDay);
    ExpectSameTotals(*scoped.pipeline->FinalSlotSnapshot(*slot), *alone.snapshot);
  }
}

// What the parse workers and shards decided of each partition's documents (ADR 0024,
// "Counts") equals the same documents run alone, and the partitions' counts sum to the
// pipeline's.
TEST(PartitionScope, EachPartitionsCountsAreItsDocumentsRunAlone) {
  const Input input = CorpusWithRejects();
  PipelineRun scoped = RunPipeline(input, true, 365 * kDay);
  const std::map<Pipeline::PartitionName, RecordCounts> counts = scoped.pipeline->SourceCounts();
  ASSERT_EQ(counts.size(), static_cast<size_t>(kPartitions));
  RecordCounts sum;
  for (int32_t partition = 0; partition < kPartitions; ++partition) {
    SCOPED_TRACE(testing::Message() << "partition " << partition);
    PipelineRun alone = RunPipeline(Alone(input, partition), false, 365 * kDay);
    const RecordCounts& mine = counts.at({"telemetry", partition});
    ExpectSameCounts(mine, CountsOf(alone.pipeline->counters()));
    AddCounts(sum, mine);
    const std::shared_ptr<const Snapshot> slot =
        scoped.pipeline->FinalSlotSnapshot(*scoped.pipeline->SlotOfSource({0, partition}));
    EXPECT_EQ(slot->counters.duplicates, alone.snapshot->counters.duplicates);
    EXPECT_EQ(slot->counters.late_dropped, alone.snapshot->counters.late_dropped);
  }
  const RecordCounts all = CountsOf(scoped.pipeline->counters());
  ExpectSameCounts(sum, all);
  EXPECT_GT(all.rejected[static_cast<size_t>(RejectReason::kFutureTime)], 0u);
  EXPECT_GT(all.rejected[static_cast<size_t>(RejectReason::kMalformedJson)], 0u);
  EXPECT_GT(scoped.snapshot->counters.duplicates, 0u);
}

// The slots of a shard share its series budget: past it, the largest folds, and every
// total stays exact (ADR 0010).
TEST(PartitionScope, TheSlotsOfAShardShareItsBudgetAndTotalsStayExact) {
  const Input input = GeneratedCorpus();
  constexpr size_t kMaxSeries = 60;  // per shard; the corpus has hundreds of hang series
  PipelineRun scoped = RunPipeline(input, true, 365 * kDay, kMaxSeries);
  PipelineRun whole = RunPipeline(input, false, 365 * kDay);
  EXPECT_GT(scoped.snapshot->counters.folded, 0u);
  size_t rows = 0;
  for (size_t t = 0; t < kTableCount; ++t) rows += scoped.snapshot->table(static_cast<Table>(t)).size();
  // Two shards; "(other)" rows of one key in several slots merge into one row.
  EXPECT_LE(rows, 2 * kMaxSeries);
  for (size_t t = 0; t < kTableCount; ++t) {
    SCOPED_TRACE(testing::Message() << "table " << t);
    Values a{}, b{};
    for (const auto& [key, v] : test::Totals(*scoped.snapshot, static_cast<Table>(t))) {
      for (size_t i = 0; i < kMaxValues; ++i) a[i] += v.total[i];
    }
    for (const auto& [key, v] : test::Totals(*whole.snapshot, static_cast<Table>(t))) {
      for (size_t i = 0; i < kMaxValues; ++i) b[i] += v.total[i];
    }
    EXPECT_EQ(a, b);
  }
}

// A partition-scoped pipeline's checkpoint (its images, each named by its partition:
// PartitionsOf) restored into another, with another shard count, which reads the rest:
// every partition's state still equals its documents run alone, and the merge the whole.
// (The checkpoint's bytes keep the names: CheckpointFiles.EachImagesShardAndSource….)
TEST(PartitionScope, ARestoredCheckpointKeepsEveryPartitionsOwnState) {
  const Input input = GeneratedCorpus();
  auto [first, rest] = Halves(input);

  auto symbols = std::make_unique<Symbols>();  // the restored images' ids name its texts
  std::vector<ShardImage> images;
  std::vector<std::optional<Pipeline::PartitionName>> partitions;
  {
    std::unique_ptr<Pipeline> before = MakePipeline(symbols.get(), true, 365 * kDay, 200'000);
    before->Start();
    Feed(*before, first);
    ASSERT_TRUE(Barrier(*before));
    images = before->shards().CollectImages(std::chrono::seconds(60));
    ASSERT_FALSE(images.empty());
    partitions = before->PartitionsOf(images);
    before->Finish();
  }
  size_t named = 0;
  for (const auto& p : partitions) named += p.has_value() && p->first == "telemetry";
  EXPECT_EQ(named, partitions.size()) << "an image of no partition";

  PipelineRun after;
  after.symbols = std::move(symbols);
  after.pipeline = MakePipeline(after.symbols.get(), true, 365 * kDay, 200'000, /*shards=*/3);
  after.pipeline->Restore({}, images, partitions);
  after.pipeline->Start();
  Feed(*after.pipeline, rest);
  after.pipeline->Finish();
  for (int32_t partition = 0; partition < kPartitions; ++partition) {
    SCOPED_TRACE(testing::Message() << "partition " << partition);
    const std::optional<uint16_t> slot = after.pipeline->SlotOfSource({0, partition});
    ASSERT_TRUE(slot);
    PipelineRun alone = RunPipeline(Alone(input, partition), false, 365 * kDay);
    ExpectSameTotals(*after.pipeline->FinalSlotSnapshot(*slot), *alone.snapshot);
  }
  PipelineRun whole = RunPipeline(input, false, 365 * kDay);
  ExpectSameTotals(*after.pipeline->FinalSnapshot(), *whole.snapshot);
}

// Partitions move between running instances (ADR 0024, restore on assignment): the first
// drops them at a barrier, the second adopts their states while running (each within
// `timeout`) and reads the rest of their documents, among them copies of crashes the first
// counted. Each partition's state there equals its documents run alone (each crash counted
// once), and the second instance's own partition is untouched.
void MovePartitions(const std::vector<int32_t>& moving, bool shards_slow_to_answer) {
  auto [first, rest] = Halves(GeneratedCorpus());
  for (size_t i = 2; i < first.docs.size(); i += 3) rest.docs.push_back(first.docs[i]);  // crashes again
  Input input = first;
  input.docs.insert(input.docs.end(), rest.docs.begin(), rest.docs.end());
  auto symbols = std::make_unique<Symbols>();  // both instances' (records carry texts across processes)

  // Instance A: the first half of every partition; then the moving partitions leave it.
  std::unique_ptr<Pipeline> a = MakePipeline(symbols.get(), true, 365 * kDay, 200'000);
  a->Start();
  Feed(*a, first);
  ASSERT_TRUE(Barrier(*a));
  std::vector<ShardImage> images = a->shards().CollectImages(std::chrono::seconds(60));
  const auto partitions = a->PartitionsOf(images);
  std::map<int32_t, MovedPartition> moved;  // as the aggregates topic carries them
  for (int32_t partition : moving) {
    MovedPartition& m = moved[partition];
    m.counts.records = a->SourceCounts().at({"telemetry", partition});
    for (size_t i = 0; i < images.size(); ++i) {
      if (partitions[i] != Pipeline::PartitionName{"telemetry", partition}) continue;
      for (const SeriesImage& series : images[i].series) m.series.push_back(series);
      m.stream_time_ms = std::max(m.stream_time_ms, images[i].stream_time_ms);
      AddCounts(m.counts.shards, images[i].counters);
      AddCrashIds(m.crash_ids, images[i]);
    }
    ASSERT_FALSE(m.series.empty());
    ASSERT_FALSE(m.crash_ids.empty());
    ASSERT_TRUE(a->DropSources({{0, partition}}, std::chrono::seconds(60)));
  }
  a->Finish();

  // Instance B: partition 0's first half, then the moving partitions arrive with their state.
  PipelineRun b;
  b.symbols = std::move(symbols);
  b.pipeline = MakePipeline(b.symbols.get(), true, 365 * kDay, 200'000, /*shards=*/3);
  b.pipeline->Start();
  Feed(*b.pipeline, Alone(first, 0));
  // Drained first: the short wait below is the shards' to answer, not the pipeline's to drain
  // (a sanitizer build takes longer than that to apply a feed).
  ASSERT_TRUE(b.pipeline->WaitIdle(std::chrono::seconds(60)));
  b.pipeline->shards().HoldSlotRequestsForTesting(shards_slow_to_answer);
  for (auto& [partition, m] : moved) {
    ASSERT_EQ(b.pipeline->AdoptSource(
                  {0, partition}, std::move(m),
                  shards_slow_to_answer ? std::chrono::milliseconds(20) : std::chrono::seconds(60)),
              shards_slow_to_answer ? Pipeline::Adoption::kQueued : Pipeline::Adoption::kDone);
  }
  b.pipeline->shards().HoldSlotRequestsForTesting(false);
  Input after;
  for (const Doc& d : rest.docs) {
    if (moved.contains(d.partition)) after.docs.push_back(d);
  }
  Feed(*b.pipeline, after);
  b.pipeline->Finish();

  std::vector<int32_t> checked = moving;
  checked.push_back(0);
  for (int32_t partition : checked) {
    SCOPED_TRACE(testing::Message() << "partition " << partition);
    const std::optional<uint16_t> slot = b.pipeline->SlotOfSource({0, partition});
    ASSERT_TRUE(slot);
    PipelineRun alone =
        RunPipeline(partition == 0 ? Alone(first, 0) : Alone(input, partition), false, 365 * kDay);
    ExpectSameTotals(*b.pipeline->FinalSlotSnapshot(*slot), *alone.snapshot);
    ExpectSameCounts(b.pipeline->SourceCounts().at({"telemetry", partition}),
                     CountsOf(alone.pipeline->counters()));
    EXPECT_EQ(b.pipeline->FinalSlotSnapshot(*slot)->counters.deltas, alone.snapshot->counters.deltas);
    EXPECT_EQ(b.pipeline->FinalSlotSnapshot(*slot)->counters.duplicates, alone.snapshot->counters.duplicates);
    if (partition != 0) EXPECT_GT(alone.snapshot->counters.duplicates, 0u) << "no crash came again";
  }
}

TEST(PartitionScope, APartitionAdoptedWhileRunningContinuesAsIfItHadNotMoved) {
  MovePartitions({1}, /*shards_slow_to_answer=*/false);
}

// Adoptions whose caller gave up waiting for the shards are queued: every shard takes each,
// in order, before the documents submitted after it, so nothing is lost or counted twice
// (before, a second request replaced a first that a shard had not done yet).
TEST(PartitionScope, AdoptionsThatTimedOutAreTakenInOrderBeforeTheDocumentsAfterThem) {
  MovePartitions({1, 2}, /*shards_slow_to_answer=*/true);
}

// A revoked partition leaves (DropSources): its state is gone from every shard, and its
// slot serves the next new partition, which starts empty; the partitions that stay are
// untouched.
TEST(PartitionScope, ADroppedPartitionLeavesAndItsSlotServesTheNextPartitionFromEmpty) {
  const Input input = GeneratedCorpus();
  auto [first, rest] = Halves(input);
  for (Doc& d : rest.docs) d.partition = d.partition == 1 ? 3 : d.partition;  // 1 is gone; 3 is new

  PipelineRun run;
  run.pipeline = MakePipeline(run.symbols.get(), true, 365 * kDay, 200'000);
  Pipeline& p = *run.pipeline;
  p.Start();
  Feed(p, first);
  ASSERT_TRUE(Barrier(p));
  const std::optional<uint16_t> slot_of_1 = p.SlotOfSource({0, 1});  // idle: no turn runs
  ASSERT_TRUE(slot_of_1);
  ASSERT_TRUE(p.DropSources({{0, 1}}, std::chrono::seconds(60)));
  Feed(p, rest);
  p.Finish();

  EXPECT_FALSE(p.SlotOfSource({0, 1}));
  EXPECT_EQ(p.SlotOfSource({0, 3}), slot_of_1) << "the freed slot serves the next partition";
  for (int32_t partition : {0, 2, 3}) {
    SCOPED_TRACE(testing::Message() << "partition " << partition);
    Input own;  // the partition's documents this instance had when it ended
    for (const Input* part : {&first, &rest}) {
      for (const Doc& d : part->docs) {
        if (d.partition == partition) own.docs.push_back(d);
      }
    }
    PipelineRun alone = RunPipeline(own, false, 365 * kDay);
    ExpectSameTotals(*p.FinalSlotSnapshot(*p.SlotOfSource({0, partition})), *alone.snapshot);
  }
  Input kept;  // everything but partition 1's documents
  for (const Input* part : {&first, &rest}) {
    for (const Doc& d : part->docs) {
      if (d.partition != 1) kept.docs.push_back(d);
    }
  }
  ExpectSameTotals(*p.FinalSnapshot(), *RunPipeline(kept, false, 365 * kDay).snapshot);
}

// A main ping at `t_ms` of a build of its own, so each partition's series are apart.
std::string Ping(int64_t t_ms, const std::string& build) {
  return R"({"type":"main","submission_timestamp":")" + FormatTimestamp(EventTime{t_ms}) +
         R"(","application":{"buildId":")" + build + R"("},"payload":{"info":{"subsessionLength":60}}})";
}

// Partition 0 is nine days ahead of partition 1, whose first documents come after
// partition 0's first chunk; partition 1 then catches up (goes idle) and receives more of
// its own day. Unscoped, stream time is partition 0's day by then, and every document of
// partition 1 is judged against it and dropped as late; scoped, each is judged against
// its own partition's time and counted, and each partition's state, expired by its own
// time at the end, equals its documents run alone.
TEST(PartitionScope, LatenessIsJudgedByThePartitionsOwnStreamTime) {
  const int64_t day1 = ParseTimestamp("2026-11-01T00:00:00Z")->ms;
  const int64_t day10 = day1 + 9 * kDay;
  Input input;
  input.per_chunk = 10;
  for (int i = 0; i < 10; ++i) input.docs.push_back({0, Ping(day10 + i * 60'000, "20261101000000")});
  for (int i = 0; i < 10; ++i) input.docs.push_back({1, Ping(day1 + i * 60'000, "20261001000000")});
  input.idle_after[1] = {1};  // after the second chunk: partition 1 has caught up
  for (int i = 0; i < 10; ++i) input.docs.push_back({1, Ping(day1 + (10 + i) * 60'000, "20261001000000")});
  for (int i = 0; i < 10; ++i) input.docs.push_back({0, Ping(day10 + (10 + i) * 60'000, "20261101000000")});

  const int64_t retention = 2 * kDay;
  PipelineRun whole = RunPipeline(input, false, retention);
  // Partition 1's 20 pings, two deltas each (usage and build usage).
  EXPECT_EQ(whole.snapshot->counters.late_dropped, 40u) << "the scenario does not make partition 1 late";
  PipelineRun scoped = RunPipeline(input, true, retention);
  EXPECT_EQ(scoped.snapshot->counters.late_dropped, 0u);
  for (int32_t partition : {0, 1}) {
    SCOPED_TRACE(testing::Message() << "partition " << partition);
    const std::optional<uint16_t> slot = scoped.pipeline->SlotOfSource({0, partition});
    ASSERT_TRUE(slot);
    PipelineRun alone = RunPipeline(Alone(input, partition), false, retention);
    EXPECT_EQ(alone.snapshot->counters.late_dropped, 0u);
    ExpectSameTotals(*scoped.pipeline->FinalSlotSnapshot(*slot), *alone.snapshot);
  }
}

}  // namespace
}  // namespace seismo
