// Rolling windows through the real pipeline (parse workers, rings, shard
// threads) against a naive recomputation: random documents of every kind
// arrive out of order, some very late (beyond the retention), some stamped days
// ahead (future_time), some without a document timestamp (Kafka timestamp or
// creationDate), some twice (crash de-duplication). Every window sum of every
// series of every table, the set of series and every counter must equal the
// model's, whatever the number of threads and whatever the wall clock says.
//
// The model: documents go through one Watermarks (tested on its own against
// hand-worked cases) in arrival order, a chunk at a time; a document decided in
// chunk k is judged against the stream time chunk k leaves: late when its
// bucket is at or before that stream time - retention, else counted once per
// crash id; at the end (every source ends) a window W holds the kept events
// whose bucket lies within the last W of the final stream time, and totals
// those within the retention.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "seismo/sim/synth.h"
#include "seismo/shard/pipeline.h"
#include "seismo/shard/watermarks.h"
#include "seismo/signature/generator.h"
#include "support/keys.h"
#include "test_clock.h"
#include "test_scale.h"

namespace seismo {
namespace {

constexpr int64_t kMinute = 60'000, kHour = 3'600'000, kDay = 86'400'000;
constexpr int64_t kSkew = 10 * kMinute;
constexpr int64_t kRetention = 8 * kDay;
constexpr int64_t kStart = 1'795'000'000'000 - 1'795'000'000'000 % kMinute;

const SignatureGenerator& Signatures() {
  static std::unique_ptr<SignatureGenerator> gen = std::move(SignatureGenerator::LoadDefault()).value();
  return *gen;
}

struct Arrival {
  std::string doc;
  std::optional<EventTime> transport_time;  // the Kafka timestamp, when the transport has one
};

// One arrival order: documents of every kind at nominal times spread over ten
// days, locally shuffled, with very late, far-future, timestamp-less and
// repeated documents mixed in. Chunks are consecutive runs of it.
struct Stream {
  std::vector<Arrival> arrivals;
  std::vector<size_t> chunk_ends;  // arrivals[chunk_ends[k-1], chunk_ends[k]) is chunk k
  std::vector<int64_t> clock_at;   // the wall clock while chunk k is parsed
};

std::string Without(std::string doc, const std::string& key) {
  // Drops `"key":"value",` (Synth writes these members as strings, each followed by another).
  size_t at = doc.find("\"" + key + "\":\"");
  if (at == std::string::npos) return doc;
  size_t end = doc.find('"', at + key.size() + 4);
  doc.erase(at, end + 2 - at);
  return doc;
}

Stream MakeStream(uint64_t seed, size_t n) {
  SynthOptions so;
  so.seed = seed;
  so.start = EventTime{kStart};
  so.spacing_ms = 10 * kDay / static_cast<int64_t>(n);
  Synth synth(so);
  Rng r(seed * 7919 + 1);
  struct Item {
    double position;  // sort key: where it arrives
    Arrival arrival;
    int64_t clock;  // the wall clock is at least this once it has arrived (INT64_MIN: no bound)
  };
  std::vector<Item> items;
  for (size_t i = 0; i < n; ++i) {
    std::string doc;
    switch (r.Below(4)) {
      case 0:
        doc = synth.Main(i);
        break;
      case 1:
        doc = synth.Bhr(i);
        break;
      case 2:
        doc = synth.ProcessedCrash(i);
        break;
      default:
        doc = synth.CrashPing(i);
        break;
    }
    const int64_t nominal = kStart + static_cast<int64_t>(i) * so.spacing_ms;
    // Local disorder within max_clock_skew (a few minutes: documents are 216 s apart at
    // full scale); further disorder comes from the moves below and the Kafka timestamps.
    double position = static_cast<double>(i) + r.Uniform() * 2.5;
    int64_t clock = nominal;
    if (r.Chance(0.04))
      position += static_cast<double>(n) * (0.1 + 0.6 * r.Uniform());     // late, within retention
    if (i < n / 8 && r.Chance(0.15)) position += static_cast<double>(n);  // after the rest: beyond retention
    if (r.Chance(0.03)) {
      position -= static_cast<double>(n) * (0.05 + 0.3 * r.Uniform());  // stamped in the future
      clock = INT64_MIN;
    }
    Arrival a{doc, std::nullopt};
    if (r.Chance(0.05) && doc.find("\"submission_timestamp\"") != std::string::npos) {
      a.doc = Without(doc, "submission_timestamp");  // falls back to the Kafka timestamp or creationDate
      if (r.Chance(0.5)) a.transport_time = EventTime{nominal + r.Between(-kHour, kHour)};
    }
    items.push_back({position, a, clock});
    if (r.Chance(0.02)) items.push_back({position + r.Between(1, 30), a, clock});  // delivered twice
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.position < b.position; });
  Stream s;
  for (Item& it : items) s.arrivals.push_back(std::move(it.arrival));
  // Chunks of 1..40 documents; the wall clock follows the arrivals (a little ahead of the
  // latest nominal time of the documents arrived), so far-future ones are future_time
  // for a live source too.
  int64_t clock = kStart;
  for (size_t end = 0; end < s.arrivals.size();) {
    const size_t begin = end;
    end = std::min(s.arrivals.size(), end + static_cast<size_t>(r.Between(1, 40)));
    for (size_t i = begin; i < end; ++i) clock = std::max(clock, items[i].clock);
    s.chunk_ends.push_back(end);
    s.clock_at.push_back(clock + r.Between(0, 5 * kMinute));
  }
  return s;
}

// The naive model's result: per (table, key), the total and every span's values.
struct SeriesModel {
  std::array<int64_t, kMaxValues> total{};
  std::map<int64_t, std::array<int64_t, kMaxValues>> spans;
};
struct Model {
  std::map<std::pair<Table, std::string>, SeriesModel> series;
  int64_t stream_time = INT64_MIN;
  uint64_t late = 0, duplicates = 0;
  uint64_t future = 0;  // documents rejected as future_time
};

int64_t BucketOf(int64_t ms, int64_t bucket) {
  return ms >= 0 ? ms / bucket : -((-ms + bucket - 1) / bucket);
}

// `live`: the source is live and the clock moves per chunk (else an archive, and the
// clock does not matter).
Model Naive(const Stream& s, const std::vector<int64_t>& spans_ms, int64_t bucket, bool live) {
  Parser parser({}, &Signatures());
  Watermarks watermarks(kSkew);
  std::map<uint64_t, std::vector<Delta>> waiting;  // parsed documents by arrival index, until decided
  Symbols symbols;  // the model's own: keys are compared by their texts
  DeltaEncoder encoder(&symbols);
  std::vector<Delta> kept;
  std::set<uint64_t> seen_docs;
  Model m;
  // One turn: `arrive` feeds the chunk's documents, then the decisions are judged
  // against the stream time the turn leaves.
  auto turn = [&](auto&& arrive) {
    std::vector<TimeDecision> decided;
    arrive(decided);
    watermarks.Advance();
    const int64_t stream_time = watermarks.stream_time();
    for (const TimeDecision& d : decided) {
      std::vector<Delta> deltas = std::move(waiting.at(d.id));
      waiting.erase(d.id);
      if (!d.accepted) {
        ++m.future;
        continue;
      }
      for (Delta& delta : deltas) {
        delta.time = EventTime{d.time_ms};
        if (BucketOf(delta.time.ms, bucket) <= BucketOf(stream_time, bucket) - kRetention / bucket) {
          ++m.late;
          continue;
        }
        if (delta.table() == Table::kCrashes && delta.doc_hash != 0 &&
            !seen_docs.insert(delta.doc_hash).second) {
          ++m.duplicates;
          continue;
        }
        kept.push_back(std::move(delta));
      }
    }
  };
  size_t begin = 0;
  for (size_t k = 0; k < s.chunk_ends.size(); ++k) {
    turn([&](std::vector<TimeDecision>& decided) {
      for (size_t i = begin; i < s.chunk_ends[k]; ++i) {
        auto parsed = parser.Parse(s.arrivals[i].doc);
        if (!parsed.ok()) continue;
        std::optional<EventTime> t = ResolveEventTime(parsed.value(), s.arrivals[i].transport_time);
        encoder.Encode(parsed.value(), EventTime{0}, waiting[i]);  // a document may have no deltas
        watermarks.Add(i, SourceKey{0, -1}, t ? std::optional<int64_t>(t->ms) : std::nullopt, live,
                       s.clock_at[k], decided);
      }
    });
    begin = s.chunk_ends[k];
  }
  turn([&](std::vector<TimeDecision>& decided) { watermarks.EndInput(s.clock_at.back(), decided); });
  m.stream_time = watermarks.stream_time();
  const int64_t last = BucketOf(m.stream_time, bucket);
  for (const Delta& d : kept) {
    const int64_t b = BucketOf(d.time.ms, bucket);
    if (b <= last - kRetention / bucket) continue;  // expired by the end
    SeriesModel& sm = m.series[{d.table(), test::KeyText(d.key, symbols)}];
    for (size_t v = 0; v < kMaxValues; ++v) sm.total[v] += d.values[v];
    for (int64_t w : spans_ms) {
      auto& span = sm.spans[w];
      if (b >= last - w / bucket + 1) {
        for (size_t v = 0; v < kMaxValues; ++v) span[v] += d.values[v];
      }
    }
  }
  return m;
}

PipelineOptions Options(size_t threads, size_t shards, bool live = false) {
  PipelineOptions o;
  o.parse_threads = threads;
  o.shards = shards;
  o.chunk_ring_capacity = 4;
  o.delta_ring_capacity = 4;
  o.max_clock_skew_ms = kSkew;
  o.aggregate.bucket_ms = kMinute;
  o.aggregate.windows_ms = {kHour, kDay, 7 * kDay};
  o.aggregate.retention_ms = kRetention;
  o.aggregate.max_series = 1'000'000;  // folding is tested elsewhere
  o.sources = {{"test", std::nullopt, live}};
  return o;
}

DocChunkPtr Chunk(const Stream& s, size_t begin, size_t end) {
  auto chunk = std::make_unique<DocChunk>();
  for (size_t i = begin; i < end; ++i) {
    DocRef ref;
    ref.begin = static_cast<uint32_t>(chunk->data.size());
    ref.length = static_cast<uint32_t>(s.arrivals[i].doc.size());
    ref.position = static_cast<int64_t>(i);
    ref.transport_time = s.arrivals[i].transport_time;
    chunk->data += s.arrivals[i].doc;
    chunk->docs.push_back(ref);
  }
  return chunk;
}

void ExpectEqual(const Model& model, const Snapshot& snap, const PipelineCounters& counters) {
  EXPECT_EQ(snap.stream_time_ms, model.stream_time);
  EXPECT_EQ(snap.counters.late_dropped, model.late);
  EXPECT_EQ(snap.counters.duplicates, model.duplicates);
  EXPECT_EQ(counters.rejected[static_cast<size_t>(RejectReason::kFutureTime)].load(), model.future);
  size_t series = 0;
  for (size_t t = 0; t < kTableCount; ++t) {
    const auto table = static_cast<Table>(t);
    for (const SeriesData* merged : snap.table(table)) {
      ++series;
      const std::string key = test::KeyText(merged->key, *snap.symbols);
      auto it = model.series.find({table, key});
      ASSERT_NE(it, model.series.end()) << "unexpected series in table " << t << ": " << key;
      for (size_t v = 0; v < kMaxValues; ++v) EXPECT_EQ(merged->total()[v], it->second.total[v]) << key;
      for (size_t i = 0; i < snap.spans_ms.size(); ++i) {
        const auto& span = it->second.spans.at(snap.spans_ms[i]);
        const Values got = snap.Span(*merged, i);
        for (size_t v = 0; v < kMaxValues; ++v) {
          EXPECT_EQ(got[v], span[v]) << key << " span " << snap.spans_ms[i] << " value " << v;
        }
      }
    }
  }
  EXPECT_EQ(series, model.series.size()) << "series the model has and the pipeline lacks";
}

// Chunks one at a time (each drained before the next arrives, while the clock moves on),
// as an archive (future_time against the watermark) and as a live source (against the
// clock): lateness, future_time and de-duplication follow the arrival order exactly.
TEST(PipelineWindows, EveryWindowOfEverySeriesIsExactWithDisorderLateFutureAndRepeatedDocuments) {
  for (bool live : {false, true}) {
    for (uint64_t seed : test::Seeds({1u, 2u, 3u})) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << (live ? ", live" : ", archive"));
      Stream stream = MakeStream(seed, test::Scaled(4000, 2));
      test::ManualClock clock(kStart);
      Symbols symbols;
      Pipeline p(Options(2, 3, live), &symbols, &Signatures(), nullptr, &clock);
      p.Start();
      size_t begin = 0;
      for (size_t k = 0; k < stream.chunk_ends.size(); ++k) {
        clock.AdvanceTo(stream.clock_at[k]);
        p.Submit(Chunk(stream, begin, stream.chunk_ends[k]));
        ASSERT_TRUE(p.WaitIdle(std::chrono::seconds(30)));
        begin = stream.chunk_ends[k];
      }
      p.Finish();
      auto snap = p.FinalSnapshot();
      Model model = Naive(stream, snap->spans_ms, kMinute, live);
      EXPECT_EQ(snap->spans_ms, (std::vector<int64_t>{kHour, 2 * kHour, kDay, 2 * kDay, 7 * kDay, 8 * kDay}));
      // The stream exercises what it claims to.
      EXPECT_GT(model.late, 50u);
      EXPECT_GT(model.duplicates, 5u);
      EXPECT_GT(model.future, 50u);
      for (size_t t = 0; t < kTableCount; ++t) EXPECT_GT(snap->table(static_cast<Table>(t)).size(), 10u) << "table " << t;
      ExpectEqual(model, *snap, p.counters());
    }
  }
}

