// The publisher's ledger (ADR 0024, "Publishing"): a publish sends what changed since the
// last one that committed, tombstones what is gone, and the newest record of every key,
// read back, is the partition's state now.
#include "seismo/cluster/publish_ledger.h"

#include <gtest/gtest.h>

#include <map>
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

// The partition's counts record as of its partials' offset (zero counts unless given).
CountsRecord CountsAt(const std::vector<PartialRecord>& partials, int32_t partition = 0,
                      PartitionCounts counts = {}) {
  return {kTopic, partition, partials.empty() ? 0 : partials.front().source_offset, "node-a:8080", counts};
}

void Diff(PublishLedger& ledger, const std::vector<PartialRecord>& partials, const Symbols& symbols,
          std::vector<OutgoingRecord>& out, int32_t partition = 0) {
  ledger.Diff(CountsAt(partials, partition), partials, {}, symbols, out);
}

// The batches read back into `view`, in order, each record taken.
void ReadBack(GlobalView& view, std::initializer_list<const std::vector<OutgoingRecord>*> batches) {
  for (const auto* batch : batches)
    for (const OutgoingRecord& r : *batch) ASSERT_EQ(view.Apply(r.key, r.value, 1), std::nullopt) << r.key;
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
  // The state's newest buckets only (a 3-minute retention): everything before them expired.
  std::unique_ptr<ShardState> NewestBuckets() {
    AggregateOptions o = Options();
    o.retention_ms = 3 * kMinute;
    auto kept = std::make_unique<ShardState>(o, &symbols);
    const ShardImage image = state.Image();
    kept->RestoreBegin(image, false, false);
    for (const SeriesImage& s : image.series) kept->RestoreSeries(s);
    kept->AdvanceTo(EventTime{(PartialsOf(state, 0, symbols).back().where.bucket + 1) * kMinute});
    return kept;
  }
};

TEST(PublishLedger, SendsWhatChangedAndTheNewestRecordsReadBackAreTheStateNow) {
  Corpus2 c;
  const size_t half = c.docs.size() / 2;
  c.Add(0, half);
  PublishLedger ledger;
  std::vector<OutgoingRecord> first;
  const std::vector<PartialRecord> partials = PartialsOf(c.state, 100, c.symbols);
  Diff(ledger, partials, c.symbols, first);
  EXPECT_EQ(first.size(), partials.size() + 1) << "the first publish sends every partial and the counts";
  EXPECT_TRUE(Keys(first, true).empty());
  ledger.Commit();
  EXPECT_EQ(ledger.keys(), partials.size());

  std::vector<OutgoingRecord> again;
  Diff(ledger, PartialsOf(c.state, 100, c.symbols), c.symbols, again);
  EXPECT_TRUE(again.empty()) << "nothing changed, nothing is sent";
  ledger.Commit();

  // The rest of the corpus: later buckets, and series of earlier buckets seen again.
  c.Add(half, c.docs.size());
  std::vector<OutgoingRecord> second;
  const std::vector<PartialRecord> now = PartialsOf(c.state, 200, c.symbols);
  Diff(ledger, now, c.symbols, second);
  ledger.Commit();
  EXPECT_FALSE(second.empty());
  EXPECT_TRUE(Keys(second, false).contains(CountsKey(kTopic, 0))) << "the offset moved";
  EXPECT_LT(second.size() - 1, now.size()) << "unchanged buckets are not sent again";
  for (const auto* batch : {&first, &second})
    EXPECT_EQ(batch->back().key, CountsKey(kTopic, 0)) << "the counts record closes each publish";

  // Read back in order, the newest record of each key wins: the whole corpus.
  Symbols reader;
  GlobalView view(Options(), &reader);
  ASSERT_NO_FATAL_FAILURE(ReadBack(view, {&first, &second}));
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
  Diff(ledger, before, c.symbols, first);
  ledger.Commit();

  // Keep only the newest buckets: everything before them expires.
  const std::unique_ptr<ShardState> newest = c.NewestBuckets();
  const ShardState& kept = *newest;
  const std::vector<PartialRecord> after = PartialsOf(kept, 100, c.symbols);
  ASSERT_LT(after.size(), before.size());

  std::vector<OutgoingRecord> aborted;
  Diff(ledger, after, c.symbols, aborted);
  const std::set<std::string> gone = Keys(aborted, true);
  EXPECT_EQ(gone.size(), before.size() - after.size());
  for (const PartialRecord& p : after) EXPECT_FALSE(gone.contains(PartialKey(p.where)));
  ledger.Abort();

  std::vector<OutgoingRecord> retried;
  Diff(ledger, after, c.symbols, retried);
  EXPECT_EQ(Keys(retried, true), gone) << "an aborted publish is sent again whole";
  ledger.Abort();

  // The same with the offset moved: read back, the records carry it (tombstones alone would
  // leave the largest offset behind; the newest bucket is sent when no partial is).
  const std::vector<PartialRecord> moved = PartialsOf(kept, 150, c.symbols);
  retried.clear();
  Diff(ledger, moved, c.symbols, retried);
  EXPECT_EQ(Keys(retried, true), gone);
  ledger.Commit();

  Symbols reader;
  GlobalView view(Options(), &reader);
  ASSERT_NO_FATAL_FAILURE(ReadBack(view, {&first, &retried}));
  ExpectTotals(*view.Build(), kept, c.symbols);
  EXPECT_EQ(view.Partitions()[0].source_offset, 150);
}

