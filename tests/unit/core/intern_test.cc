// InternTable against a trivial model (std::map), under threads, through sweeps and pins.
#include "seismo/core/intern.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "seismo/core/hash.h"
#include "seismo/core/symbols.h"

namespace seismo {
namespace {

std::vector<uint64_t> Bits(std::span<const InternId> ids) {
  std::vector<uint64_t> bits;
  for (InternId id : ids) {
    if (id / 64 >= bits.size()) bits.resize(id / 64 + 1, 0);
    bits[id / 64] |= uint64_t{1} << (id % 64);
  }
  return bits;
}
std::vector<uint64_t> Bits(std::initializer_list<InternId> ids) {
  return Bits(std::span<const InternId>(ids.begin(), ids.size()));
}

TEST(InternTable, EqualBytesGetOneIdAndReadBack) {
  InternTable t;
  const InternId a = t.Intern("alpha");
  const InternId b = t.Intern("beta");
  EXPECT_NE(a, kNoId);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.Intern("alpha"), a);
  EXPECT_EQ(t.Bytes(a), "alpha");
  EXPECT_EQ(t.Hash(a), Hash64("alpha"));
  EXPECT_EQ(t.Find("beta"), b);
  EXPECT_FALSE(t.Find("gamma").has_value());
  const InternId empty = t.Intern("");
  EXPECT_EQ(t.Bytes(empty), "");
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(t.Bytes(t.Intern(with_nul)), with_nul);
  EXPECT_EQ(t.size(), 4u);
}

// A stripe's set holds ids and compares through their entries: bytes that share a hash
// (forced here) get ids of their own, are found again, and sweeping one keeps the other.
TEST(InternTable, BytesWithOneHashGetIdsOfTheirOwn) {
  InternTable t;
  constexpr uint64_t kHash = 42;
  const InternId a = t.Intern("alpha", kHash);
  const InternId b = t.Intern("beta", kHash);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.Intern("alpha", kHash), a);
  EXPECT_EQ(t.Intern("beta", kHash), b);
  EXPECT_EQ(t.Bytes(b), "beta");
  EXPECT_EQ(t.Hash(b), kHash);
  EXPECT_EQ(t.Sweep(Bits({b})), 1u);
  EXPECT_EQ(t.Intern("beta", kHash), b);
  const InternId again = t.Intern("alpha", kHash);
  EXPECT_NE(again, kNoId);
  EXPECT_EQ(t.Bytes(again), "alpha");
  EXPECT_EQ(t.size(), 2u);
}

// A stripe's set hashes an id by its entry's hash without the stripe's bits: strings whose
// hashes share the high half and the stripe (the low bits), the high half alone, or the
// stripe alone all keep ids of their own through many growths of the sets, are found again,
// and sweeping some keeps the rest findable.
TEST(InternTable, SlotsFoundAgainAfterTheSetGrewWhateverTheirHashesShare) {
  InternTable t;
  constexpr size_t kEach = 4000;
  std::vector<std::pair<std::string, uint64_t>> strings;
  for (size_t i = 0; i < kEach; ++i) {
    strings.emplace_back("same" + std::to_string(i), uint64_t{7} << 32 | 5);        // high half and stripe
    strings.emplace_back("tag" + std::to_string(i), uint64_t{7} << 32 | (i << 6));  // high half, stripe 0
    strings.emplace_back("stripe" + std::to_string(i), uint64_t{i} << 32 | 5);      // stripe 5
  }
  std::vector<InternId> ids;
  for (const auto& [bytes, hash] : strings) ids.push_back(t.Intern(bytes, hash));
  EXPECT_EQ(t.size(), strings.size());
  EXPECT_EQ(std::set<InternId>(ids.begin(), ids.end()).size(), strings.size());
  for (size_t i = 0; i < strings.size(); ++i) {
    EXPECT_EQ(t.Intern(strings[i].first, strings[i].second), ids[i]) << strings[i].first;
    EXPECT_EQ(t.Bytes(ids[i]), strings[i].first);
  }
  // Keep every other one; the swept ones come back as new ids.
  std::vector<InternId> kept;
  for (size_t i = 0; i < ids.size(); i += 2) kept.push_back(ids[i]);
  EXPECT_EQ(t.Sweep(Bits(kept)), strings.size() / 2);
  for (size_t i = 0; i < strings.size(); i += 2) {
    EXPECT_EQ(t.Intern(strings[i].first, strings[i].second), ids[i]) << strings[i].first;
  }
  for (size_t i = 1; i < strings.size(); i += 2) {
    const InternId again = t.Intern(strings[i].first, strings[i].second);
    EXPECT_EQ(t.Bytes(again), strings[i].first);
  }
  EXPECT_EQ(t.size(), strings.size());
}

// Room reserved ahead changes no id and no count: two tables, one with room for all the
// strings and one with none, give the same ids in the same order, find them again alike,
// and count the same bytes (the room is in no MemoryBytes()).
TEST(InternTable, ReservedRoomChangesNoIdAndNoCount) {
  InternTable roomy;
  InternTable plain;
  roomy.Reserve(20000);
  for (size_t i = 0; i < 20000; ++i) {
    const std::string s = "frame" + std::to_string(i % 15000);
    ASSERT_EQ(roomy.Intern(s), plain.Intern(s)) << s;
  }
  EXPECT_EQ(roomy.size(), 15000u);
  EXPECT_EQ(roomy.size(), plain.size());
  EXPECT_EQ(roomy.MemoryBytes(), plain.MemoryBytes());
  for (size_t i = 0; i < 15000; i += 7) {
    const std::string s = "frame" + std::to_string(i);
    EXPECT_EQ(roomy.Find(s), plain.Find(s)) << s;
  }
  roomy.Reserve(0);  // less room than it holds: nothing shrinks, nothing is lost
  EXPECT_EQ(roomy.Find("frame14999"), plain.Find("frame14999"));
}