// A chunk arrives whole: an event is late against the stream time its own chunk left,
// also on a shard that received nothing for a while (and so had not moved on yet).
TEST(PipelineWindows, LatenessIsJudgedAgainstTheWholeChunkOnEveryShard) {
  constexpr size_t kShards = 8;
  auto ping = [](int64_t t, const std::string& channel) {
    return R"({"type":"main","submission_timestamp":")" + FormatTimestamp(EventTime{t}) +
           R"(","application":{"buildId":"20261117090501","channel":")" + channel +
           R"("},"payload":{"info":{"subsessionLength":60}}})";
  };
  Symbols symbols;
  std::vector<Delta> deltas;  // of the last document given to shards_of
  auto shards_of = [&](const std::string& doc) {
    Parser parser({}, nullptr);
    auto parsed = parser.Parse(doc);
    EXPECT_TRUE(parsed.ok());
    std::set<size_t> out;
    DeltaEncoder encoder(&symbols);
    deltas.clear();
    encoder.Encode(parsed.value(), EventTime{0}, deltas);
    for (const Delta& d : deltas) out.insert(d.route_hash % kShards);
    return out;
  };
  const int64_t newest_at = kStart + 9 * kDay;
  const std::string newest = ping(newest_at, "nightly");
  // An old ping whose series live on shards the newest one does not touch.
  std::string old;
  for (int c = 0; old.empty(); ++c) {
    std::string candidate = ping(kStart + 12 * kHour, "c" + std::to_string(c));
    std::set<size_t> a = shards_of(newest), b = shards_of(candidate);
    if (std::none_of(b.begin(), b.end(), [&](size_t s) { return a.count(s) != 0; })) old = candidate;
  }
  test::ManualClock clock(kStart);
  Pipeline p(Options(1, kShards), &symbols, nullptr, nullptr, &clock);
  p.Start();
  Stream first;  // a first reference for stream time: seven pings of the first minutes
  for (int i = 0; i < 7; ++i) first.arrivals.push_back({ping(kStart + i * kMinute, "nightly"), std::nullopt});
  first.chunk_ends = {first.arrivals.size()};
  p.Submit(Chunk(first, 0, first.arrivals.size()));
  ASSERT_TRUE(p.WaitIdle(std::chrono::seconds(10)));
  // Nine days on: the newest ping and four after it (which confirm the jump), then the
  // old ping, in one chunk.
  Stream second;
  second.arrivals.push_back({newest, std::nullopt});
  for (int i = 1; i <= 4; ++i)
    second.arrivals.push_back({ping(newest_at + i * kMinute, "nightly"), std::nullopt});
  second.arrivals.push_back({old, std::nullopt});
  p.Submit(Chunk(second, 0, second.arrivals.size()));
  ASSERT_TRUE(p.WaitIdle(std::chrono::seconds(10)));
  p.Finish();
  auto snap = p.FinalSnapshot();
  // The old ping is 8.5 days behind the chunk's stream time: beyond the 8-day retention.
  // Every one of its deltas is late, whichever shard it went to.
  shards_of(old);
  EXPECT_EQ(snap->counters.late_dropped, deltas.size());
  EXPECT_EQ(snap->stream_time_ms, newest_at + 4 * kMinute);
}

