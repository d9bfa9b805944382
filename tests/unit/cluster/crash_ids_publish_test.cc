// Crash ids in the aggregates topic (ADR 0024, "Crash ids"): the ledger sends each id once,
// in chunks of the epoch it was remembered in, numbers chunks on from those the topic
// holds, and tombstones an epoch's chunks when it expires; read back, a restore's view
// holds exactly the ids of the live epochs.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "seismo/cluster/global_view.h"
#include "seismo/cluster/publish_ledger.h"
#include "unit/cluster/partitioned_corpus.h"

namespace seismo {
namespace {

const std::string kTopic = "telemetry.main";

struct Publisher {
  Symbols symbols;
  PublishLedger ledger;
  std::vector<std::vector<OutgoingRecord>> batches;  // committed, whole

  // One publish of partition 0 with these ids; its crash-ids records.
  std::vector<OutgoingRecord> Publish(const CrashIds& ids, bool commit = true) {
    std::vector<OutgoingRecord> out;
    ledger.Diff(CountsRecord{kTopic, 0, 0, "node-a:8080", {}}, {}, ids, symbols, out);
    if (commit) {
      ledger.Commit();
      batches.push_back(out);
    } else {
      ledger.Abort();
    }
    std::erase_if(out, [](const OutgoingRecord& r) { return !r.key.starts_with("d/"); });
    return out;
  }
};

std::vector<uint64_t> IdsOf(const OutgoingRecord& r) {
  Symbols symbols;
  RecordResult d = DecodeRecord(r.key, r.value, symbols);
  EXPECT_TRUE(d.ok()) << r.key;
  return d.ok() ? std::get<CrashIdsRecord>(d.value()).ids : std::vector<uint64_t>{};
}

// What a restore reads back from every committed batch.
GlobalView::PartitionState ReadBack(const Publisher& p) {
  Symbols reader;
  GlobalView view(partitioned::Options(), &reader, /*keep_crash_ids=*/true);
  for (const auto& batch : p.batches)
    for (const OutgoingRecord& r : batch) EXPECT_EQ(view.Apply(r.key, r.value, 1), std::nullopt) << r.key;
  auto state = view.StateOf(kTopic, 0);
  return state ? *state : GlobalView::PartitionState{};
}

TEST(CrashIdsPublish, EachIdIsSentOnceAndAnEpochGoesWhenTheOneAfterItIsThePrevious) {
  Publisher p;
  // Epoch 10: three ids, then a fourth.
  std::vector<OutgoingRecord> out = p.Publish({{10, {1, 2, 3}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "d/telemetry.main/0/10/0");
  EXPECT_EQ(IdsOf(out[0]), (std::vector<uint64_t>{1, 2, 3}));
  out = p.Publish({{10, {1, 2, 3, 4}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "d/telemetry.main/0/10/1");
  EXPECT_EQ(IdsOf(out[0]), (std::vector<uint64_t>{4}));
  EXPECT_TRUE(p.Publish({{10, {1, 2, 3, 4}}}).empty()) << "nothing new: nothing sent";

  // Epoch 11 begins: 10 is the previous generation now, nothing of it is sent again.
  out = p.Publish({{10, {1, 2, 3, 4}}, {11, {5}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "d/telemetry.main/0/11/2");
  // An aborted publish sends its ids again with the next one.
  EXPECT_EQ(p.Publish({{10, {1, 2, 3, 4}}, {11, {5, 6}}}, /*commit=*/false).size(), 1u);
  out = p.Publish({{10, {1, 2, 3, 4}}, {11, {5, 6}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(IdsOf(out[0]), (std::vector<uint64_t>{6}));
  EXPECT_EQ(ReadBack(p).crash_ids, (CrashIds{{10, {1, 2, 3, 4}}, {11, {5, 6}}}));

  // Epoch 12: 10 expired, its two chunks are tombstoned.
  out = p.Publish({{11, {5, 6}}, {12, {7}}});
  std::map<std::string, bool> sent;  // key -> has a value
  for (const OutgoingRecord& r : out) sent[r.key] = r.value.has_value();
  EXPECT_EQ(sent, (std::map<std::string, bool>{{"d/telemetry.main/0/10/0", false},
                                               {"d/telemetry.main/0/10/1", false},
                                               {"d/telemetry.main/0/12/4", true}}));
  const GlobalView::PartitionState back = ReadBack(p);
  EXPECT_EQ(back.crash_ids, (CrashIds{{11, {5, 6}}, {12, {7}}}));
  EXPECT_EQ(back.crash_id_chunks.size(), 2u);
}

TEST(CrashIdsPublish, AnIdAStateRemembersInAnOlderGenerationThanItWasSentIsNotSentAgain) {
  Publisher p;
  p.Publish({{10, {1, 2}}});
  // The state's ids outgrew their memory: its current generation became its previous
  // one within epoch 10, so its image labels them 9.
  EXPECT_TRUE(p.Publish({{9, {1, 2}}, {10, {}}}).empty());
  EXPECT_EQ(p.Publish({{9, {1, 2}}, {10, {3}}}).size(), 1u);
}

// A state whose id memory filled drops its older generation early: the ledger sends the
// epochs that lost ids again as the state holds them, so a restore remembers what the state
// did (no more: a copy the state had forgotten counts again, moved or not).
TEST(CrashIdsPublish, IdsTheStateForgotEarlyLeaveTheTopic) {
  Publisher p;
  p.Publish({{9, {1, 2}}, {10, {3, 4}}});
  // Memory full in epoch 10: 9's generation is dropped, 10's moves down a label; then 5.
  std::vector<OutgoingRecord> out = p.Publish({{9, {3, 4}}, {10, {5}}});
  std::map<std::string, bool> sent;
  for (const OutgoingRecord& r : out) sent[r.key] = r.value.has_value();
  EXPECT_EQ(sent, (std::map<std::string, bool>{{"d/telemetry.main/0/9/0", false},
                                               {"d/telemetry.main/0/10/2", true}}));
  EXPECT_EQ(ReadBack(p).crash_ids, (CrashIds{{10, {3, 4, 5}}}))
      << "3 and 4 stay in the chunk that holds them";
  // Full again: 3 and 4 go, 5 moves down.
  out = p.Publish({{9, {5}}, {10, {}}});
  EXPECT_EQ(ReadBack(p).crash_ids, (CrashIds{{9, {5}}}));
}

TEST(CrashIdsPublish, ManyIdsGoInChunksOfAtMostTheRecordLimit) {
  Publisher p;
  std::vector<uint64_t> ids;
  for (uint64_t i = 1; i <= 2 * kMaxCrashIdsPerRecord + 100; ++i) ids.push_back(i * 7919);
  const std::vector<OutgoingRecord> out = p.Publish({{10, ids}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(IdsOf(out[0]).size(), kMaxCrashIdsPerRecord);
  EXPECT_EQ(IdsOf(out[2]).size(), 100u);
  for (const OutgoingRecord& r : out) EXPECT_LT(r.value->size(), size_t{512} * 1024) << r.key;
  EXPECT_EQ(ReadBack(p).crash_ids.at(10), ids);
}

// A new owner seeds its ledger with the chunks the topic holds: it sends only what it
// remembered since, numbers on from the highest chunk, and tombstones the previous
// owner's chunks when their epoch expires.
TEST(CrashIdsPublish, ANewOwnerGoesOnFromTheChunksTheTopicHolds) {
  Publisher before;
  before.Publish({{10, {1, 2}}});
  before.Publish({{10, {1, 2, 3}}});
  const GlobalView::PartitionState read = ReadBack(before);

  Publisher after;
  after.batches = before.batches;
  after.ledger.Seed(kTopic, 0, read.crash_id_chunks);
  std::vector<OutgoingRecord> out = after.Publish({{10, {1, 2, 3, 4}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "d/telemetry.main/0/10/2");
  EXPECT_EQ(IdsOf(out[0]), (std::vector<uint64_t>{4}));
  out = after.Publish({{12, {9}}});
  EXPECT_EQ(out.size(), 4u) << "epoch 10's three chunks tombstoned, one new";
  EXPECT_EQ(ReadBack(after).crash_ids, (CrashIds{{12, {9}}}));
}

// A rejected record of the partition: every id is sent again in new chunks, the chunks
// known before are tombstoned.
TEST(CrashIdsPublish, AResendSendsEveryIdAgainAndTombstonesTheOldChunks) {
  Publisher p;
  p.Publish({{10, {1, 2}}});
  p.Publish({{10, {1, 2, 3}}});
  p.ledger.Resend(kTopic, 0);
  const std::vector<OutgoingRecord> out = p.Publish({{10, {1, 2, 3}}});
  std::map<std::string, bool> sent;
  for (const OutgoingRecord& r : out) sent[r.key] = r.value.has_value();
  EXPECT_EQ(sent, (std::map<std::string, bool>{{"d/telemetry.main/0/10/0", false},
                                               {"d/telemetry.main/0/10/1", false},
                                               {"d/telemetry.main/0/10/2", true}}));
  EXPECT_EQ(IdsOf(out.back()), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(ReadBack(p).crash_ids, (CrashIds{{10, {1, 2, 3}}}));
}

// The view that serves (not a restore's) keeps no ids; a rejected chunk degrades its
// partition, and the chunk sent again under its key clears it.
TEST(CrashIdsPublish, TheServingViewKeepsNoIdsAndARejectedChunkDegradesItsPartition) {
  Publisher p;
  p.Publish({{10, {1, 2}}});
  Symbols reader;
  GlobalView view(partitioned::Options(), &reader);
  const OutgoingRecord& r = p.batches[0][0];
  const OutgoingRecord& closing = p.batches[0].back();  // the publish's counts record
  ASSERT_EQ(closing.key, CountsKey(kTopic, 0));
  ASSERT_EQ(view.Apply(r.key, r.value, 1), std::nullopt);
  ASSERT_EQ(view.Apply(closing.key, closing.value, 1), std::nullopt);
  EXPECT_TRUE(view.StateOf(kTopic, 0)->crash_ids.empty());
  EXPECT_FALSE(view.Partitions()[0].degraded());

  std::string bad = *r.value;
  bad.back() ^= 1;
  EXPECT_NE(view.Apply(r.key, bad, 2), std::nullopt);
  EXPECT_TRUE(view.Partitions()[0].degraded());
  EXPECT_EQ(view.BadKeys().at({kTopic, 0}), (std::vector<std::string>{r.key}));
  ASSERT_EQ(view.Apply(r.key, std::nullopt, 3), std::nullopt);
  EXPECT_TRUE(view.Partitions()[0].degraded()) << "a tombstone counts when its publish is whole";
  ASSERT_EQ(view.Apply(closing.key, closing.value, 3), std::nullopt);
  EXPECT_FALSE(view.Partitions()[0].degraded());
}

}  // namespace
}  // namespace seismo