// Four threads intern overlapping sets through their own caches: every string gets
// exactly one id, the same for every thread, and reads back as itself.
TEST(InternTable, ThreadsAgreeOnEveryIdLikeAModel) {
  InternTable t;
  constexpr int kThreads = 4, kStrings = 20'000;
  std::vector<std::vector<InternId>> got(kThreads, std::vector<InternId>(kStrings));
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&, w] {
      InternCache cache(&t, 1024);  // small: misses and evictions happen
      for (int k = 0; k < kStrings; ++k) {
        const int i = (k * 7919 + w * 5003) % kStrings;  // a permutation, each thread from elsewhere
        got[w][i] = cache.Intern("frame-" + std::to_string(i % (kStrings / 2)) + (i % 3 == 0 ? "x" : ""));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::map<std::string, InternId> model;
  for (int i = 0; i < kStrings; ++i) {
    const std::string s = "frame-" + std::to_string(i % (kStrings / 2)) + (i % 3 == 0 ? "x" : "");
    for (int w = 0; w < kThreads; ++w) {
      ASSERT_EQ(got[w][i], got[0][i]);
      EXPECT_EQ(t.Bytes(got[w][i]), s);
    }
    auto [it, inserted] = model.try_emplace(s, got[0][i]);
    if (!inserted) EXPECT_EQ(it->second, got[0][i]) << s;
  }
  // Distinct strings, distinct ids.
  std::map<InternId, std::string> back;
  for (const auto& [s, id] : model) EXPECT_TRUE(back.emplace(id, s).second);
  EXPECT_EQ(t.size(), model.size());
}

TEST(InternTable, SweepDropsUnmarkedIdsAndKeepsMarkedAndPermanentOnes) {
  InternTable t;
  const InternId keep = t.Intern("keep");
  const InternId drop = t.Intern("drop");
  const InternId fixed = t.InternPermanent("fixed");
  EXPECT_EQ(t.Sweep(Bits({keep})), 1u);
  EXPECT_EQ(t.Find("keep"), keep);
  EXPECT_EQ(t.Find("fixed"), fixed);
  EXPECT_FALSE(t.Find("drop").has_value());
  EXPECT_EQ(t.size(), 2u);
  // No pin: the dropped id is free at once and given out again.
  const InternId again = t.Intern("new");
  EXPECT_EQ(again, drop);
  EXPECT_EQ(t.Bytes(again), "new");
}

// A reader's pin keeps entries swept after it readable, and their ids out of reuse,
// until it is released.
TEST(InternTable, PinnedReadersKeepSweptEntriesUntilReleased) {
  InternTable t;
  const InternId old_id = t.Intern("old");
  const size_t bytes_before = t.MemoryBytes();
  auto pin = t.Pin();
  EXPECT_EQ(t.Sweep({}), 1u);
  EXPECT_FALSE(t.Find("old").has_value());
  EXPECT_EQ(t.Bytes(old_id), "old");  // still readable through the pin
  const InternId fresh = t.Intern("fresh");
  EXPECT_NE(fresh, old_id);            // not reused while pinned
  EXPECT_GE(t.MemoryBytes(), bytes_before);
  auto later_pin = t.Pin();  // taken after the sweep: does not hold the swept entry
  pin.reset();
  EXPECT_EQ(t.Bytes(old_id), "");  // freed
  EXPECT_EQ(t.Intern("reuse"), old_id);
  later_pin.reset();
}

TEST(InternCache, RevalidateForgetsIdsOfASweptTable) {
  InternTable t;
  InternCache cache(&t);
  const InternId a = cache.Intern("a");
  EXPECT_EQ(cache.Intern("a"), a);
  t.Sweep({});
  cache.Revalidate();
  const InternId b = cache.Intern("b");  // takes a's freed id
  EXPECT_EQ(b, a);
  const InternId a2 = cache.Intern("a");
  EXPECT_NE(a2, b);
  EXPECT_EQ(t.Bytes(a2), "a");
  EXPECT_EQ(t.Bytes(b), "b");
}

TEST(Symbols, StacksAreFrameIdsAndHashByTheirTexts) {
  Symbols s;
  const StackId x = s.InternStack(std::vector<std::string>{"main", "f", "g"});
  EXPECT_EQ(s.StackText(x, "/"), "main/f/g");
  ASSERT_EQ(s.Frames(x).size(), 3u);
  EXPECT_EQ(s.Text(s.Frames(x)[1]), "f");
  EXPECT_EQ(s.InternStack(std::vector<std::string>{"main", "f", "g"}), x);
  EXPECT_NE(s.InternStack(std::vector<std::string>{"main", "f"}), x);
  const uint64_t hashes[] = {Hash64("main"), Hash64("f"), Hash64("g")};
  EXPECT_EQ(s.StackHash(x), StackContentHash(hashes));
  EXPECT_EQ(s.StackText(s.other_stack(), "/"), "(other)");
  EXPECT_TRUE(s.Frames(s.empty_stack()).empty());
  EXPECT_EQ(s.Text(s.unknown()), "unknown");
  // A frame list and a stack are different tables: the same bytes never collide.
  EXPECT_EQ(s.StackText(s.InternStack(std::vector<std::string>{""}), "/"), "");
  EXPECT_NE(s.InternStack(std::vector<std::string>{""}), s.empty_stack());
}

}  // namespace
}  // namespace seismo
