// Hand-computed checks of SPEC §3.2's hang arithmetic.
#include "seismo/parse/hang_math.h"

#include <gtest/gtest.h>

namespace seismo {
namespace {

HangOptions Opts(HangWeighting w = HangWeighting::kUpper) {
  HangOptions o;
  o.weighting = w;
  return o;
}

TEST(LegacyHangTotals, UpperBoundWeightingMatchesTheReferenceExample) {
  // reference §2.6: {"127":0,"255":2,"511":1,"1023":0} -> 3 hangs, 255*2 + 511 = 1021 ms
  HangTotals t = *LegacyHangTotals({{127, 0}, {255, 2}, {511, 1}, {1023, 0}}, Opts());
  EXPECT_EQ(t.hang_count, 3u);
  EXPECT_EQ(t.hang_us, 1021'000);
}

TEST(LegacyHangTotals, KeysBelowMinAreExcludedBecauseTheyAreUpperBounds) {
  // Key 127 holds 64..127 ms hangs: below 128 even though 127 + 1 == 128.
  HangTotals t = *LegacyHangTotals({{127, 5}, {255, 1}}, Opts());
  EXPECT_EQ(t.hang_count, 1u);
  EXPECT_EQ(t.hang_us, 255'000);
}

TEST(LegacyHangTotals, MaxIsExclusive) {
  HangOptions o = Opts();
  o.max_ms = 16383;  // K < max_ms: key 16383 is out
  HangTotals t = *LegacyHangTotals({{8191, 1}, {16383, 1}}, o);
  EXPECT_EQ(t.hang_count, 1u);
  EXPECT_EQ(t.hang_us, 8191'000);
  o.max_ms = 16000;  // default: 16383 >= 16000, out as well
  EXPECT_EQ(LegacyHangTotals({{16383, 4}}, o)->hang_count, 0u);
}

TEST(LegacyHangTotals, MinIsInclusive) {
  HangOptions o = Opts();
  o.min_ms = 255;
  HangTotals t = *LegacyHangTotals({{255, 2}}, o);
  EXPECT_EQ(t.hang_count, 2u);
}

TEST(LegacyHangTotals, LowerWeightingUsesBucketLowerBound) {
  // (K+1)/2: 255 -> 128, 511 -> 256: 2*128 + 256 = 512 ms
  HangTotals t = *LegacyHangTotals({{255, 2}, {511, 1}}, Opts(HangWeighting::kLower));
  EXPECT_EQ(t.hang_us, 512'000);
}

TEST(LegacyHangTotals, MidWeightingUsesThreeQuartersOfK) {
  // 0.75 K: 255 -> 191.25, 511 -> 383.25: 2*191.25 + 383.25 = 765.75 ms
  HangTotals t = *LegacyHangTotals({{255, 2}, {511, 1}}, Opts(HangWeighting::kMid));
  EXPECT_EQ(t.hang_us, 765'750);
}

TEST(LegacyHangTotals, ZeroCountsAddNothing) {
  HangTotals t = *LegacyHangTotals({{255, 0}, {511, 0}}, Opts());
  EXPECT_EQ(t.hang_count, 0u);
  EXPECT_EQ(t.hang_us, 0);
}

TEST(LegacyHangTotals, AWeightedSumThatWouldOverflowIsRefusedNotWrapped) {
  // Key 8191 weighs 8 191 000 thousandths of a ms. INT64_MAX / 8 191 000 = 1 126 037 362 575
  // (remainder 2 950 807): that count fits exactly, one more does not.
  std::optional<HangTotals> fits = LegacyHangTotals({{8191, 1'126'037'362'575}}, Opts());
  ASSERT_TRUE(fits);
  EXPECT_EQ(fits->hang_us, 9'223'372'036'851'825'000);
  EXPECT_EQ(fits->hang_count, 1'126'037'362'575u);
  EXPECT_FALSE(LegacyHangTotals({{8191, 1'126'037'362'576}}, Opts()));
  // The campaign's count: wrapped around, it read as -9.19 x 10^15 hang ms.
  EXPECT_FALSE(LegacyHangTotals({{8191, 1'130'000'000'000}}, Opts()));
  // Each bucket fits, their sum does not.
  EXPECT_FALSE(LegacyHangTotals({{8191, 1'000'000'000'000}, {4095, 300'000'000'000}}, Opts()));
  // Out-of-range keys never count, however large their counts.
  EXPECT_EQ(LegacyHangTotals({{16383, uint64_t{INT64_MAX}}, {127, uint64_t{INT64_MAX}}}, Opts())->hang_count,
            0u);
  // Counts alone: two buckets of INT64_MAX / 2 + 1 hangs overflow the count (weights of 0
  // are impossible in range, so the sum overflows first; either way: refused).
  EXPECT_FALSE(
      LegacyHangTotals({{255, uint64_t{INT64_MAX} / 2 + 1}, {511, uint64_t{INT64_MAX} / 2 + 1}}, Opts()));
}

TEST(RenderNativeFrame, UsesDebugNameAndLowerCaseOffsetWithoutLeadingZeros) {
  TextArena arena;
  std::vector<std::string_view> modules = {"xul.pdb", "ntdll.pdb"};
  EXPECT_EQ(*RenderNativeFrame(1, "6a2f0", modules, arena), "ntdll.pdb+0x6a2f0");
  EXPECT_EQ(*RenderNativeFrame(0, "001C2D3E", modules, arena), "xul.pdb+0x1c2d3e");
  EXPECT_EQ(*RenderNativeFrame(0, "0x00ab", modules, arena), "xul.pdb+0xab");
  EXPECT_EQ(*RenderNativeFrame(0, "0000", modules, arena), "xul.pdb+0x0");
}

TEST(RenderNativeFrame, IndexOutsideTheModuleTableRendersBareOffset) {
  TextArena arena;
  std::vector<std::string_view> modules = {"xul.pdb"};
  EXPECT_EQ(*RenderNativeFrame(-1, "1acc9", modules, arena), "0x1acc9");
  EXPECT_EQ(*RenderNativeFrame(1, "1acc9", modules, arena), "0x1acc9");
  EXPECT_EQ(*RenderNativeFrame(0, "1acc9", {""}, arena), "0x1acc9");
}

TEST(RenderNativeFrame, NonHexOffsetIsNotAFrame) {
  TextArena arena;
  EXPECT_FALSE(RenderNativeFrame(0, "xyz", {"xul.pdb"}, arena));
  EXPECT_FALSE(RenderNativeFrame(0, "", {"xul.pdb"}, arena));
  EXPECT_FALSE(RenderNativeFrame(0, "1234567g", {"xul.pdb"}, arena)) << "the last digit is not hex";
  EXPECT_FALSE(RenderNativeFrame(0, "0x00G1", {"xul.pdb"}, arena)) << "past the leading zeros";
  EXPECT_FALSE(RenderNativeFrame(-1, "00 ", {}, arena));
}

TEST(HangSignature, InnermostIsTheLastElement) {
  std::vector<std::string_view> stack = {"a", "b", "(content script)"};
  EXPECT_EQ(HangSignature(stack, {}, HangSignatureMode::kInnermost), "(content script)");
  EXPECT_EQ(HangSignature({}, {}, HangSignatureMode::kInnermost), "(empty stack)");
}

// An empty element names nothing (found by fuzz_parse: a legacy stack ["a", ""] gave a hang an
// empty signature): the innermost element that is not empty, or "(empty stack)" when all are.
TEST(HangSignature, AnEmptyElementIsPassedOverInEitherMode) {
  const std::vector<std::string_view> stack = {"a", "(wasm)", ""};
  const std::vector<bool> native = {false, false, false};
  EXPECT_EQ(HangSignature(stack, native, HangSignatureMode::kInnermost), "(wasm)");
  EXPECT_EQ(HangSignatureFrame(stack, native, HangSignatureMode::kInnermost), 1u);
  EXPECT_EQ(HangSignature(stack, native, HangSignatureMode::kInnermostLabel), "a");
  const std::vector<std::string_view> markers = {"(wasm)", ""};
  EXPECT_EQ(HangSignature(markers, {false, false}, HangSignatureMode::kInnermostLabel), "(wasm)");
  const std::vector<std::string_view> empty = {"", ""};
  for (HangSignatureMode mode : {HangSignatureMode::kInnermost, HangSignatureMode::kInnermostLabel}) {
    EXPECT_EQ(HangSignature(empty, {false, false}, mode), "(empty stack)");
    EXPECT_EQ(HangSignatureFrame(empty, {false, false}, mode), std::nullopt);
  }
}

TEST(HangSignature, InnermostLabelSkipsMarkersNativeFramesAndEmptyLabels) {
  std::vector<std::string_view> stack = {"nsRefreshDriver::Tick", "xul.pdb+0x2a0b11", "", "(unresolved)"};
  std::vector<bool> native = {false, true, false, false};
  EXPECT_EQ(HangSignature(stack, native, HangSignatureMode::kInnermostLabel), "nsRefreshDriver::Tick");
  // Nothing but markers: fall back to the innermost element.
  const std::vector<std::string_view> markers = {"(jit frame)", "(wasm)"};
  EXPECT_EQ(HangSignature(markers, {false, false}, HangSignatureMode::kInnermostLabel), "(wasm)");
  EXPECT_EQ(HangSignatureFrame(markers, {false, false}, HangSignatureMode::kInnermostLabel), 1u);
  EXPECT_EQ(HangSignatureFrame(stack, native, HangSignatureMode::kInnermostLabel), 0u);
}

// Thousandths of a millisecond, rounded half to even on the decimal digits (ADR 0017).
TEST(DecimalMsToUs, RoundsHalfToEvenOnTheDecimalDigits) {
  EXPECT_EQ(DecimalMsToUs("312.5"), 312'500);
  EXPECT_EQ(DecimalMsToUs("145"), 145'000);
  EXPECT_EQ(DecimalMsToUs("145.0"), 145'000);
  EXPECT_EQ(DecimalMsToUs("295.063584"), 295'064);  // .584 of a microsecond: up
  EXPECT_EQ(DecimalMsToUs("295.0634999999"), 295'063);
  EXPECT_EQ(DecimalMsToUs("200.0005"), 200'000);         // a tie: to the even neighbour
  EXPECT_EQ(DecimalMsToUs("200.0015"), 200'002);         // a tie: to the even neighbour
  EXPECT_EQ(DecimalMsToUs("200.00050000001"), 200'001);  // just over half
  EXPECT_EQ(DecimalMsToUs("0.0004"), 0);
  EXPECT_EQ(DecimalMsToUs("0.0005"), 0);
  EXPECT_EQ(DecimalMsToUs("0.0006"), 1);
  EXPECT_EQ(DecimalMsToUs("0.0000000001"), 0);
  EXPECT_EQ(DecimalMsToUs("0"), 0);
  EXPECT_EQ(DecimalMsToUs("0.000"), 0);
  EXPECT_EQ(DecimalMsToUs("2.950635840e2"), 295'064);
  EXPECT_EQ(DecimalMsToUs("1E2"), 100'000);
  EXPECT_EQ(DecimalMsToUs("15e-1"), 1'500);
  EXPECT_EQ(DecimalMsToUs("25e-4"), 2);  // 0.0025: a tie, to 2
  EXPECT_EQ(DecimalMsToUs("35e-4"), 4);  // 0.0035: a tie, to 4
  EXPECT_EQ(DecimalMsToUs("1e-400"), 0);
  EXPECT_EQ(DecimalMsToUs("1e12"), 1'000'000'000'000'000);
  EXPECT_EQ(DecimalMsToUs("1e20"), std::nullopt);  // does not fit
  for (const char* bad : {"", "-1", "1.", ".5", "1e", "1e+", "0x10", "1 ", "abc"}) {
    EXPECT_EQ(DecimalMsToUs(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace seismo
