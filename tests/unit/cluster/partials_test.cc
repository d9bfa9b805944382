// Splitting a partition's state into per-bucket partials (ADR 0023): a crash series lives in
// every shard its documents' ids routed it to, so a partition's images can hold its key more
// than once; its record holds it once, merged, and is a record every reader takes.
#include "seismo/cluster/partials.h"

#include <gtest/gtest.h>

#include "seismo/core/hash.h"
#include "support/keys.h"

namespace seismo {
namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kBucket = 29'916'666;

SeriesImage CrashSeries(Symbols& symbols, int64_t first_ms, Values v, const char* install) {
  SeriesImage s;
  s.key = test::Key(symbols, Table::kCrashes,
                    {"release", "Firefox", "146.0", "20261117090501", "Linux", "parent", "parent", "sig"});
  s.first_ms = first_ms;
  s.installs.Add(Hash64(install));
  s.entries.push_back({kBucket, v, s.installs});
  return s;
}

TEST(Partials, ACrashSeriesInTwoShardsIsOneSeriesOfItsBucketsRecord) {
  Symbols symbols;
  // Shard 0 counted two crashes of the key (one at startup), shard 1 one more; one more in
  // the next bucket, in shard 1.
  SeriesImage in_shard0 = CrashSeries(symbols, kBucket * kMinute + 30'000, {2, 1}, "client-1");
  SeriesImage in_shard1 = CrashSeries(symbols, kBucket * kMinute + 10'000, {1, 0}, "client-2");
  in_shard1.entries.push_back({kBucket + 1, {1, 0}, in_shard1.installs});
  const std::vector<SeriesImage> images = {in_shard0, in_shard1};
  const std::vector<PartialRecord> partials =
      SplitIntoPartials(images, {"socorro.processed", 2, 0, 0}, kMinute, 40, kBucket * kMinute, "a", symbols);
  ASSERT_EQ(partials.size(), 2u);
  ASSERT_EQ(partials[0].series.size(), 1u) << "the key once";
  const SeriesImage& merged = partials[0].series[0];
  EXPECT_EQ(merged.first_ms, kBucket * kMinute + 10'000);
  EXPECT_EQ(merged.entries.at(0).v[0], 3);  // 2 + 1 crashes
  EXPECT_EQ(merged.entries.at(0).v[1], 1);  // 1 + 0 at startup
  EXPECT_NEAR(merged.entries.at(0).installs.Estimate(), 2.0, 0.01);
  EXPECT_NEAR(merged.installs.Estimate(), 2.0, 0.01);
  EXPECT_EQ(partials[1].series.at(0).entries.at(0).v[0], 1);
  for (const PartialRecord& p : partials) {
    Symbols reader;
    RecordResult r = DecodeRecord(PartialKey(p.where), EncodePartial(p, symbols), reader);
    EXPECT_TRUE(r.ok()) << r.detail();
  }
}

}  // namespace
}  // namespace seismo
