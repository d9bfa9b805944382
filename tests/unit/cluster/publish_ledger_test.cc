// The publisher's ledger (ADR 0024, "Publishing"): a publish sends what changed since the
// last one that committed, tombstones what is gone, and the newest record of every key,
// read back, is the partition's state now.
#include "seismo/cluster/publish_ledger.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "seismo/cluster/global_view.h"
#include "support/signatures.h"
#include "unit/cluster/partitioned_corpus.h"

namespace seismo {
namespace {

using namespace partitioned;  // NOLINT(google-build-using-namespace): the corpus helpers

const std::string kTopic = "telemetry.main";

std::vector<PartialRecord> PartialsOf(const ShardState& state, int64_t offset, const Symbols& symbols) {
  const ShardImage image = state.Image();
  return SplitIntoPartials(image.series, {kTopic, 0, 0, 0}, kMinute, offset, image.stream_time_ms,
                           "node-a:8080", symbols);
}

std::set<std::string> Keys(const std::vector<OutgoingRecord>& records, bool tombstones) {
  std::set<std::string> out;
  for (const OutgoingRecord& r : records)
    if (r.value.has_value() != tombstones) out.insert(r.key);
  return out;
}

struct Corpus2 {
  Symbols symbols;
  Parser parser{{}, &test::DefaultSignatures()};
  DeltaEncoder encoder{&symbols};
  ShardState state{Options(), &symbols};
  std::vector<std::string> docs = Corpus(SynthProfile::kDefault, 400, 40);

