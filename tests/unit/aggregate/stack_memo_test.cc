// The stack memo: a stack met twice is found again by its frames' texts, and only by them;
// a stack whose texts the ring has since written over, or too large to keep, is not found;
// the encoder gives the ids interning gives, before and after a sweep (ADR 0046).
#include "seismo/aggregate/stack_memo.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/core/hash.h"

namespace seismo {
namespace {

std::vector<std::string_view> Views(const std::vector<std::string>& frames) {
  return {frames.begin(), frames.end()};
}

uint64_t HashOf(const std::vector<std::string>& frames) {
  std::vector<uint64_t> hashes;
  for (const std::string& f : frames) hashes.push_back(Hash64(f));
  return StackContentHash(hashes);
}

TEST(StackMemo, AStackOfferedTwiceIsFoundByItsTextsAlone) {
  StackMemo memo;
  const std::vector<std::string> stack = {"ab", "c", ""};
  const uint64_t h = HashOf(stack);
  EXPECT_EQ(memo.Find(h, Views(stack)), kNoId);
  memo.Offer(h, Views(stack), 7);
  EXPECT_EQ(memo.Find(h, Views(stack)), kNoId) << "noted, not kept, the first time";
  memo.Offer(h, Views(stack), 7);
  EXPECT_EQ(memo.Find(h, Views(stack)), 7u);
  // The same hash asked for other texts (as a collision would): not found. The same bytes
  // cut into other frames, a frame more or less, one byte changed.
  EXPECT_EQ(memo.Find(h, Views({"a", "bc", ""})), kNoId);
  EXPECT_EQ(memo.Find(h, Views({"ab", "c"})), kNoId);
  EXPECT_EQ(memo.Find(h, Views({"ab", "c", "", ""})), kNoId);
  EXPECT_EQ(memo.Find(h, Views({"ab", "d", ""})), kNoId);
  EXPECT_EQ(memo.Find(h + StackMemo::kSlots, Views(stack)), kNoId) << "another hash in the same slot";
  memo.Clear();
  EXPECT_EQ(memo.Find(h, Views(stack)), kNoId);
}

// Empty frames as a parsed document holds them: views with no data (TextArena's "").
TEST(StackMemo, EmptyFramesWithoutDataAreComparedByTheirLength) {
  StackMemo memo;
  const std::vector<std::string_view> stack = {std::string_view(), "f", std::string_view()};
  memo.Offer(9, stack, 3);
  memo.Offer(9, stack, 3);
  EXPECT_EQ(memo.Find(9, stack), 3u);
  EXPECT_EQ(memo.Find(9, std::vector<std::string_view>{std::string_view(), std::string_view(), "f"}), kNoId);
  EXPECT_EQ(memo.Find(9, std::vector<std::string_view>{std::string_view(), "f"}), kNoId);
}

TEST(StackMemo, AnotherStackInTheSlotIsNotedThenTakesItsPlace) {
  StackMemo memo;
  const std::vector<std::string> a = {"a"}, b = {"b"};
  const uint64_t ha = 5, hb = 5 + StackMemo::kSlots;  // one slot
  memo.Offer(ha, Views(a), 1);
  memo.Offer(ha, Views(a), 1);
  memo.Offer(hb, Views(b), 2);
  EXPECT_EQ(memo.Find(ha, Views(a)), 1u) << "b only noted: a stays";
  memo.Offer(hb, Views(b), 2);
  EXPECT_EQ(memo.Find(ha, Views(a)), kNoId);
  EXPECT_EQ(memo.Find(hb, Views(b)), 2u);
}

TEST(StackMemo, TextsTheRingCameRoundToAreForgottenAndLargeStacksNotKept) {
  StackMemo memo;
  const std::vector<std::string> first = {"first frame", "second frame"};
  memo.Offer(1, Views(first), 11);
  memo.Offer(1, Views(first), 11);
  ASSERT_EQ(memo.Find(1, Views(first)), 11u);
  // Stacks of 1 000 bytes in other slots, until the ring has been written round once: the
  // first stack's bytes are written over (by texts of another stack), and it is not found.
  const std::vector<std::string> filler = {std::string(996, 'x')};
  size_t written = 0;
  for (uint64_t h = 2; written <= StackMemo::kRingBytes; ++h) {
    memo.Offer(h, Views(filler), 100);
    memo.Offer(h, Views(filler), 100);
    ASSERT_EQ(memo.Find(h, Views(filler)), 100u);
    written += 1000;
  }
  EXPECT_EQ(memo.Find(1, Views(first)), kNoId);
  // Kept again once offered twice more.
  memo.Offer(1, Views(first), 11);
  memo.Offer(1, Views(first), 11);
  EXPECT_EQ(memo.Find(1, Views(first)), 11u);
  // At most kMaxStackBytes of texts (each with its 4-byte length).
  const std::vector<std::string> fits = {std::string(StackMemo::kMaxStackBytes - 4, 'y')};
  const std::vector<std::string> large = {std::string(StackMemo::kMaxStackBytes - 3, 'y')};
  for (int i = 0; i < 2; ++i) memo.Offer(3, Views(fits), 12);
  for (int i = 0; i < 2; ++i) memo.Offer(4, Views(large), 13);
  EXPECT_EQ(memo.Find(3, Views(fits)), 12u);
  EXPECT_EQ(memo.Find(4, Views(large)), kNoId);
}

// What the encoder gives through its memo is what interning gives: the same id for the same
// frames, and after a sweep that dropped the stack, the id it is interned under again, not
// the one the memo had kept.
TEST(StackMemo, TheEncoderGivesTheStackTableIdsBeforeAndAfterASweep) {
  Symbols symbols;
  DeltaEncoder encoder(&symbols);
  const std::vector<std::string> frames = {"mozilla::Foo", "js::RunScript", "0x1f00"};
  std::vector<StackId> ids;
  for (int i = 0; i < 4; ++i) {
    encoder.Revalidate();
    ids.push_back(encoder.Stack(Views(frames)).id);
  }
  const StackId interned = symbols.InternStack(frames);
  for (StackId id : ids) EXPECT_EQ(id, interned);
  EXPECT_EQ(encoder.Stack(Views({"mozilla::Foo", "js::RunScript"})).id,
            symbols.InternStack(std::vector<std::string>{"mozilla::Foo", "js::RunScript"}));

  // Nothing marked: the stack and its frames are dropped, their ids not given out again
  // while the pin lives; interned anew, the stack gets another id.
  auto pin = symbols.stacks().Pin();
  std::vector<uint64_t> no_texts, no_stacks;
  symbols.Sweep(no_texts, no_stacks);
  encoder.Revalidate();
  const StackId again = encoder.Stack(Views(frames)).id;
  EXPECT_NE(again, interned);
  EXPECT_EQ(again, symbols.InternStack(frames));
  EXPECT_EQ(encoder.Stack(Views(frames)).id, again);
}

}  // namespace
}  // namespace seismo
