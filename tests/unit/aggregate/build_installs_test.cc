// A build's installs (ADR 0031): a build-usage series counts every install its main pings
// came from, and its hours the installs whose pings reported sub-process crashes; both
// survive an image (checkpoint, aggregates record), and an image of the older format,
// whose series sketch held only the reporters, is read with them moved to its hours.
#include <gtest/gtest.h>

#include <string>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/series_data.h"
#include "seismo/aggregate/shard_image.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/core/bytes.h"
#include "seismo/core/hash.h"
#include "support/keys.h"

namespace seismo {
namespace {

constexpr int64_t kT0 = 1'795'000'000'000;

// A main ping of `install` with `gpu` sub-process crashes, `minutes` after kT0.
Delta Ping(Symbols& sym, const std::string& install, int64_t gpu, int64_t minutes = 0) {
  Delta d =
      test::MakeDelta(sym, Table::kBuildUsage, {"release", "Firefox", "146.0", "20261117090501", "Linux"},
                      kT0 + minutes * 60'000, {3'600'000, 1, gpu, 0, 0});
  d.install_hash = InstallHash(install);
  return d;
}

const SeriesData& OnlyUsageSeries(const ShardSnapshot& snap) {
  const SeriesData* out = nullptr;
  snap.ForEach(Table::kBuildUsage, [&out](const SeriesData& s) { out = &s; });
  EXPECT_NE(out, nullptr);
  return *out;
}

// Ten installs send pings over two hours; two of them report a gpu crash.
void TenInstalls(Symbols& sym, ShardState& state) {
  for (int i = 0; i < 10; ++i) state.Apply(Ping(sym, "install-" + std::to_string(i), 0, i * 10));
  state.Apply(Ping(sym, "install-3", 1, 5));
  state.Apply(Ping(sym, "install-7", 2, 95));
}

TEST(BuildInstalls, TheSeriesCountsEveryInstallItsHoursTheCrashReporters) {
  Symbols sym;
  ShardState state({}, &sym);
  TenInstalls(sym, state);
  const auto snap = state.Snapshot();
  const SeriesData& s = OnlyUsageSeries(*snap);
  EXPECT_NEAR(s.installs.Estimate(), 10.0, 0.05);
  EXPECT_NEAR(InstallsOfHours(s).Estimate(), 2.0, 0.01);
  ASSERT_EQ(s.hours.size(), 2u);
  EXPECT_NEAR(s.hours[0]->hour_installs().Estimate(), 1.0, 0.01) << "install-3, in the first hour";
  EXPECT_TRUE(s.hours[0]->installs().empty()) << "no sketch per bucket";
  EXPECT_EQ(s.total()[2], 3);
}

// The tests' Combine (support/keys.h: two daemons' snapshots as one) carries both sides too:
// it rebuilds each series from its image entries, where a build-usage hour's reporters ride
// on its first bucket (BucketImageInstalls); it used to drop them.
TEST(BuildInstalls, BothSidesSurviveTheTestsCombine) {
  Symbols sym;
  const AggregateOptions options;
  ShardState state(options, &sym);
  TenInstalls(sym, state);
  const std::shared_ptr<const Snapshot> snap =
      MergeSnapshots({state.Snapshot()}, sym, options.bucket_ms, options.windows_ms, options.retention_ms);
  const std::shared_ptr<const Snapshot> combined = test::Combine({snap, snap}, options);
  ASSERT_EQ(combined->table(Table::kBuildUsage).size(), 1u);
  const SeriesData& s = *combined->table(Table::kBuildUsage)[0];
  EXPECT_NEAR(s.installs.Estimate(), 10.0, 0.05) << "the same ten installs, twice";
  EXPECT_NEAR(InstallsOfHours(s).Estimate(), 2.0, 0.01) << "install-3 and install-7";
  EXPECT_EQ(s.total()[2], 6) << "three gpu crashes, twice";
}

// An hour keeps its sketches beside it, and only where its table has one (series_data.h):
// a build-usage hour without reporters keeps none. A published hour is copied before it
// changes, sketches included, so what a reader holds never moves.
TEST(BuildInstalls, AnHourKeepsSketchesOnlyForReportersAndItsCopyOwnsThem) {
  Symbols sym;
  ShardState state({}, &sym);
  state.Apply(Ping(sym, "install-1", 0));
  const auto none = state.Snapshot();
  EXPECT_FALSE(OnlyUsageSeries(*none).hours[0]->has_sketches());
  state.Apply(Ping(sym, "install-2", 1));
  const auto one = state.Snapshot();
  state.Apply(Ping(sym, "install-3", 1));
  const auto two = state.Snapshot();
  EXPECT_FALSE(OnlyUsageSeries(*none).hours[0]->has_sketches()) << "a published hour never changes";
  EXPECT_NEAR(OnlyUsageSeries(*one).hours[0]->hour_installs().Estimate(), 1.0, 0.01);
  EXPECT_NEAR(OnlyUsageSeries(*two).hours[0]->hour_installs().Estimate(), 2.0, 0.01);
  const HourChunk& hour = *OnlyUsageSeries(*two).hours[0];
  const HourChunk copy(hour);
  EXPECT_NE(&copy.hour_installs(), &hour.hour_installs());
  EXPECT_NEAR(copy.hour_installs().Estimate(), 2.0, 0.01);
}

TEST(BuildInstalls, BothSidesSurviveAnImage) {
  Symbols sym;
  ShardState state({}, &sym);
  TenInstalls(sym, state);
  ByteWriter w;
  EncodeShardImage(state.Image(), sym, w);
  ByteReader r(w.bytes());
  ShardImage image;
  ASSERT_TRUE(DecodeShardImage(r, 4, sym, image));
  ShardState restored({}, &sym);
  restored.RestoreBegin(image, true, true);
  for (const SeriesImage& s : image.series) restored.RestoreSeries(s);
  const auto snap = restored.Snapshot();
  const SeriesData& s = OnlyUsageSeries(*snap);
  EXPECT_NEAR(s.installs.Estimate(), 10.0, 0.05);
  ASSERT_EQ(s.hours.size(), 2u);
  EXPECT_NEAR(s.hours[0]->hour_installs().Estimate(), 1.0, 0.01);
  EXPECT_NEAR(s.hours[1]->hour_installs().Estimate(), 1.0, 0.01);
}

// Checkpoint format 3 (aggregates records 1): a build-usage entry had no sketch, and the
// series' sketch was the reporters'.
TEST(BuildInstalls, TheOlderFormatsReportersMoveToTheSeriesLastHour) {
  Symbols sym;
  HyperLogLog reporters;
  reporters.Add(InstallHash("install-3"));
  ByteWriter w;
  const char* fields[] = {"release", "Firefox", "146.0", "20261117090501", "Linux"};
  w.U64(5);  // texts
  for (const char* f : fields) w.Str(f);
  w.U64(0);  // stacks
  w.U64(1);  // series
  w.U8(static_cast<uint8_t>(Table::kBuildUsage));
  for (uint64_t i = 0; i < 5; ++i) w.U64(i);
  w.I64(kT0);
  EncodeHll(reporters, w);
  w.U64(2);  // entries, no sketch each
  for (int64_t bucket : {kT0 / 60'000, kT0 / 60'000 + 70}) {
    w.I64(bucket);
    for (int64_t v : {3'600'000, 1, 1, 0, 0}) w.I64(v);
  }
  std::vector<SeriesImage> legacy;
  ByteReader r(w.bytes());
  ASSERT_TRUE(DecodeSeriesSet(r, sym, legacy, SeriesSetFormat::kCrashEntryInstalls));
  ASSERT_EQ(legacy.size(), 1u);
  EXPECT_TRUE(legacy[0].installs.empty()) << "its active installs are not known";
  EXPECT_TRUE(legacy[0].entries[0].installs.empty());
  EXPECT_NEAR(legacy[0].entries[1].installs.Estimate(), 1.0, 0.01);
}

}  // namespace
}  // namespace seismo
