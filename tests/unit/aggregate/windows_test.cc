// Rolling windows, retention and late data against a naive recomputation.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/sim/synth.h"
#include "support/keys.h"
#include "test_scale.h"

namespace seismo {
namespace {

constexpr int64_t kMinute = 60'000, kHour = 3'600'000, kDay = 86'400'000;

struct Event {
  int64_t t;
  int series;
  int64_t value;
};

Symbols& Sym() {
  static Symbols* symbols = new Symbols();  // shared by this file's tests, never freed
  return *symbols;
}

Delta MakeDelta(const Event& e) {
  return test::MakeDelta(Sym(), Table::kHangs,
                         {"bhr", "nightly", "Linux", "20261101", "parent", "Gecko", "sig" + std::to_string(e.series),
                          "f" + std::to_string(e.series)},
                         e.t, {e.value, 1});
}

// The series number of a key (its signature "sig<N>").
int SeriesId(const SeriesData& s) {
  return std::stoi(std::string(Sym().Text(s.key[hang_field::kSignature])).substr(3));
}

std::shared_ptr<const Snapshot> Merged(ShardState& state, const AggregateOptions& o) {
  return MergeSnapshots({state.Snapshot()}, Sym(), o.bucket_ms, o.windows_ms, o.retention_ms);
}

int64_t Bucket(int64_t t) { return t / kMinute; }

// What the windows must hold, from first principles: the arrival-time stream
// time decides lateness; at the end a span W holds kept events whose bucket is
// within the last W/bucket buckets; totals hold those within the retention.
struct Expected {
  std::map<int, int64_t> total;
  std::map<int64_t, std::map<int, int64_t>> spans;
  uint64_t late = 0;
};

Expected Naive(const std::vector<Event>& arrivals, const std::vector<int64_t>& spans, int64_t retention) {
  Expected e;
  int64_t stream = INT64_MIN;
  std::vector<Event> kept;
  for (const Event& ev : arrivals) {
    stream = std::max(stream, ev.t);
    if (Bucket(ev.t) <= Bucket(stream) - retention / kMinute) {
      ++e.late;
      continue;
    }
    kept.push_back(ev);
  }
  for (const Event& ev : kept) {
    if (Bucket(ev.t) > Bucket(stream) - retention / kMinute) e.total[ev.series] += ev.value;
    for (int64_t w : spans) {
      if (Bucket(ev.t) >= Bucket(stream) - w / kMinute + 1) e.spans[w][ev.series] += ev.value;
    }
  }
  return e;
}

std::vector<Event> RandomArrivals(uint64_t seed, int64_t start, int64_t length, size_t n) {
  Rng r(seed);
  std::vector<Event> events;
  for (size_t i = 0; i < n; ++i) {
    int64_t t = start + static_cast<int64_t>(r.Below(static_cast<uint64_t>(length)));
    events.push_back({t, static_cast<int>(r.Below(20)), r.Between(1, 1000)});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t < b.t; });
  // Disorder: most events are a little late, some very late (beyond retention).
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    if (r.Chance(0.3)) std::swap(events[i], events[std::min(events.size() - 1, i + r.Below(50))]);
  }
  for (int k = 0; k < 40; ++k) {
    events.insert(events.begin() + static_cast<ptrdiff_t>(r.Below(events.size())),
                  {start - r.Between(0, 3) * kDay, static_cast<int>(r.Below(20)), 7});
  }
  return events;
}

// The hour of a bucket: a 64-bit division where bucket × width fits in 64 bits, 128-bit
// beyond; the same floor either way, on both sides of the epoch and at the overflow's edge.
TEST(Windows, HourOfBucketIsTheFloorOfTheBucketsStartEverywhere) {
  auto reference = [](int64_t bucket, int64_t width) {
    const Int128 ms = static_cast<Int128>(bucket) * width;
    Int128 q = ms / kHour;
    if (ms % kHour != 0 && ms < 0) --q;
    return static_cast<int64_t>(q);
  };
  std::mt19937_64 rng(7);
  for (int64_t width : {int64_t{1}, int64_t{1000}, kMinute, 5 * kMinute, kHour, 7 * kDay}) {
    const int64_t edge = INT64_MAX / width;  // the largest bucket whose start fits in 64 bits
    const int64_t past = edge == INT64_MAX ? edge : edge + 1;
    for (int64_t b : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{59}, int64_t{60}, int64_t{-60},
                      int64_t{-61}, edge, past, -edge, -past, INT64_MAX, INT64_MIN}) {
      EXPECT_EQ(HourOfBucket(b, width), reference(b, width)) << b << " x " << width;
    }
    for (int i = 0; i < 10'000; ++i) {
      const auto b = static_cast<int64_t>(rng());
      const int64_t near = static_cast<int64_t>(rng() % 2'000'000) - 1'000'000;
      EXPECT_EQ(HourOfBucket(b, width), reference(b, width)) << b << " x " << width;
      EXPECT_EQ(HourOfBucket(near, width), reference(near, width)) << near << " x " << width;
    }
  }
}

