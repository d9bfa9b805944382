// A live snapshot is one cut through the input (ADR 0032): every shard's part holds the
// deltas of the same chunks, so a document's series, which live on different shards, are
// all in it or all out. Checked while parse workers and shards run at full speed, with a
// publisher asking for snapshots as fast as the shards answer.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "seismo/shard/pipeline.h"
#include "seismo/signature/generator.h"
#include "seismo/sim/synth.h"
#include "support/wait_for.h"
#include "test_scale.h"

namespace seismo {
namespace {

const SignatureGenerator& Signatures() {
  static const auto gen = SignatureGenerator::LoadDefault();
  return *gen.value();
}

int64_t PingsIn(const Snapshot& snap, Table table) {
  int64_t pings = 0;
  for (const SeriesData* series : snap.table(table)) pings += series->total()[1];
  return pings;
}

// Each main ping counts once in the usage table (by source, channel, OS, build date) and once
// in the build usage table (by channel, product, version, build id, OS): different keys, so
// mostly different shards. A snapshot cut between shards counts a ping in one and not the other.
TEST(SnapshotCut, EverySnapshotCountsEachMainPingInBothUsageTablesOrInNeither) {
  PipelineOptions o;
  o.parse_threads = 2;
  o.shards = 4;
  o.chunk_ring_capacity = 4;
  o.delta_ring_capacity = 4;  // small rings: shards fall behind the workers unevenly
  o.sources = {{"test", std::nullopt}};
  SystemClock clock;
  Symbols symbols;
  Pipeline p(o, &symbols, &Signatures(), nullptr, &clock);
  p.Start();

  std::atomic<bool> done{false};
  int publishes = 0, uneven = 0;
  int64_t last_pings = 0;
  std::string first_uneven;
  std::thread publisher_thread([&] {
    while (!done.load()) {
      const uint64_t epoch = p.RequestSnapshots();
      if (!test::WaitFor([&] { return p.shards().SnapshotsAnswered(epoch); }, std::chrono::seconds(30),
                         std::chrono::milliseconds(1))) {
        ADD_FAILURE() << "the shards did not answer a snapshot request";
        return;
      }
      const auto snap = MergeSnapshots(p.shards().LatestSnapshots(), symbols, o.aggregate.bucket_ms,
                                       o.aggregate.windows_ms, o.aggregate.retention_ms);
      const int64_t usage = PingsIn(*snap, Table::kUsage), builds = PingsIn(*snap, Table::kBuildUsage);
      ++publishes;
      last_pings = usage;
      if (usage != builds && uneven++ == 0) {
        first_uneven =
            std::to_string(usage) + " pings in usage, " + std::to_string(builds) + " in build usage";
      }
    }
  });
  // Joined whatever way the test ends (a joinable thread destroyed would end the binary).
  struct Joiner {
    std::atomic<bool>& done;
    std::thread& thread;
    ~Joiner() {
      done.store(true);
      if (thread.joinable()) thread.join();
    }
  } publisher{done, publisher_thread};

  Synth synth(SynthOptions{});
  const size_t docs = test::Scaled(20'000);
  auto chunk = p.NewChunk();
  for (size_t i = 0; i < docs; ++i) {
    const std::string doc = synth.Main(i);
    DocRef ref;
    ref.begin = static_cast<uint32_t>(chunk->data.size());
    ref.length = static_cast<uint32_t>(doc.size());
    ref.position = static_cast<int64_t>(i);
    chunk->data += doc;
    chunk->docs.push_back(ref);
    if (chunk->docs.size() == 17) {
      p.Submit(std::move(chunk));
      chunk = p.NewChunk();
    }
  }
  p.Submit(std::move(chunk));
  ASSERT_TRUE(p.WaitIdle(test::Patience(std::chrono::seconds(60))));
  done.store(true);
  publisher_thread.join();
  EXPECT_GT(publishes, 1);
  EXPECT_EQ(uneven, 0) << "of " << publishes << " snapshots; the first: " << first_uneven;
  // The last one was taken after the pipeline went idle... or before: at most all of them.
  EXPECT_LE(last_pings, static_cast<int64_t>(docs));
  p.Finish();
}

}  // namespace
}  // namespace seismo