// Free running (many chunks in flight, several workers and shards, full rings) with the
// wall clock anywhere, years before the data or years after: chunks are parsed in any
// order, yet what is late, future or a duplicate follows the input's order only, so
// every window and every counter is the model's.
TEST(PipelineWindows, EveryWindowAndCounterIsTheSameWhateverTheThreadsAndTheClock) {
  Stream stream = MakeStream(4, test::Scaled(4000, 2));
  const int64_t kYear = 365 * kDay;
  for (auto [threads, shards] : {std::pair<size_t, size_t>{1, 1}, {3, 2}, {2, 5}}) {
    for (int64_t clock_at : {kStart - 5 * kYear, kStart + 5 * kYear}) {
      SCOPED_TRACE(testing::Message() << threads << " workers, " << shards << " shards, clock "
                                      << FormatTimestamp(EventTime{clock_at}));
      test::ManualClock clock(kStart);
      clock.Set(clock_at);
      Symbols symbols;
      Pipeline p(Options(threads, shards), &symbols, &Signatures(), nullptr, &clock);
      p.Start();
      size_t begin = 0;
      for (size_t end : stream.chunk_ends) {
        p.Submit(Chunk(stream, begin, end));
        begin = end;
      }
      p.Finish();
      auto snap = p.FinalSnapshot();
      ExpectEqual(Naive(stream, snap->spans_ms, kMinute, /*live=*/false), *snap, p.counters());
    }
  }
}

}  // namespace
}  // namespace seismo
