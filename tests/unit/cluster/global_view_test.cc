// The global view (ADR 0024): the aggregates topic's records read back, in any order
// between keys, equal the corpus aggregated whole; a bad record is counted by reason,
// takes its key's partial out of the view and degrades its partition until the key is
// published again; a republished bucket in fewer parts counts once; a tombstone deletes.
#include "seismo/cluster/global_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/keys.h"
#include "support/signatures.h"
#include "unit/cluster/partitioned_corpus.h"

namespace seismo {
namespace {

using namespace partitioned;  // NOLINT(google-build-using-namespace): the corpus helpers

// The generator's corpus: each document in the partition its content hashes to, and the
// whole corpus in one state.
struct Fixture {
  Symbols symbols;
  std::unique_ptr<ShardState> whole;
  std::vector<std::unique_ptr<ShardState>> partitions;

  Fixture() {
    Parser parser({}, &test::DefaultSignatures());
    DeltaEncoder encoder(&symbols);
    whole = std::make_unique<ShardState>(Options(), &symbols);
    for (int p = 0; p < kPartitions; ++p)
      partitions.push_back(std::make_unique<ShardState>(Options(), &symbols));
    for (const std::string& doc : Corpus(SynthProfile::kDefault, 600, 40)) {
      Aggregate(doc, parser, encoder, *whole);
      Aggregate(doc, parser, encoder, *partitions[static_cast<size_t>(PartitionOf(doc))]);
    }
    published = Publish(partitions, symbols);
  }