  void Add(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) Aggregate(docs[i], parser, encoder, state);
  }
};

TEST(PublishLedger, SendsWhatChangedAndTheNewestRecordsReadBackAreTheStateNow) {
  Corpus2 c;
  const size_t half = c.docs.size() / 2;
  c.Add(0, half);
  PublishLedger ledger;
  std::vector<OutgoingRecord> first;
  const std::vector<PartialRecord> partials = PartialsOf(c.state, 100, c.symbols);
  ledger.Diff(kTopic, 0, partials, c.symbols, first);
  EXPECT_EQ(first.size(), partials.size()) << "the first publish sends every partial";
  EXPECT_TRUE(Keys(first, true).empty());
  ledger.Commit();
  EXPECT_EQ(ledger.keys(), partials.size());

  std::vector<OutgoingRecord> again;
  ledger.Diff(kTopic, 0, PartialsOf(c.state, 100, c.symbols), c.symbols, again);
  EXPECT_TRUE(again.empty()) << "nothing changed, nothing is sent";
  ledger.Commit();

  // The rest of the corpus: later buckets, and series of earlier buckets seen again.
  c.Add(half, c.docs.size());
  std::vector<OutgoingRecord> second;
  const std::vector<PartialRecord> now = PartialsOf(c.state, 200, c.symbols);
  ledger.Diff(kTopic, 0, now, c.symbols, second);
  ledger.Commit();
  EXPECT_FALSE(second.empty());
  EXPECT_LT(second.size(), now.size()) << "unchanged buckets are not sent again";

  // Read back in order, the newest record of each key wins: the whole corpus.
  Symbols reader;
  GlobalView view(Options(), &reader);
  for (const std::vector<OutgoingRecord>* batch : {&first, &second}) {
    for (const OutgoingRecord& r : *batch) {
      ASSERT_EQ(view.Apply(r.key, r.value, 1), std::nullopt) << r.key;
    }
  }
  ExpectTotals(*view.Build(), c.state, c.symbols);
  ASSERT_EQ(view.Partitions().size(), 1u);
  EXPECT_EQ(view.Partitions()[0].source_offset, 200);
}

TEST(PublishLedger, ExpiredBucketsAreTombstonedAndAnAbortedPublishIsSentAgain) {
  Corpus2 c;
  c.Add(0, c.docs.size());
  PublishLedger ledger;
  std::vector<OutgoingRecord> first;
  const std::vector<PartialRecord> before = PartialsOf(c.state, 100, c.symbols);
  ledger.Diff(kTopic, 0, before, c.symbols, first);
  ledger.Commit();

  // Keep only the newest buckets: everything before them expires.
  const int64_t newest = before.back().where.bucket;
  AggregateOptions o = Options();
  o.retention_ms = 3 * kMinute;
  ShardState kept(o, &c.symbols);
  const ShardImage image = c.state.Image();
  kept.RestoreBegin(image, false, false);
  for (const SeriesImage& s : image.series) kept.RestoreSeries(s);
  kept.AdvanceTo(EventTime{(newest + 1) * kMinute});
  const std::vector<PartialRecord> after = PartialsOf(kept, 100, c.symbols);
  ASSERT_LT(after.size(), before.size());

  std::vector<OutgoingRecord> aborted;
  ledger.Diff(kTopic, 0, after, c.symbols, aborted);
  const std::set<std::string> gone = Keys(aborted, true);
  EXPECT_EQ(gone.size(), before.size() - after.size());
  for (const PartialRecord& p : after) EXPECT_FALSE(gone.contains(PartialKey(p.where)));
  ledger.Abort();

  std::vector<OutgoingRecord> retried;
  ledger.Diff(kTopic, 0, after, c.symbols, retried);
  EXPECT_EQ(Keys(retried, true), gone) << "an aborted publish is sent again whole";
  ledger.Abort();

  // The same with the offset moved: read back, the records carry it (tombstones alone would
  // leave the largest offset behind; the newest bucket is sent when no partial is).
  const std::vector<PartialRecord> moved = PartialsOf(kept, 150, c.symbols);
  retried.clear();
  ledger.Diff(kTopic, 0, moved, c.symbols, retried);
  EXPECT_EQ(Keys(retried, true), gone);
  ledger.Commit();

  Symbols reader;
  GlobalView view(Options(), &reader);
  for (const auto* batch : {&first, &retried})
    for (const OutgoingRecord& r : *batch) ASSERT_EQ(view.Apply(r.key, r.value, 1), std::nullopt) << r.key;
  ExpectTotals(*view.Build(), kept, c.symbols);
  EXPECT_EQ(view.Partitions()[0].source_offset, 150);
}

// Only tombstones to send, and the offset moved: the newest bucket goes again, so the largest
// offset read back is the current one.
TEST(PublishLedger, TombstonesAloneStillCarryAMovedOffset) {
  Corpus2 c;
  c.Add(0, c.docs.size());
  PublishLedger ledger;
  std::vector<OutgoingRecord> first;
  std::vector<PartialRecord> partials = PartialsOf(c.state, 100, c.symbols);
  ledger.Diff(kTopic, 0, partials, c.symbols, first);
  ledger.Commit();
  // The oldest bucket gone, nothing else changed, the offset moved.
  const int64_t oldest = partials.front().where.bucket;
  std::erase_if(partials, [&](const PartialRecord& p) { return p.where.bucket == oldest; });
  for (PartialRecord& p : partials) p.source_offset = 180;
  std::vector<OutgoingRecord> out;
  ledger.Diff(kTopic, 0, partials, c.symbols, out);
  ASSERT_FALSE(Keys(out, true).empty());
  ASSERT_FALSE(Keys(out, false).empty()) << "the newest bucket carries the offset";
  for (const std::string& key : Keys(out, false))
    EXPECT_EQ(DecodeRecordKey(key)->where.bucket, partials.back().where.bucket);
}

TEST(PublishLedger, AMovedOffsetAloneSendsTheNewestBucketAndAForgottenPartitionNothing) {
  Corpus2 c;
  c.Add(0, c.docs.size());
  PublishLedger ledger;
  std::vector<OutgoingRecord> first;
  ledger.Diff(kTopic, 0, PartialsOf(c.state, 100, c.symbols), c.symbols, first);
  ledger.Commit();

  std::vector<OutgoingRecord> moved;
  const std::vector<PartialRecord> now = PartialsOf(c.state, 150, c.symbols);
  ledger.Diff(kTopic, 0, now, c.symbols, moved);
  ledger.Commit();
  ASSERT_FALSE(moved.empty());
  for (const OutgoingRecord& r : moved) {
    ASSERT_TRUE(r.value.has_value());
    EXPECT_EQ(DecodeRecordKey(r.key)->where.bucket, now.back().where.bucket) << r.key;
  }
  Symbols reader;
  GlobalView view(Options(), &reader);
  for (const auto* batch : {&first, &moved})
    for (const OutgoingRecord& r : *batch) ASSERT_EQ(view.Apply(r.key, r.value, 1), std::nullopt);
  EXPECT_EQ(view.Partitions()[0].source_offset, 150)
      << "a restore seeks past the documents that changed nothing";

  ledger.Forget(kTopic, 0);
  EXPECT_EQ(ledger.keys(), 0u);
  std::vector<OutgoingRecord> none;
  ledger.Diff(kTopic, 1, {}, c.symbols, none);
  EXPECT_TRUE(none.empty()) << "a forgotten partition's keys are its new owner's: no tombstones";
}

}  // namespace
}  // namespace seismo