// The keys whose newest record in `batches`, read in order, is a value.
std::set<std::string> LiveKeys(std::initializer_list<const std::vector<OutgoingRecord>*> batches) {
  std::map<std::string, bool> newest;
  for (const auto* batch : batches)
    for (const OutgoingRecord& r : *batch) newest[r.key] = r.value.has_value();
  std::set<std::string> out;
  for (const auto& [key, live] : newest)
    if (live) out.insert(key);
  return out;
}

// A publish whose commit failed may still land: a commit that timed out goes on in the
// background, and the next transaction's begin finishes it (ADR 0024, "A commit that times
// out"). After Uncertain(), the next publish leaves the records read back as the state now,
// whether that publish landed or not. After Abort() (the control), the keys only it wrote
// would stay for good had it landed.
TEST(PublishLedger, AfterAnUncertainPublishTheNextIsRightWhetherItLandedOrNot) {
  Corpus2 c;
  c.Add(0, c.docs.size());
  // `kept`: the newest buckets only, so the whole state has keys `kept` has not.
  const std::unique_ptr<ShardState> newest = c.NewestBuckets();
  const ShardState& kept = *newest;
  const std::vector<PartialRecord> now = PartialsOf(kept, 140, c.symbols);
  std::set<std::string> expected = {CountsKey(kTopic, 0)};
  for (const PartialRecord& p : now) expected.insert(PartialKey(p.where));

  for (const bool uncertain : {true, false}) {
    SCOPED_TRACE(uncertain ? "Uncertain()" : "Abort()");
    PublishLedger ledger;
    std::vector<OutgoingRecord> first, maybe, next;
    Diff(ledger, PartialsOf(kept, 100, c.symbols), c.symbols, first);
    ledger.Commit();
    Diff(ledger, PartialsOf(c.state, 120, c.symbols), c.symbols, maybe);  // the old buckets again
    if (uncertain) {
      ledger.Uncertain();
    } else {
      ledger.Abort();
    }
    Diff(ledger, now, c.symbols, next);
    ledger.Commit();
    EXPECT_EQ(LiveKeys({&first, &next}), expected) << "the publish did not land";
    if (uncertain) {
      EXPECT_EQ(LiveKeys({&first, &maybe, &next}), expected) << "the publish landed";
      for (const bool landed : {true, false}) {
        Symbols reader;
        GlobalView view(Options(), &reader);
        if (landed) {
          ASSERT_NO_FATAL_FAILURE(ReadBack(view, {&first, &maybe, &next}));
        } else {
          ASSERT_NO_FATAL_FAILURE(ReadBack(view, {&first, &next}));
        }
        ExpectTotals(*view.Build(), kept, c.symbols);
        EXPECT_EQ(view.Partitions()[0].source_offset, 140);
      }
    } else {
      EXPECT_NE(LiveKeys({&first, &maybe, &next}), expected) << "the control: keys left behind";
    }
  }
}

// Only tombstones to send, and the offset moved: the counts record carries the offset, so
// the largest offset read back is the current one.
TEST(PublishLedger, TombstonesAloneStillCarryAMovedOffset) {
  Corpus2 c;
  c.Add(0, c.docs.size());
  PublishLedger ledger;
  std::vector<OutgoingRecord> first;
  std::vector<PartialRecord> partials = PartialsOf(c.state, 100, c.symbols);
  Diff(ledger, partials, c.symbols, first);
  ledger.Commit();
  // The oldest bucket gone, nothing else changed, the offset moved.
  const int64_t oldest = partials.front().where.bucket;
  std::erase_if(partials, [&](const PartialRecord& p) { return p.where.bucket == oldest; });
  for (PartialRecord& p : partials) p.source_offset = 180;
  std::vector<OutgoingRecord> out;
  Diff(ledger, partials, c.symbols, out);
  ledger.Commit();
  ASSERT_FALSE(Keys(out, true).empty());
  EXPECT_EQ(Keys(out, false), std::set<std::string>{CountsKey(kTopic, 0)})
      << "only the counts carry the offset";
  Symbols reader;
  GlobalView view(Options(), &reader);
  ASSERT_NO_FATAL_FAILURE(ReadBack(view, {&first, &out}));
  EXPECT_EQ(view.Partitions()[0].source_offset, 180);
}