  Published published;  // every partition's state as records
  Symbols reader;       // another process's, which reads them
};

// Partition p's counts record into the view: what it read of p's publish is taken.
void Close(GlobalView& view, const Published& published, int32_t p, int64_t record_time_ms) {
  const auto& [key, value] = published.closing.at(static_cast<size_t>(p));
  EXPECT_EQ(view.Apply(key, value, record_time_ms), std::nullopt) << key;
}

// Every record into the view, each one taken, then every partition's counts record.
void ReadAll(GlobalView& view, const Published& published, int64_t record_time_ms) {
  for (const auto& [key, value] : published.records) {
    EXPECT_EQ(view.Apply(key, value, record_time_ms), std::nullopt) << key;
  }
  for (int32_t p = 0; p < kPartitions; ++p) Close(view, published, p, record_time_ms);
}

TEST(GlobalView, RecordsOfEveryPartitionReadBackEqualTheWholeCorpus) {
  Fixture f;
  Published published = Publish(f.partitions, f.symbols);
  ASSERT_GT(published.buckets, 20u);
  std::reverse(published.records.begin(), published.records.end());  // no order between keys
  Symbols reader;                                                    // another process
  GlobalView view(Options(), &reader);
  for (const auto& [key, value] : published.records)
    EXPECT_EQ(view.Apply(key, value, 7), std::nullopt) << key;
  for (size_t t = 0; t < kTableCount; ++t)
    EXPECT_TRUE(test::Totals(*view.Build(), static_cast<Table>(t)).empty())
        << "no publish is whole before its counts record";
  for (int32_t p = 0; p < kPartitions; ++p) Close(view, published, p, 7);
  auto snapshot = view.Build();
  // The reader's texts name the same keys: compare by text.
  ExpectTotals(*snapshot, *f.whole, f.symbols);
  const auto status = view.Partitions();
  ASSERT_EQ(status.size(), static_cast<size_t>(kPartitions));
  for (const auto& s : status) {
    EXPECT_EQ(s.topic, "telemetry.main");
    EXPECT_EQ(s.owner, "node-a:8080");
    EXPECT_EQ(s.source_offset, 1000 + s.partition);
    EXPECT_EQ(s.latest_record_ms, 7);
    EXPECT_FALSE(s.degraded());
  }
}

TEST(GlobalView, ABadRecordIsCountedTakesItsKeysPartialOutAndDegradesItsPartition) {
  Fixture f;
  const Published& published = f.published;
  GlobalView view(Options(), &f.reader);
  ReadAll(view, published, 1);
  const auto& [key, good] = published.records[published.records.size() / 2];
  const std::optional<RecordKey> named = DecodeRecordKey(key);
  ASSERT_TRUE(named);

  // The same key again, broken three ways: each counted by its reason, and the key's
  // partial out of the view (the partition's other buckets stay).
  std::string corrupt = good;
  corrupt[corrupt.size() - 3] = static_cast<char>(corrupt[corrupt.size() - 3] ^ 0x10);
  std::string newer = good;
  newer[8] = 99;  // the format version
  const std::string truncated = good.substr(0, 20);
  for (const std::string& bad : {corrupt, newer, truncated}) {
    const std::optional<std::string> why = view.Apply(key, bad, 2);
    ASSERT_TRUE(why);
    EXPECT_EQ(why->rfind(key, 0), 0u) << *why;
  }
  EXPECT_EQ(view.rejected()[static_cast<size_t>(RecordReject::kCorrupt)], 1u);
  EXPECT_EQ(view.rejected()[static_cast<size_t>(RecordReject::kUnknownVersion)], 1u);
  EXPECT_EQ(view.rejected()[static_cast<size_t>(RecordReject::kTruncated)], 1u);
  for (const auto& s : view.Partitions()) {
    EXPECT_EQ(s.degraded(), s.partition == named->where.partition) << s.partition;
    EXPECT_EQ(s.rejected, s.partition == named->where.partition ? 3u : 0u);
  }
  // The view is the whole corpus without that bucket of that partition.
  ShardState without(Options(), &f.symbols);
  for (const auto& [k, v] : published.records) {
    if (k == key) continue;
    RecordResult r = DecodeRecord(k, v, f.symbols);
    ASSERT_TRUE(r.ok());
    MergePartial(std::get<PartialRecord>(r.value()), without);
  }
  ExpectTotals(*view.Build(), without, f.symbols);

  // The owner publishes the bucket again: the view is whole and the partition healthy.
  EXPECT_EQ(view.Apply(key, good, 3), std::nullopt);
  Close(view, published, named->where.partition, 3);
  ExpectTotals(*view.Build(), *f.whole, f.symbols);
  for (const auto& s : view.Partitions()) EXPECT_FALSE(s.degraded()) << s.partition;
}

// A reader that sees a publish before its transaction commits (the mock cluster's fetches
// end at the log's end): what it read of the publish is held until the counts record that
// closes it, so a view never has one publish's series beside the counts and offset of the
// one before.
TEST(GlobalView, AHalfReadPublishIsHeldUntilItsCountsRecord) {
  Fixture f;
  GlobalView view(Options(), &f.reader);
  ReadAll(view, f.published, 1);
  // The next publish of partition 0: every bucket of it gone, at offset 2000.
  for (const auto& [key, value] : f.published.records) {
    if (DecodeRecordKey(key)->where.partition == 0) ASSERT_EQ(view.Apply(key, std::nullopt, 2), std::nullopt);
  }
  auto offset_of_0 = [&] {
    for (const auto& s : view.Partitions())
      if (s.partition == 0) return std::pair{s.source_offset, s.buckets};
    return std::pair{int64_t{-1}, size_t{0}};
  };
  ExpectTotals(*view.Build(), *f.whole, f.symbols);
  EXPECT_EQ(offset_of_0().first, 1000);
  EXPECT_GT(offset_of_0().second, 0u);

  // A rejected record under a held key: the held one never counts, the partial goes.
  const std::string& first = f.published.records.front().first;
  ASSERT_EQ(DecodeRecordKey(first)->where.partition, 0);
  EXPECT_NE(view.Apply(first, std::string("not a record"), 2), std::nullopt);
  EXPECT_TRUE(view.Partitions().front().degraded());

  const CountsRecord closing{"telemetry.main", 0, 2000, "node-a:8080", {}};
  ASSERT_EQ(view.Apply(CountsKey("telemetry.main", 0), EncodeCounts(closing), 2), std::nullopt);
  EXPECT_EQ(offset_of_0(), (std::pair{int64_t{2000}, size_t{0}}));
  EXPECT_TRUE(view.Partitions().front().degraded()) << "its bad key stays bad until it is sent again";
  ShardState others(Options(), &f.symbols);
  for (const auto& [key, value] : f.published.records) {
    if (DecodeRecordKey(key)->where.partition == 0) continue;
    RecordResult r = DecodeRecord(key, value, f.symbols);
    MergePartial(std::get<PartialRecord>(r.value()), others);
  }
  ExpectTotals(*view.Build(), others, f.symbols);
}

TEST(GlobalView, ABucketRepublishedInFewerPartsCountsOnceAndATombstoneDeletesIt) {
  Fixture f;
  // First in many parts (small values), then in one part per bucket, with no tombstones
  // for the old parts yet: the newest record's part count decides.
  const Published many = Publish(f.partitions, f.symbols, 6000);
  const Published one = Publish(f.partitions, f.symbols);
  ASSERT_GT(many.records.size(), one.records.size());
  Symbols reader;
  GlobalView view(Options(), &reader);
  ReadAll(view, many, 1);
  ReadAll(view, one, 2);
  ExpectTotals(*view.Build(), *f.whole, f.symbols);

  // A tombstone per bucket of partition 0: the view is the other partitions.
  ShardState others(Options(), &f.symbols);
  for (const auto& [key, value] : one.records) {
    const std::optional<RecordKey> k = DecodeRecordKey(key);
    ASSERT_TRUE(k);
    if (k->where.partition == 0) {
      EXPECT_EQ(view.Apply(key, std::nullopt, 3), std::nullopt);
    } else {
      RecordResult r = DecodeRecord(key, value, f.symbols);
      MergePartial(std::get<PartialRecord>(r.value()), others);
    }
  }
  Close(view, one, 0, 3);
  ExpectTotals(*view.Build(), others, f.symbols);
  for (const auto& s : view.Partitions()) EXPECT_EQ(s.buckets == 0, s.partition == 0) << s.partition;
}

// A partial published with a clock ten years ahead, then published again right: the
// partition's stream time is that of the partials it holds, so nothing stays expired.
TEST(GlobalView, AReplacedPartialsStreamTimeNoLongerCounts) {
  Fixture f;
  const Published& published = f.published;
  GlobalView view(Options(), &f.reader);
  ReadAll(view, published, 1);
  const auto& [key, good] = published.records.front();
  RecordResult r = DecodeRecord(key, good, f.symbols);
  ASSERT_TRUE(r.ok());
  PartialRecord ahead = std::get<PartialRecord>(r.value());
  ahead.stream_time_ms += 10 * 365 * 86'400'000LL;
  ASSERT_EQ(view.Apply(key, EncodePartial(ahead, f.symbols), 2), std::nullopt);
  Close(view, published, ahead.where.partition, 2);
  (void)view.Build();
  EXPECT_EQ(view.Apply(key, good, 3), std::nullopt);
  Close(view, published, ahead.where.partition, 3);
  ExpectTotals(*view.Build(), *f.whole, f.symbols);
}

TEST(GlobalView, APartialOfAnotherBucketWidthIsNotTheViews) {
  Fixture f;
  const Published published = Publish(f.partitions, f.symbols);
  AggregateOptions five_minutes = Options();
  five_minutes.bucket_ms = 5 * kMinute;
  Symbols reader;
  GlobalView view(five_minutes, &reader);
  const auto& [key, value] = published.records.front();
  const std::optional<std::string> why = view.Apply(key, value, 1);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("key_mismatch"), std::string::npos) << *why;
  EXPECT_EQ(view.rejected()[static_cast<size_t>(RecordReject::kKeyMismatch)], 1u);
  EXPECT_TRUE(view.Partitions().front().degraded());
}

TEST(GlobalView, TheAlertStateIsKept) {
  Symbols reader;
  GlobalView view(Options(), &reader);
  EXPECT_FALSE(view.alert_state());
  EXPECT_EQ(view.Apply(AlertStateKey(), EncodeAlertState({"node-b:8080", 1234, "state"}), 1), std::nullopt);
  ASSERT_TRUE(view.alert_state());
  EXPECT_EQ(view.alert_state()->holder, "node-b:8080");
  EXPECT_EQ(view.alert_state()->evaluated_ms, 1234);
  EXPECT_TRUE(view.Partitions().empty());
}

}  // namespace
}  // namespace seismo