// A window's range is made once (BucketRange::Of) and read for every series: its sums are
// those of a walk over every bucket, whatever the range's edges and the buckets' width.
TEST(Windows, SumsOverARangeAreThoseOfEveryBucketInIt) {
  std::mt19937_64 rng(11);
  for (int64_t width : {int64_t{1000}, kMinute, 7 * kMinute, kHour, 2 * kHour}) {
    for (int round = 0; round < 300; ++round) {
      // A series of random buckets around bucket 0 (negative ones too), grouped by hour.
      std::map<int64_t, Values> buckets;
      const int64_t spread = 1 + static_cast<int64_t>(rng() % 20'000) * kMinute / width;
      for (int i = static_cast<int>(rng() % 40); i > 0; --i) {
        const int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * spread + 1)) - spread;
        for (int64_t& v : buckets[b]) v += static_cast<int64_t>(rng() % 1000);
      }
      SeriesData series;
      for (const auto& [b, v] : buckets) {
        const int64_t hour = HourOfBucket(b, width);
        if (series.hours.empty() || series.hours.back()->hour != hour) {
          series.hours.push_back(std::make_shared<HourChunk>());
          series.hours.back()->hour = hour;
        }
        HourChunk& c = *series.hours.back();
        c.PushBucket(b, v);
      }
      series.Retotal();
      for (int q = 0; q < 20; ++q) {
        const int64_t from = static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * spread + 3)) - spread - 1;
        const int64_t to =
            from + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread + 1)) - spread / 8;
        Values naive{};
        for (const auto& [b, v] : buckets) {
          if (b >= from && b <= to) {
            for (size_t i = 0; i < kMaxValues; ++i) naive[i] += v[i];
          }
        }
        EXPECT_EQ(SumBuckets(series, BucketRange::Of(from, to, width)), naive)
            << "width " << width << " [" << from << ", " << to << "]";
        EXPECT_EQ(SumBuckets(series, from, to, width), naive);
      }
    }
  }
}

TEST(Windows, RollingSumsAreExactWithDisorderAndLateEvents) {
  AggregateOptions o;
  o.bucket_ms = kMinute;
  o.windows_ms = {kHour, kDay, 7 * kDay};
  o.retention_ms = 8 * kDay;
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    const int64_t start = 1'795'000'000'000;
    std::vector<Event> arrivals = RandomArrivals(seed, start, 10 * kDay, 20'000);
    ShardState state(o, &Sym());
    for (const Event& ev : arrivals) state.Apply(MakeDelta(ev));
    auto snap = Merged(state, o);
    Expected expected = Naive(arrivals, snap->spans_ms, o.retention_ms);
    SCOPED_TRACE(seed);
    EXPECT_EQ(snap->spans_ms.size(), 6u);
    EXPECT_EQ(state.counters().late_dropped, expected.late);
    EXPECT_GT(expected.late, 0u);
    // Totals and every span (1h, 2h, 24h, 48h, 7d, 8d) for every series.
    for (const SeriesData* series : snap->table(Table::kHangs)) {
      const int id = SeriesId(*series);
      EXPECT_EQ(series->total()[0], expected.total[id]) << id;
      for (size_t i = 0; i < snap->spans_ms.size(); ++i) {
        EXPECT_EQ(snap->Span(*series, i)[0], expected.spans[snap->spans_ms[i]][id]) << "span " << snap->spans_ms[i];
      }
    }
  }
}