TEST(PublishLedger, AMovedOffsetAloneSendsTheCountsAndAForgottenPartitionNoTombstones) {
  Corpus2 c;
  c.Add(0, c.docs.size());
  PublishLedger ledger;
  std::vector<OutgoingRecord> first;
  Diff(ledger, PartialsOf(c.state, 100, c.symbols), c.symbols, first);
  ledger.Commit();

  std::vector<OutgoingRecord> moved;
  Diff(ledger, PartialsOf(c.state, 150, c.symbols), c.symbols, moved);
  ledger.Commit();
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].key, CountsKey(kTopic, 0));
  Symbols reader;
  GlobalView view(Options(), &reader);
  ASSERT_NO_FATAL_FAILURE(ReadBack(view, {&first, &moved}));
  EXPECT_EQ(view.Partitions()[0].source_offset, 150)
      << "a restore seeks past the documents that changed nothing";

  ledger.Forget(kTopic, 0);
  EXPECT_EQ(ledger.keys(), 0u);
  std::vector<OutgoingRecord> none;
  Diff(ledger, {}, c.symbols, none, 1);
  EXPECT_TRUE(Keys(none, true).empty()) << "a forgotten partition's keys are its new owner's: no tombstones";
}

// Counts that changed at the same offset (a retried publish after a restore, say) are sent;
// read back, the view's counts are every partition's newest, summed.
TEST(PublishLedger, ChangedCountsAreSentAndTheViewSumsEachPartitionsNewest) {
  Corpus2 c;
  c.Add(0, c.docs.size());
  const std::vector<PartialRecord> partials = PartialsOf(c.state, 100, c.symbols);
  PartitionCounts a;
  a.records.by_kind = {7, 2, 1};
  a.records.rejected[static_cast<size_t>(RejectReason::kFutureTime)] = 3;
  a.records.documents = 13;
  a.shards.duplicates = 1;
  a.shards.late_dropped = 4;
  PartitionCounts b = a;
  b.records.by_kind[0] = 9;
  b.shards.late_dropped = 5;
  PublishLedger ledger;
  std::vector<OutgoingRecord> out;
  ledger.Diff(CountsAt(partials, 0, a), partials, {}, c.symbols, out);
  ledger.Diff(CountsAt({}, 1, a), {}, {}, c.symbols, out);
  ledger.Commit();
  std::vector<OutgoingRecord> again;
  ledger.Diff(CountsAt(partials, 0, a), partials, {}, c.symbols, again);
  EXPECT_TRUE(again.empty());
  ledger.Diff(CountsAt(partials, 0, b), partials, {}, c.symbols, again);
  ledger.Commit();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].key, CountsKey(kTopic, 0));

  Symbols reader;
  GlobalView view(Options(), &reader);
  ASSERT_NO_FATAL_FAILURE(ReadBack(view, {&out, &again}));
  const RecordCounts sum = view.counts();
  EXPECT_EQ(sum.by_kind, (std::array<uint64_t, 3>{16, 4, 2}));  // 9 + 7, 2 + 2, 1 + 1
  EXPECT_EQ(sum.rejected[static_cast<size_t>(RejectReason::kFutureTime)], 6u);
  EXPECT_EQ(sum.documents, 26u);
  const std::shared_ptr<const Snapshot> snap = view.Build();
  EXPECT_EQ(snap->counters.duplicates, 2u);
  EXPECT_EQ(snap->counters.late_dropped, 9u);  // 5 + 4
  ExpectTotals(*snap, c.state, c.symbols);
}

// Anything sent for a partition ends with its counts record, even when neither its counts
// nor its offset moved (a reader takes a publish whole at that record: GlobalView), and the
// keys a reader rejected that the publish does not send again are tombstoned before it.
TEST(PublishLedger, EveryPublishThatSendsAnythingEndsWithItsCountsRecord) {
  Corpus2 c;
  c.Add(0, c.docs.size());
  PublishLedger ledger;
  const std::vector<PartialRecord> partials = PartialsOf(c.state, 100, c.symbols);
  std::vector<OutgoingRecord> first;
  Diff(ledger, partials, c.symbols, first);
  ledger.Commit();

  // Same counts, same offset: a resend.
  ledger.Resend(kTopic, 0);
  std::vector<OutgoingRecord> resent;
  Diff(ledger, partials, c.symbols, resent);
  ledger.Commit();
  ASSERT_EQ(resent.size(), partials.size() + 1);
  EXPECT_EQ(resent.back().key, CountsKey(kTopic, 0));

  // Rejected keys (the publisher resends the partition whole first, as ClusterNode does):
  // the one it no longer has is tombstoned, the others are sent again, the counts last.
  const std::string gone = PartialKey({kTopic, 0, 999 * kMinute, 0});
  ledger.Resend(kTopic, 0);
  std::vector<OutgoingRecord> healed;
  ledger.Diff(CountsAt(partials), partials, {}, c.symbols, healed,
              {gone, PartialKey(partials.front().where), CountsKey(kTopic, 0)});
  ledger.Commit();
  ASSERT_EQ(healed.size(), partials.size() + 2);
  EXPECT_EQ(Keys(healed, true), std::set<std::string>{gone});
  EXPECT_EQ(healed[healed.size() - 2].key, gone);
  EXPECT_EQ(healed.back().key, CountsKey(kTopic, 0));
  EXPECT_TRUE(healed.back().value) << "the counts key is sent, never tombstoned";
}

}  // namespace
}  // namespace seismo
