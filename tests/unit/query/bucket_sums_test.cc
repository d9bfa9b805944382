// BucketSums (the warm-up's sums by bucket for the default time series, ADR 0034, issue 19):
// brought from round to round with the hang table's change set, they are the sums a walk of
// every series finds, as stream time moves and hours expire; the answer reading them is byte
// for byte the answer that walks the table; and they refuse what they cannot serve.
#include "seismo/query/bucket_sums.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "query_fixture.h"
#include "seismo/aggregate/row_changes.h"
#include "seismo/query/hangs_json.h"

namespace seismo {
namespace {

using testing::kDay;
using testing::kHour;
using testing::kMin;
using testing::Q;
using testing::World;

// An axis over every bucket the world can hold (its retention, and an hour more), of buckets
// or of hours.
TimeAxis Everything(const Snapshot& snap, bool hourly) {
  TimeAxis axis;
  axis.bucket_ms = snap.bucket_ms;
  axis.step = hourly ? kHour / snap.bucket_ms : 1;
  axis.last = snap.stream_time_ms / snap.bucket_ms;
  axis.first = axis.last - (World::Options().retention_ms + kHour) / snap.bucket_ms;
  return axis;
}

// A walk: every hang series of the source, each adding its buckets (AddPoints).
std::vector<BucketSums::Sums> Walk(const Snapshot& snap, Sym source, const TimeAxis& axis) {
  std::vector<BucketSums::Sums> out(axis.size());
  for (const SeriesData* s : snap.table(Table::kHangs)) {
    if (s->key[hang_field::kSource] == source) AddPoints(*s, axis, out);
  }
  return out;
}

std::vector<BucketSums::Sums> Read(const BucketSums& kept, const TimeAxis& axis) {
  std::vector<BucketSums::Sums> out(axis.size());
  kept.AddTo(axis, out);
  return out;
}

// Over rounds of new and changed series, quiet rounds, stream time moving by minutes, hours
// and days (hours expiring past the retention, series released) and series folded into
// "(other)": the sums brought with each change set are a walk's, for each source, by bucket
// and by hour, and every time series reading them is the one that walks the table. With two
// shards each may hold an "(other)" series of one key, which the snapshot sums into one.
class BucketSumsOverShards : public ::testing::TestWithParam<size_t> {};

TEST_P(BucketSumsOverShards, BroughtFromWhatChangedAreTheSumsOfAWalk) {
  World w(/*max_series=*/200, /*shards=*/GetParam());
  testing::Lcg next(7);
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  w.Usage("main", "Linux", kHour, 10 * kMin);
  auto hangs = [&](int n, uint64_t keys) {
    for (int i = 0; i < n; ++i) {
      const uint64_t k = next(keys);
      const int64_t ago =
          next(3) == 0 ? static_cast<int64_t>(next(13 * 24)) * kHour + static_cast<int64_t>(next(60)) * kMin
                       : static_cast<int64_t>(next(90)) * kMin;
      w.Hang(k % 3 == 0 ? "main" : "bhr", k % 2 == 0 ? "Windows" : "Linux", "parent",
             "T" + std::to_string(k % 3), {"root", "f" + std::to_string(k)},
             static_cast<int64_t>(1000 * (1 + next(5))), 1, ago);
    }
  };
  hangs(300, 250);
  std::shared_ptr<const Snapshot> before = w.Build();
  struct Kept {
    std::string source;
    std::optional<BucketSums> sums;
  };
  std::vector<Kept> kept;
  for (const char* source : {"bhr", "main"}) {
    const Sym id = SourceId(*before, source);
    kept.push_back({source, BucketSums::Make(*before, id, BucketSums::SpanOf(*before, id))});
  }
  const uint64_t bound =
      2 * BucketSums::kBytesPerBucket * ((World::Options().retention_ms + 2 * kHour) / kMin);
  int64_t advanced = 0;
  size_t released = 0;  // rounds with fewer series than the round before
  size_t folded = 0;    // removed "(other)" rows
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    const int64_t step = round % 4 == 0 ? 3 * kDay : round % 4 == 1 ? 0 : round % 4 == 2 ? 7 * kMin : kHour;
    w.Advance(step);
    advanced += step;
    hangs(round % 5 == 1 ? 0 : round % 5 == 2 ? 3 : 60, round < 20 ? 250 : 600);
    const std::shared_ptr<const Snapshot> after = w.Build();
    released += after->table(Table::kHangs).size() < before->table(Table::kHangs).size() ? 1 : 0;
    const RowChanges changes = ChangedRows(*before, *after, Table::kHangs);
    for (const SeriesData* s : changes.removed) folded += s->level > 0 ? 1 : 0;
    for (Kept& k : kept) {
      SCOPED_TRACE(::testing::Message() << "source " << k.source);
      const Sym source = SourceId(*after, k.source);
      ASSERT_TRUE(k.sums->Serves(HangFilters(Query{}, k.source), after->symbols, after->bucket_ms, source));
      // Brought within the span SpanWith gives (what the warm-up holds memory for).
      const BucketSums::Span span = k.sums->SpanWith(changes);
      ASSERT_TRUE(k.sums->Apply(*before, *after, changes, span.size()));
      EXPECT_LE(k.sums->buckets(), span.size());
      EXPECT_EQ(k.sums->buckets(), BucketSums::SpanOf(*after, source).size()) << "zeros at the ends dropped";
      for (bool hourly : {false, true}) {
        const TimeAxis axis = Everything(*after, hourly);
        ASSERT_EQ(Read(*k.sums, axis), Walk(*after, source, axis)) << (hourly ? "by hour" : "by bucket");
      }
      EXPECT_LE(k.sums->MemoryBytes(), bound) << "the buckets that left every series are dropped";
      EXPECT_LE(k.sums->MemoryBytes(), BucketSums::BytesFor(k.sums->buckets()));
      for (const char* window : {"1h", "24h", "7d", "all"}) {
        const Query q =
            Q(Endpoint::kHangsTimeseries, std::string("window=") + window + "&source=" + k.source);
        EXPECT_EQ(HangsTimeseriesJson(*after, q, &*k.sums), HangsTimeseriesJson(*after, q)) << window;
      }
    }
    before = after;
  }
  EXPECT_GE(advanced, 2 * World::Options().retention_ms) << "past the retention twice over";
  EXPECT_GT(released, 0u) << "series left";
  EXPECT_GT(folded, 0u)
      << "\"(other)\" rows (with two shards, each summed from both) were in the change sets";
}

INSTANTIATE_TEST_SUITE_P(Shards, BucketSumsOverShards, ::testing::Values(size_t{1}, size_t{2}));

// The sums serve only the source's time series without other filters, over snapshots of their
// symbols and bucket length; other snapshots are refused, and so are buckets past the bound.
TEST(BucketSums, ServeOnlyTheirSourceAndRefuseWhatTheyCannotHold) {
  World w;
  w.Usage("bhr", "Linux", kHour, 10 * kMin);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "a"}, 5000, 1, 5 * kMin);
  w.Hang("bhr", "Windows", "parent", "Gecko", {"root", "b"}, 7000, 2, 2 * kHour);
  const std::shared_ptr<const Snapshot> snap = w.Build();
  const Sym bhr = SourceId(*snap, "bhr");
  ASSERT_NE(bhr, kNoId);
  EXPECT_EQ(BucketSums::SpanOf(*snap, bhr).size(), 116u) << "2 h to 5 min back, in minutes";
  EXPECT_EQ(BucketSums::SpanOf(*snap, kNoId).size(), 0u);
  std::optional<BucketSums> sums = BucketSums::Make(*snap, bhr, BucketSums::SpanOf(*snap, bhr));
  EXPECT_EQ(sums->buckets(), 116u);
  EXPECT_TRUE(sums->Serves(HangFilters(Query{}, "bhr"), snap->symbols, snap->bucket_ms, bhr));
  Filters os = HangFilters(Query{}, "bhr");
  os[Dim::kOs] = "Linux";
  EXPECT_FALSE(sums->Serves(os, snap->symbols, snap->bucket_ms, bhr)) << "another filter";
  EXPECT_FALSE(sums->Serves(HangFilters(Query{}, "main"), snap->symbols, snap->bucket_ms, kNoId))
      << "another source";
  EXPECT_FALSE(sums->Serves(HangFilters(Query{}, "bhr"), snap->symbols, 2 * snap->bucket_ms, bhr))
      << "another bucket length";
  // An answer it does not serve walks the table: the same bytes.
  const Query linux = Q(Endpoint::kHangsTimeseries, "os=Linux&window=24h");
  EXPECT_EQ(HangsTimeseriesJson(*snap, linux, &*sums), HangsTimeseriesJson(*snap, linux));
  EXPECT_NE(HangsTimeseriesJson(*snap, linux).find("\"hang_count\":1,"), std::string::npos);

  World other;
  other.Hang("bhr", "Linux", "parent", "Gecko", {"root", "a"}, 5000, 1, 5 * kMin);
  const std::shared_ptr<const Snapshot> elsewhere = other.Build();
  EXPECT_FALSE(sums->Serves(HangFilters(Query{}, "bhr"), elsewhere->symbols, snap->bucket_ms, bhr));
  EXPECT_FALSE(sums->Apply(*snap, *elsewhere, ChangedRows(*snap, *elsewhere, Table::kHangs), 200))
      << "another symbol table";

  // A hang a day back: its bucket is past 200 from the others.
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "c"}, 1000, 1, kDay);
  const std::shared_ptr<const Snapshot> later = w.Build();
  const RowChanges changes = ChangedRows(*snap, *later, Table::kHangs);
  std::optional<BucketSums> copy = BucketSums::Make(*snap, bhr, BucketSums::SpanOf(*snap, bhr));
  EXPECT_FALSE(copy->Apply(*snap, *later, changes, 200)) << "past the bound";
  EXPECT_EQ(sums->SpanWith(changes).size(), 1436u) << "a day back to 5 min back, in minutes";
  EXPECT_TRUE(sums->Apply(*snap, *later, changes, sums->SpanWith(changes).size()));
  const TimeAxis axis = Everything(*later, false);
  EXPECT_EQ(Read(*sums, axis), Walk(*later, bhr, axis));
}

}  // namespace
}  // namespace seismo