TEST(Windows, AdvancingStreamTimeAloneExpiresWindowsAndRetention) {
  AggregateOptions o;
  o.bucket_ms = kMinute;
  o.windows_ms = {kHour};
  o.retention_ms = 2 * kHour;
  ShardState state(o, &Sym());
  const int64_t t0 = 1'795'000'000'000 - 1'795'000'000'000 % kMinute;
  state.Apply(MakeDelta({t0, 1, 10}));
  state.Apply(MakeDelta({t0 + 30 * kMinute, 1, 5}));
  auto at = [&](int64_t t) {
    state.AdvanceTo(EventTime{t});
    auto snap = Merged(state, o);
    const auto& table = snap->table(Table::kHangs);
    if (table.empty()) return std::pair<int64_t, int64_t>{0, 0};
    const SeriesData& s = *table.front();
    return std::pair<int64_t, int64_t>{snap->Span(s, *snap->SpanIndex(kHour))[0], s.total()[0]};
  };
  EXPECT_EQ(at(t0 + 59 * kMinute), (std::pair<int64_t, int64_t>{15, 15}));  // both within the hour
  EXPECT_EQ(at(t0 + 60 * kMinute), (std::pair<int64_t, int64_t>{5, 15}));   // first bucket left the hour
  EXPECT_EQ(at(t0 + 90 * kMinute), (std::pair<int64_t, int64_t>{0, 15}));
  EXPECT_EQ(at(t0 + 120 * kMinute), (std::pair<int64_t, int64_t>{0, 5}));   // first bucket past retention
  EXPECT_EQ(at(t0 + 150 * kMinute), (std::pair<int64_t, int64_t>{0, 0}));   // series released
  EXPECT_EQ(state.series_count(), 0u);
  state.Apply(MakeDelta({t0, 1, 99}));  // far too old now
  EXPECT_EQ(state.counters().late_dropped, 1u);
}

TEST(Windows, SnapshotPointsCoverTheLongestWindowPerBucket) {
  AggregateOptions o;
  o.bucket_ms = kMinute;
  o.windows_ms = {kHour};
  o.retention_ms = kDay;
  ShardState state(o, &Sym());
  const int64_t t0 = 1'795'000'000'000 - 1'795'000'000'000 % kMinute;
  for (int m = 0; m < 90; ++m) state.Apply(MakeDelta({t0 + m * kMinute + 5, 1, m}));
  auto snap = Merged(state, o);
  ASSERT_EQ(snap->table(Table::kHangs).size(), 1u);
  const auto points = snap->Points(*snap->table(Table::kHangs)[0]);
  ASSERT_EQ(points.size(), 60u);
  EXPECT_EQ(points.front().bucket, Bucket(t0) + 30);
  EXPECT_EQ(points.front().v[0], 30);
  EXPECT_EQ(points.back().v[0], 89);
}

// Each table's latest event time travels with the snapshot (the latest over shards), so
// rules can tell how far each input has arrived; a table without data says so.
TEST(Windows, SnapshotsCarryTheLatestEventTimeOfEachTable) {
  AggregateOptions o;
  ShardState a(o, &Sym()), b(o, &Sym());
  const int64_t t0 = 1'795'000'000'000;
  a.Apply(MakeDelta({t0 + 7 * kMinute, 1, 1}));
  a.Apply(MakeDelta({t0 + 2 * kMinute, 2, 1}));  // out of order: the latest stays
  b.Apply(test::MakeDelta(Sym(), Table::kBuildUsage, {"nightly", "Firefox", "147.0a1", "20261101000000", "Linux"},
                          t0 + 3 * kMinute));
  b.Apply(MakeDelta({t0 + 5 * kMinute, 3, 1}));
  auto merged = MergeSnapshots({a.Snapshot(), b.Snapshot()}, Sym(), o.bucket_ms, o.windows_ms, o.retention_ms);
  EXPECT_EQ(merged->table_time_ms[static_cast<size_t>(Table::kHangs)], t0 + 7 * kMinute);
  EXPECT_EQ(merged->table_time_ms[static_cast<size_t>(Table::kBuildUsage)], t0 + 3 * kMinute);
  EXPECT_EQ(merged->table_time_ms[static_cast<size_t>(Table::kCrashes)], INT64_MIN);
  EXPECT_EQ(merged->stream_time_ms, t0 + 7 * kMinute);
}