namespace seismo {
namespace {

using namespace partitioned;  // NOLINT(google-build-using-namespace): the corpus helpers

// A restore reads one partition's state out of the view (ADR 0024): its series, merged,
// are the partition's state, with the offset its partials include.
TEST(GlobalView, OnePartitionsStateComesBackForARestore) {
  Fixture f;
  GlobalView view(Options(), &f.symbols);
  ReadAll(view, f.published, 7);
  EXPECT_FALSE(view.StateOf("telemetry.main", kPartitions));
  const std::optional<GlobalView::PartitionState> one = view.StateOf("telemetry.main", 1);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status.source_offset, 1001);
  ShardState restored(Options(), &f.symbols);
  for (const SeriesImage& s : one->series) restored.RestoreSeries(s);
  EXPECT_EQ(Buckets(restored, f.symbols), Buckets(*f.partitions[1], f.symbols));
}

// Each partition's newest counts record is its counts (ADR 0024, "Counts"): the view's
// counts and snapshot counters are their sum; a rejected counts record takes the
// partition's counts out and degrades it until its owner publishes them again; a restore
// gets them back.
TEST(GlobalView, EachPartitionsNewestCountsAreSummedAndABadOneDegradesItsPartition) {
  Symbols reader;
  GlobalView view(Options(), &reader);
  auto counts = [](int32_t partition, int64_t offset, uint64_t main, uint64_t late) {
    CountsRecord c{"telemetry.main", partition, offset, "node-a:8080", {}};
    c.counts.records.by_kind = {main, 1, 2};
    c.counts.records.documents = main + 3;
    c.counts.shards.late_dropped = late;
    return c;
  };
  for (const CountsRecord& c : {counts(0, 10, 5, 1), counts(1, 20, 7, 0), counts(0, 30, 9, 2)})
    ASSERT_EQ(view.Apply(CountsKey(c.topic, c.partition), EncodeCounts(c), 1), std::nullopt);
  EXPECT_EQ(view.counts().by_kind, (std::array<uint64_t, 3>{16, 2, 4}));  // 9 (newest of 0) + 7
  EXPECT_EQ(view.Build()->counters.late_dropped, 2u);
  EXPECT_EQ(view.StateOf("telemetry.main", 0)->status.source_offset, 30);
  ASSERT_TRUE(view.StateOf("telemetry.main", 0)->counts);
  EXPECT_EQ(view.StateOf("telemetry.main", 0)->counts->records.by_kind[0], 9u);

  EXPECT_NE(view.Apply(CountsKey("telemetry.main", 1), std::string("SEISMOAG garbage"), 2), std::nullopt);
  EXPECT_EQ(view.counts().by_kind[0], 9u) << "partition 1's counts left the view";
  EXPECT_TRUE(view.StateOf("telemetry.main", 1)->status.degraded());
  EXPECT_EQ(view.BadKeys().at({"telemetry.main", 1}), std::vector<std::string>{"c/telemetry.main/1"});

  const CountsRecord again = counts(1, 25, 8, 0);
  ASSERT_EQ(view.Apply(CountsKey("telemetry.main", 1), EncodeCounts(again), 3), std::nullopt);
  EXPECT_FALSE(view.StateOf("telemetry.main", 1)->status.degraded());
  EXPECT_EQ(view.counts().by_kind[0], 17u);
}

// An intern sweep in a cluster (ADR 0024, "Intern tables"): what the view marks keeps every
// id its partials and states hold; what nobody holds goes.
TEST(GlobalView, ItsMarksKeepEveryIdItHoldsThroughAnInternSweep) {
  Fixture f;
  GlobalView view(Options(), &f.reader);
  ReadAll(view, f.published, 7);
  (void)view.Build();
  const Sym orphan = f.reader.Intern("a text nobody holds");
  ASSERT_TRUE(f.reader.text().Find("a text nobody holds"));
  std::vector<uint64_t> text, stacks;
  view.MarkIds(text, stacks);
  f.reader.Sweep(text, stacks);
  EXPECT_FALSE(f.reader.text().Find("a text nobody holds")) << "id " << orphan << " was not swept";
  // New texts after the sweep, then every partition rebuilt from the partials it holds (a
  // tombstone of a bucket it does not have makes it dirty): the same totals.
  for (int i = 0; i < 1000; ++i) (void)f.reader.Intern("after the sweep " + std::to_string(i));
  for (int32_t p = 0; p < kPartitions; ++p)
    ASSERT_EQ(view.Apply(PartialKey({"telemetry.main", p, 1, 0}), std::nullopt, 8), std::nullopt);
  for (int32_t p = 0; p < kPartitions; ++p) Close(view, f.published, p, 8);
  ExpectTotals(*view.Build(), *f.whole, f.symbols);
}

}  // namespace
}  // namespace seismo
