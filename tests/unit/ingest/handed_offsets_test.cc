// The hand-over offsets and the redelivery guard of the Kafka source.
#include "seismo/ingest/handed_offsets.h"

#include <gtest/gtest.h>

namespace seismo {
namespace {

TEST(HandedOffsets, NextOffsetFollowsEveryHandedRecord) {
  HandedOffsets h;
  EXPECT_TRUE(h.Accept("main", 0, 5));  // first record of an unseeked partition: any offset
  EXPECT_TRUE(h.Accept("main", 0, 6));
  EXPECT_TRUE(h.Accept("main", 0, 9));  // gaps (compaction, transactions) are fine
  EXPECT_TRUE(h.Accept("main", 1, 0));
  EXPECT_EQ(h.next().at({"main", 0}), 10);
  EXPECT_EQ(h.next().at({"main", 1}), 1);
  EXPECT_EQ(h.redelivered(), 0u);
}

TEST(HandedOffsets, ARewoundPartitionIsSkippedUntilItPassesWhatWasHanded) {
  HandedOffsets h;
  for (int64_t o = 0; o < 4; ++o) ASSERT_TRUE(h.Accept("bhr", 2, o));
  // The client rewinds to offset 1 (as librdkafka 2.0 may after a resume).
  EXPECT_FALSE(h.Accept("bhr", 2, 1));
  EXPECT_FALSE(h.Accept("bhr", 2, 2));
  EXPECT_FALSE(h.Accept("bhr", 2, 3));
  EXPECT_TRUE(h.Accept("bhr", 2, 4));
  EXPECT_EQ(h.redelivered(), 3u);
  EXPECT_EQ(h.next().at({"bhr", 2}), 5);
  EXPECT_TRUE(h.Accept("bhr", 3, 1)) << "other partitions are independent";
}

TEST(HandedOffsets, ASeekSetsWhereCountingContinues) {
  HandedOffsets h;
  h.Start({"crash", 0}, 100);  // checkpoint says 0..99 were counted
  EXPECT_FALSE(h.Accept("crash", 0, 99));
  EXPECT_TRUE(h.Accept("crash", 0, 100));
  EXPECT_EQ(h.next().at({"crash", 0}), 101);
}

TEST(HandedOffsets, AForgottenPartitionStartsAfreshForItsNextAssignment) {
  HandedOffsets h;
  ASSERT_TRUE(h.Accept("main", 0, 50));
  h.Forget({"main", 0});
  EXPECT_TRUE(h.next().empty());
  EXPECT_TRUE(h.Accept("main", 0, 20)) << "another owner may have committed an earlier offset";
  EXPECT_EQ(h.redelivered(), 0u);
}

}  // namespace
}  // namespace seismo