TEST(Cardinality, MillionDistinctStacksStayExactInTotalAndTopWithinMemory) {
  AggregateOptions o;
  o.max_series = 2000;
  o.memory_limit = 64ull << 20;
  ShardState state(o, &Sym());
  Rng r(9);
  int64_t sum = 0;
  std::map<int, int64_t> heavy;
  const int64_t t = 1'795'000'000'000;
  const int stacks = static_cast<int>(test::Scaled(1'000'000, 10));  // a million when optimised
  for (int i = 0; i < stacks; ++i) {
    Event e;
    if (i % 50 == 0) {
      e = {t, -1 - static_cast<int>(r.Below(10)), 1000};  // ten heavy hitters
      heavy[e.series] += e.value;
    } else {
      e = {t, i, r.Between(1, 10)};  // a new distinct stack every time
    }
    sum += e.value;
    state.Apply(MakeDelta(e));
    ASSERT_LE(state.series_count(), o.max_series + 2);
  }
  int64_t seen = 0;
  std::vector<std::pair<int64_t, const SeriesData*>> ranked;
  const SeriesKey other = OtherKey(MakeDelta({t, 1, 1}).key, Sym());
  bool has_other = false;
  state.ForEach(Table::kHangs, [&](const SeriesData& s) {
    seen += s.total()[0];
    if (s.key == other) {
      has_other = true;
    } else {
      ranked.push_back({s.total()[0], &s});
    }
  });
  EXPECT_EQ(seen, sum);  // folding never loses a count
  EXPECT_GT(state.counters().folded, static_cast<uint64_t>(stacks) * 9 / 10);
  ASSERT_TRUE(has_other);
  // The ten heavy stacks are still their own series, with exact values, and on top.
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < 10; ++i) {
    const int id = SeriesId(*ranked[i].second);
    ASSERT_LT(id, 0);
    EXPECT_EQ(ranked[i].first, heavy[id]);
  }
  EXPECT_LT(state.MemoryBytes(), o.memory_limit);
}

}  // namespace
}  // namespace seismo

namespace seismo {
namespace {

TEST(Windows, SnapshotKeepsHourlyPointsForTheRetentionAndFirstSeen) {
  AggregateOptions o;
  o.bucket_ms = kMinute;
  o.windows_ms = {kHour};
  o.retention_ms = 3 * kDay;
  ShardState state(o, &Sym());
  const int64_t t0 = 1'795'000'000'000 - 1'795'000'000'000 % kHour;
  for (int h = 0; h < 50; ++h) {
    state.Apply(MakeDelta({t0 + h * kHour + 5, 1, 10}));
    state.Apply(MakeDelta({t0 + h * kHour + 30 * kMinute, 1, 1}));
  }
  auto snap = Merged(state, o);
  const SeriesData& s = *snap->table(Table::kHangs).front();
  EXPECT_EQ(s.first_ms, t0 + 5);
  const auto hourly = HourlyOf(s);
  ASSERT_EQ(hourly.size(), 50u);
  EXPECT_EQ(hourly.front().bucket, t0 / kHour);
  EXPECT_EQ(hourly.front().v[0], 11);
  EXPECT_EQ(hourly.front().v[1], 2);
  // Hourly points carry every value: build usage's sub-process crash counts too.
  Delta build = test::MakeDelta(Sym(), Table::kBuildUsage, {"nightly", "Firefox", "147.0a1", "20261101093000", "Linux"},
                                t0 + 49 * kHour + 10 * kMinute, {3'600'000, 1, 3, 1, 2});
  state.Apply(build);
  state.Apply(build);
  const auto with_build = Merged(state, o);
  const HourPoint hour = HourlyOf(*with_build->table(Table::kBuildUsage).front()).back();
  EXPECT_EQ(hour.bucket, t0 / kHour + 49);
  EXPECT_EQ(hour.v, (std::array<int64_t, kMaxValues>{7'200'000, 2, 6, 2, 4}));
  EXPECT_EQ(snap->Points(s).size(), 2u);  // the last hour, per minute bucket
  // Once the first hours expire, first_ms moves to the oldest retained bucket.
  state.AdvanceTo(EventTime{t0 + 3 * kDay + 2 * kHour});
  auto later = Merged(state, o);
  // Retention 3 d at stream time t0 + 3 d + 2 h: buckets up to t0 + 2 h are gone.
  EXPECT_EQ(later->table(Table::kHangs).front()->first_ms, t0 + 2 * kHour + 30 * kMinute);
}

}  // namespace
}  // namespace seismo
