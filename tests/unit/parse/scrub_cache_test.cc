// ScrubCache gives every frame what the scrubber gives it, whether the frame was seen
// before, pushed out by another, or too long to keep; a frame seen before is not searched
// again.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "parse/scrub_document.h"
#include "seismo/parse/nesting.h"

namespace seismo::parse_internal {
namespace {

std::string Expected(std::string_view frame) {
  std::string s(frame);
  Scrubber::Default().Scrub(s);
  return s;
}

std::vector<std::string> Frames(std::mt19937_64& rng, size_t n) {
  const std::vector<std::string> shapes = {
      "resource://gre/modules/Mod{}.jsm:{}",
      "f (https://host{}.example.com/a?s=SECRET:{})",
      "user{}@example{}.com",
      "C:\\Users\\alice{}\\AppData\\x{}.dll",
      "/home/bob{}/lib{}.so",
      "chrome://browser/content/tab{}.js:{}",
      "a/b/plain{}/path{}",
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    std::string f = shapes[rng() % shapes.size()];
    for (int k = 0; k < 2; ++k) f.replace(f.find("{}"), 2, std::to_string(rng() % 3000));
    if (rng() % 50 == 0) f += "/" + std::string(ScrubCache::kMaxBytes, 'x');  // too long to keep
    out.push_back(std::move(f));
  }
  return out;
}

TEST(ScrubCache, EveryFrameGetsWhatTheScrubberGivesItThroughCollisionsAndLongFrames) {
  std::mt19937_64 rng(3);
  const std::vector<std::string> pool = Frames(rng, 5000);  // more frames than slots
  ScrubCache cache;
  size_t changed = 0;
  for (int i = 0; i < 40000; ++i) {
    const std::string& frame = pool[rng() % pool.size()];
    const std::string expected = Expected(frame);
    const std::string* got = cache.Scrub(frame, Scrubber::Default());
    if (expected == frame) {
      ASSERT_EQ(got, nullptr) << frame;
    } else {
      ASSERT_NE(got, nullptr) << frame;
      ASSERT_EQ(*got, expected) << frame;
      ++changed;
    }
  }
  EXPECT_GT(changed, 10000u) << "the pool should hold frames the rules change";
}

// KeyByteCheck (the pre-check of every frame, in blocks of 16 and 32 bytes) says what
// Scrubber::MayChange says, for texts of every length around its block sizes with a key byte
// anywhere (the first and last bytes, a block's edges) or none.
TEST(ScrubDocument, KeyByteCheckAgreesWithTheScrubbers) {
  // Built as the depth scan is (the parse stage's flags): with AVX2, the blocks are tested.
  EXPECT_EQ(KeyByteCheck::Kernel(), DepthScanKernel().substr(0, 4) == "avx2" ? "avx2" : "words");
  const Scrubber& scrubber = Scrubber::Default();
  const KeyByteCheck check(scrubber);
  std::string keys;
  for (uint64_t w : scrubber.key_words()) keys += static_cast<char>(w & 0xff);
  ASSERT_FALSE(keys.empty());
  std::mt19937_64 rng(11);
  const std::string plain = "abcdefghijklmnopqrstuvwxyz:_.+0123456789ABCDEF";
  size_t may = 0;
  for (size_t n = 0; n <= 100; ++n) {
    for (int round = 0; round < 40; ++round) {
      std::string text(n, 'x');
      for (char& c : text) c = plain[rng() % plain.size()];
      // Half the texts hold key bytes (one, or a few), at random places or at a block edge.
      if (n > 0 && round % 2 == 0) {
        const size_t edges[] = {0, n - 1, 15 % n, 16 % n, 31 % n, 32 % n, rng() % n};
        for (int k = 0; k <= round % 3; ++k) text[edges[rng() % 7]] = keys[rng() % keys.size()];
      }
      ASSERT_EQ(check.MayChange(text), scrubber.MayChange(text)) << n << " '" << text << "'";
      may += scrubber.MayChange(text) ? 1 : 0;
    }
  }
  EXPECT_GT(may, 1000u) << "both answers were met";
  EXPECT_LT(may, 101u * 40u);
}

TEST(ScrubCache, AFrameSeenBeforeIsNotSearchedAgain) {
  ScrubCache cache;
  const std::string url = "f (https://bank.example.com/a?s=SECRET:42)";
  const std::string plain_with_slash = "a/b/c";
  ASSERT_NE(cache.Scrub(url, Scrubber::Default()), nullptr);
  EXPECT_EQ(*cache.Scrub(url, Scrubber::Default()), "f (https://<host>/<path>:42)");
  EXPECT_EQ(cache.Scrub(plain_with_slash, Scrubber::Default()), nullptr);
  EXPECT_EQ(cache.Scrub(plain_with_slash, Scrubber::Default()), nullptr);
  EXPECT_EQ(cache.searches(), 2u);
  const std::string long_frame = "https://x.example.com/" + std::string(ScrubCache::kMaxBytes, 'p');
  ASSERT_NE(cache.Scrub(long_frame, Scrubber::Default()), nullptr);
  ASSERT_NE(cache.Scrub(long_frame, Scrubber::Default()), nullptr);
  EXPECT_EQ(cache.searches(), 4u) << "a frame too long to keep is searched every time";
}

TEST(ScrubCache, AnotherScrubberDoesNotTakeTheFirstOnesResults) {
  auto other = Scrubber::Parse("rule mail\n  when @\n  match @\n  replace <at>\n", "t");
  ASSERT_TRUE(other) << other.error().message();
  ScrubCache cache;
  const std::string mail = "user7@example7.com";
  ASSERT_NE(cache.Scrub(mail, Scrubber::Default()), nullptr);
  EXPECT_EQ(*cache.Scrub(mail, Scrubber::Default()), Expected(mail));
  const std::string* got = cache.Scrub(mail, **other);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(*got, "user7<at>example7.com");
  EXPECT_EQ(*cache.Scrub(mail, Scrubber::Default()), Expected(mail));
  EXPECT_EQ(cache.searches(), 3u) << "each change of scrubber searches again";
}

}  // namespace
}  // namespace seismo::parse_internal
