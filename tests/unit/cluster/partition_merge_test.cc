// A corpus aggregated per source partition, published as per-bucket records,
// decoded by another process and merged equals the corpus aggregated whole
// (SPEC §9: merging partitions is the exact merge of shards; ADR 0023, 0024).
// And what the records weigh per bucket on the generator's corpora (ADR 0023).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "seismo/cluster/partials.h"
#include "seismo/core/hash.h"
#include "seismo/parse/parser.h"
#include "seismo/sim/synth.h"
#include "support/keys.h"
#include "support/signatures.h"
#include "test_scale.h"
#include "unit/cluster/partitioned_corpus.h"

namespace seismo {
namespace {

using namespace partitioned;  // NOLINT(google-build-using-namespace): the corpus helpers

class PartitionMerge : public ::testing::TestWithParam<size_t> {};

// Parameter: the largest value a record may have (the default, and one that splits
// every bucket into parts).
TEST_P(PartitionMerge, PartitionsPublishedDecodedAndMergedEqualTheWholeCorpus) {
  const std::vector<std::string> docs = Corpus(SynthProfile::kDefault, test::Scaled(3000, 10, 300), 40);
  Symbols symbols;
  Parser parser({}, &test::DefaultSignatures());
  DeltaEncoder encoder(&symbols);
  ShardState whole(Options(), &symbols);
  std::vector<std::unique_ptr<ShardState>> partitions;
  for (int p = 0; p < kPartitions; ++p)
    partitions.push_back(std::make_unique<ShardState>(Options(), &symbols));
  for (const std::string& doc : docs) {
    Aggregate(doc, parser, encoder, whole);
    Aggregate(doc, parser, encoder, *partitions[static_cast<size_t>(PartitionOf(doc))]);
  }
  const Published published = Publish(partitions, symbols, GetParam());
  ASSERT_GT(published.buckets, test::kSanitized ? 20u : 100u);  // the corpus is Scaled() down under a sanitizer
  if (GetParam() < kMaxPartialBytes) {
    EXPECT_GT(published.records.size(), 2 * published.buckets);
    for (const auto& [key, value] : published.records) EXPECT_LE(value.size(), GetParam()) << key;
  }

  // Another process: its own symbols; records in any order (compaction keeps no order
  // between keys).
  Symbols reader;
  ShardState merged(Options(), &reader);
  std::vector<std::pair<std::string, std::string>> records = published.records;
  std::reverse(records.begin(), records.end());
  for (const auto& [key, value] : records) {
    RecordResult r = DecodeRecord(key, value, reader);
    ASSERT_TRUE(r.ok()) << key << ": " << r.detail();
    const auto& partial = std::get<PartialRecord>(r.value());
    EXPECT_EQ(partial.source_offset, 1000 + partial.where.partition);
    EXPECT_EQ(partial.owner, "node-a:8080");
    MergePartial(partial, merged);
  }

  const auto expected = Buckets(whole, symbols);
  EXPECT_EQ(Buckets(merged, reader), expected);
  EXPECT_GT(expected.size(), 1000u);
  for (size_t t = 0; t < kTableCount; ++t) {
    const auto a = test::Totals(whole, static_cast<Table>(t), symbols);
    const auto b = test::Totals(merged, static_cast<Table>(t), reader);
    ASSERT_EQ(a.size(), b.size()) << "table " << t;
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      ASSERT_EQ(ia->first, ib->first);
      EXPECT_EQ(ia->second.total, ib->second.total) << ia->first;
      EXPECT_EQ(ia->second.first_ms, ib->second.first_ms) << ia->first;
      EXPECT_EQ(ia->second.installs.Estimate(), ib->second.installs.Estimate()) << ia->first;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(MaxValueBytes, PartitionMerge, ::testing::Values(kMaxPartialBytes, size_t{6000}));

TEST(SplitIntoPartials, KeepsEveryEntryOnceInItsBucket) {
  Symbols symbols;
  SeriesImage s;
  s.key = test::Key(symbols, Table::kUsage, {"main", "release", "Linux", "20261101"});
  s.first_ms = 5;
  s.entries = {{10, {1, 1}, {}}, {12, {2, 1}, {}}};
  SeriesImage t = s;
  t.key = test::Key(symbols, Table::kUsage, {"main", "beta", "Linux", "20261101"});
  t.entries = {{12, {4, 2}, {}}};
  const std::vector<SeriesImage> series = {s, t};
  const auto partials = SplitIntoPartials(series, {"topic", 2, 999, 5}, kMinute, 77, 1000, "me", symbols);
  ASSERT_EQ(partials.size(), 2u);
  EXPECT_EQ(partials[0].where, (PartitionBucket{"topic", 2, 10, 0}));
  EXPECT_EQ(partials[0].parts, 1u);
  EXPECT_EQ(partials[0].series.size(), 1u);
  EXPECT_EQ(partials[1].where, (PartitionBucket{"topic", 2, 12, 0}));
  ASSERT_EQ(partials[1].series.size(), 2u);
  // Ordered by content hash, whatever the input's order.
  const bool t_first = KeyContentHash(t.key, symbols) < KeyContentHash(s.key, symbols);
  const SeriesImage& s12 = partials[1].series[t_first ? 1 : 0];
  const SeriesImage& t12 = partials[1].series[t_first ? 0 : 1];
  EXPECT_EQ(s12.key, s.key);
  EXPECT_EQ(t12.entries[0].v[0], 4);
  EXPECT_EQ(partials[1].source_offset, 77);
  EXPECT_EQ(partials[1].owner, "me");
  EXPECT_EQ(s12.first_ms, 5);
  const std::vector<SeriesImage> reversed = {t, s};
  EXPECT_EQ(
      EncodePartial(SplitIntoPartials(reversed, {"topic", 2, 0, 0}, kMinute, 77, 1000, "me", symbols)[1],
                    symbols),
      EncodePartial(partials[1], symbols))
      << "one encoding whatever the order of the state's series";
}

// ADR 0023's numbers: one partition's record per bucket on the generator's corpora,
// at a few densities. Every record stays within kMaxPartialBytes, half of Kafka's
// default max.message.bytes (1 048 588: a larger record is refused by the broker).
TEST(RecordSize, PerBucketOnTheGeneratorsCorpora) {
  struct Case {
    const char* name;
    SynthProfile profile;
    int64_t per_bucket;  // documents of each kind per minute (all partitions)
  };
  // Two minutes of each (a record is one minute); under a sanitizer the small cases only.
  const size_t minutes = test::kSanitized ? 1 : 2;
  for (const Case c :
       {Case{"default", SynthProfile::kDefault, 300}, Case{"default", SynthProfile::kDefault, 3000},
        Case{"dense", SynthProfile::kDense, 300}, Case{"dense", SynthProfile::kDense, 3000},
        Case{"dense", SynthProfile::kDense, 12000}}) {
    if (test::kSanitized && c.per_bucket > 300) continue;
    const std::vector<std::string> docs =
        Corpus(c.profile, static_cast<size_t>(c.per_bucket) * minutes, c.per_bucket);
    Symbols symbols;
    Parser parser({}, &test::DefaultSignatures());
    DeltaEncoder encoder(&symbols);
    std::vector<std::unique_ptr<ShardState>> partitions;
    for (int p = 0; p < kPartitions; ++p)
      partitions.push_back(std::make_unique<ShardState>(Options(), &symbols));
    size_t doc_bytes = 0;
    for (const std::string& doc : docs) {
      doc_bytes += doc.size();
      Aggregate(doc, parser, encoder, *partitions[static_cast<size_t>(PartitionOf(doc))]);
    }
    const Published published = Publish(partitions, symbols);
    size_t total = 0, largest = 0, series = 0;
    Symbols reader;
    // The bucket as one record (no parts): what a bucket weighs.
    const Published whole = Publish(partitions, symbols, SIZE_MAX);
    size_t whole_largest = 0;
    for (const auto& [key, value] : whole.records) whole_largest = std::max(whole_largest, value.size());
    for (const auto& [key, value] : published.records) {
      total += key.size() + value.size();
      largest = std::max(largest, value.size());
      RecordResult r = DecodeRecord(key, value, reader);
      ASSERT_TRUE(r.ok());
      series += std::get<PartialRecord>(r.value()).series.size();
    }
    EXPECT_LE(largest, kMaxPartialBytes) << c.name;
    std::printf(
        "record size: %-7s %5lld docs/kind/min  %3zu buckets %4zu records  per bucket: mean %7zu B, largest "
        "%7zu B, %6.1f series  %5.1f B/series  largest record %6zu B  input %5.1f MB\n",
        c.name, static_cast<long long>(c.per_bucket), published.buckets, published.records.size(),
        total / published.buckets, whole_largest,
        static_cast<double>(series) / static_cast<double>(published.buckets),
        static_cast<double>(total) / static_cast<double>(series), largest,
        static_cast<double>(doc_bytes) / 1e6);
  }
}

}  // namespace
}  // namespace seismo
