// The generator's corpus aggregated per source partition and published as aggregates
// records: what the cluster stage's tests start from (ADR 0023, 0024).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seismo/cluster/partials.h"
#include "seismo/core/hash.h"
#include "seismo/parse/parser.h"
#include "seismo/sim/synth.h"
#include "support/keys.h"

namespace seismo::partitioned {

inline constexpr int64_t kMinute = 60'000;
inline constexpr int kPartitions = 3;

inline AggregateOptions Options() {
  AggregateOptions o;
  o.bucket_ms = kMinute;
  o.retention_ms = 365 * 86'400'000LL;  // nothing late: each partition has its own stream time
  return o;
}

// Main, bhr and crash documents of the generator (`seismo generate --kind ...`),
// `per_bucket` documents of each kind per minute.
inline std::vector<std::string> Corpus(SynthProfile profile, size_t n, int64_t per_bucket) {
  SynthOptions o;
  o.seed = 18;
  o.profile = profile;
  o.spacing_ms = std::max<int64_t>(1, kMinute / per_bucket);
  Synth synth(o);
  std::vector<std::string> docs;
  for (size_t i = 0; i < n; ++i) {
    docs.push_back(synth.Main(i));
    docs.push_back(synth.Bhr(i));
    if (i % 4 == 0) docs.push_back(i % 8 == 0 ? synth.ProcessedCrash(i / 4) : synth.CrashPing(i / 4));
  }
  return docs;
}

// The partition a producer keyed by content would send a document to (copies of a
// document meet in one partition, as its crash id's memory requires: ADR 0024).
inline int PartitionOf(const std::string& doc) { return static_cast<int>(Hash64(doc) % kPartitions); }

inline void Aggregate(const std::string& doc, Parser& parser, DeltaEncoder& encoder, ShardState& state) {
  auto parsed = parser.Parse(doc);
  if (!parsed.ok()) return;
  const std::optional<EventTime> t = ResolveEventTime(parsed.value(), std::nullopt);
  if (!t) return;
  std::vector<Delta> deltas;
  encoder.Encode(parsed.value(), *t, deltas);
  for (const Delta& d : deltas) state.Apply(d);
}

// Every (series, bucket) value of a state, by text.
inline std::map<std::string, Values> Buckets(const ShardState& state, const Symbols& symbols) {
  std::map<std::string, Values> out;
  const ShardImage image = state.Image();
  for (const SeriesImage& s : image.series) {
    for (const SeriesImage::Entry& e : s.entries) {
      out[test::KeyText(s.key, symbols) + "@" + std::to_string(e.bucket)] = e.v;
    }
  }
  return out;
}

struct Published {
  std::vector<std::pair<std::string, std::string>> records;  // key, value: the partials
  // Per partition, its counts record, which a publish sends last and a reader takes the
  // publish whole at (GlobalView).
  std::vector<std::pair<std::string, std::string>> closing;
  size_t buckets = 0;
};

// Each partition's state split into per-bucket partials and encoded, and its counts record.
inline Published Publish(const std::vector<std::unique_ptr<ShardState>>& partitions, const Symbols& symbols,
                         size_t max_value_bytes = kMaxPartialBytes) {
  Published out;
  for (int p = 0; p < kPartitions; ++p) {
    const ShardImage image = partitions[static_cast<size_t>(p)]->Image();
    for (const PartialRecord& partial : SplitIntoPartials(image.series, {"telemetry.main", p, 0, 0}, kMinute,
                                                          /*source_offset=*/1000 + p, image.stream_time_ms,
                                                          "node-a:8080", symbols, max_value_bytes)) {
      out.records.emplace_back(PartialKey(partial.where), EncodePartial(partial, symbols));
      out.buckets += partial.where.part == 0;
    }
    CountsRecord counts{"telemetry.main", p, /*source_offset=*/1000 + p, "node-a:8080", {}};
    counts.counts.shards = image.counters;
    out.closing.emplace_back(CountsKey("telemetry.main", p), EncodeCounts(counts));
  }
  return out;
}

// Every table's totals of a snapshot, against a state's.
inline void ExpectTotals(const Snapshot& view, const ShardState& state, const Symbols& symbols) {
  for (size_t t = 0; t < kTableCount; ++t) {
    SCOPED_TRACE(testing::Message() << "table " << t);
    const auto a = test::Totals(state, static_cast<Table>(t), symbols);
    const auto b = test::Totals(view, static_cast<Table>(t));
    ASSERT_EQ(a.size(), b.size());
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      ASSERT_EQ(ia->first, ib->first);
      EXPECT_EQ(ia->second.total, ib->second.total) << ia->first;
      EXPECT_EQ(ia->second.first_ms, ib->second.first_ms) << ia->first;
      EXPECT_EQ(ia->second.installs.Estimate(), ib->second.installs.Estimate()) << ia->first;
    }
  }
}

}  // namespace seismo::partitioned
