// `seismo generate --profile dense` (sim/synth.h, SynthProfile::kDense): the bench's
// dense corpus of issue 15. Ordinary-sized documents with a long tail of distinct
// stacks, as seismo's own parser sees them, deterministic for a seed.
#include <gtest/gtest.h>

#include <string>
#include <unordered_set>

#include "seismo/sim/synth.h"
#include "seismo/parse/parser.h"
#include "seismo/signature/generator.h"
#include "test_scale.h"

namespace seismo {
namespace {

Synth Dense(uint64_t seed) {
  SynthOptions o;
  o.seed = seed;
  o.profile = SynthProfile::kDense;
  return Synth(o);
}

std::string StackKey(const ParsedDocument& d, const HangRecord& h) {
  std::string key;
  for (std::string_view f : d.Stack(h)) {
    key += f;
    key += '\x1f';
  }
  return key;
}

// What a corpus of one kind looks like through the parser.
struct Seen {
  size_t documents = 0;
  size_t bytes = 0;
  size_t rejected = 0;
  size_t hangs = 0;
  size_t native_frames = 0;
  std::unordered_set<std::string> stacks;
  std::unordered_set<std::string> crash_signatures;
};

template <typename Make>
Seen ParseAll(size_t n, const SignatureGenerator* signatures, Make&& make) {
  Parser parser(ParseOptions{}, signatures);
  Seen seen;
  for (size_t i = 0; i < n; ++i) {
    const std::string doc = make(i);
    ++seen.documents;
    seen.bytes += doc.size();
    auto parsed = parser.Parse(doc);
    if (!parsed.ok()) {
      ++seen.rejected;
      continue;
    }
    const ParsedDocument& d = parsed.value();
    for (const HangRecord& h : d.hangs) {
      ++seen.hangs;
      seen.stacks.insert(StackKey(d, h));
      for (std::string_view f : d.Stack(h)) seen.native_frames += f.find("+0x") != std::string_view::npos;
    }
    if (parsed.value().crash) seen.crash_signatures.insert(parsed.value().crash->signature);
  }
  return seen;
}

// Issue 15: "main pings of ~3 KB with >= 50 000 distinct stacks per 100 000 pings".
// Fresh stacks grow with the count, so a smaller sample (under a sanitizer) has at
// least the same share.
TEST(SynthDense, MainPingsOfAboutThreeKbHaveAtLeastOneDistinctStackPerTwoPings) {
  const size_t n = test::Scaled(100'000, 20);
  Synth synth = Dense(42);
  const Seen seen = ParseAll(n, nullptr, [&](size_t i) { return synth.Main(i); });
  EXPECT_EQ(seen.rejected, 0u);
  const double mean_kb = static_cast<double>(seen.bytes) / static_cast<double>(n) / 1024.0;
  EXPECT_GE(mean_kb, 2.0);
  EXPECT_LE(mean_kb, 4.0);
  EXPECT_GE(seen.stacks.size(), n / 2) << n << " pings, " << seen.hangs << " hangs";
}

TEST(SynthDense, BhrPingsAreSmallAndCarryNativeFramesWithManyDistinctStacks) {
  const size_t n = test::Scaled(10'000, 10);
  Synth synth = Dense(42);
  const Seen seen = ParseAll(n, nullptr, [&](size_t i) { return synth.Bhr(i); });
  EXPECT_EQ(seen.rejected, 0u);
  EXPECT_LE(static_cast<double>(seen.bytes) / static_cast<double>(n), 6 * 1024.0);
  EXPECT_GE(seen.hangs, 3 * n);  // 1-8 hangs in four pings of five
  EXPECT_GE(seen.native_frames, 5 * seen.hangs);
  EXPECT_GE(seen.stacks.size(), seen.hangs / 3);
}

TEST(SynthDense, CrashesSpreadOverManyMoreStacksThanTheDefaultProfile) {
  auto signatures = SignatureGenerator::LoadDefault();
  ASSERT_TRUE(signatures) << signatures.error().message();
  const size_t n = test::Scaled(4'000, 10);
  Synth dense = Dense(7);
  SynthOptions o;
  o.seed = 7;
  Synth plain(o);
  const Seen d = ParseAll(n, signatures->get(), [&](size_t i) { return dense.ProcessedCrash(i); });
  const Seen p = ParseAll(n, signatures->get(), [&](size_t i) { return plain.ProcessedCrash(i); });
  const Seen dp = ParseAll(n, signatures->get(), [&](size_t i) { return dense.CrashPing(i); });
  EXPECT_EQ(d.rejected + p.rejected + dp.rejected, 0u);
  EXPECT_EQ(d.documents, n);
  EXPECT_GT(d.crash_signatures.size(), p.crash_signatures.size());
  EXPECT_GT(dp.crash_signatures.size(), 1u);
}

TEST(SynthDense, SameSeedSameBytesAndTheProfileChangesTheDocuments) {
  Synth a = Dense(5), b = Dense(5), c = Dense(6);
  SynthOptions o;
  o.seed = 5;
  Synth plain(o);
  for (uint64_t i = 0; i < 50; ++i) {
    const std::string main = a.Main(i), bhr = a.Bhr(i), crash = a.ProcessedCrash(i), ping = a.CrashPing(i);
    EXPECT_EQ(main, b.Main(i));
    EXPECT_EQ(bhr, b.Bhr(i));
    EXPECT_EQ(crash, b.ProcessedCrash(i));
    EXPECT_EQ(ping, b.CrashPing(i));
    EXPECT_NE(main, c.Main(i));
    EXPECT_NE(bhr, plain.Bhr(i));
  }
}

}  // namespace
}  // namespace seismo
