// StackOrder (the warm-up's flame graph stacks, kept from round to round) against a sort of
// each round's stacks: over rounds of stacks that come, leave and change sums, every entry is
// in frame order (by the frames' texts) with its sums, its frames shared with the one before and the running
// sums; brought from the round before while few changed, made anew otherwise. And the flame tree from an
// order is, node for node, the tree BuildFlameTree makes from the same stacks in a span, under every bound
// and with many ties.
#include "seismo/query/stack_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "seismo/aggregate/row_changes.h"
#include "seismo/query/flame_tree.h"

namespace seismo {
namespace {

// Distinct stacks over a small vocabulary, so they share prefixes and some end where others
// go on; and one wide node (`wide` leaves under one caller: past 4 096, the sorts by frame
// take their radix paths).
std::vector<StackId> MakeStacks(Symbols& symbols, uint64_t seed, size_t n, size_t wide = 300) {
  std::mt19937_64 rng(seed);
  std::vector<Sym> vocabulary;
  for (int i = 0; i < 12; ++i) vocabulary.push_back(symbols.Intern("frame" + std::to_string(i)));
  std::vector<StackId> ids;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Sym> f;
    const size_t depth = rng() % 7;
    for (size_t d = 0; d < depth; ++d) f.push_back(vocabulary[rng() % (d < 2 ? 3 : vocabulary.size())]);
    ids.push_back(symbols.InternStack(f));
  }
  // The leaves' frame ids run against their stacks' ids, so stacks by id are not in frame order.
  for (size_t i = wide; i-- > 0;) symbols.Intern("leaf" + std::to_string(i));
  for (size_t i = 0; i < wide; ++i) {
    const std::vector<Sym> f{vocabulary[0], vocabulary[1], symbols.Intern("leaf" + std::to_string(i))};
    ids.push_back(symbols.InternStack(f));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// A round's stacks as IdSums gives them: by id, one entry each.
using Selected = std::map<StackId, HangSums>;
std::vector<IdSums::Entry> BySum(const Selected& selected) {
  std::vector<IdSums::Entry> out;
  for (const auto& [id, sums] : selected) out.push_back({0, id, sums});
  return out;
}

HangSums RandomSums(std::mt19937_64& rng, uint64_t us_values) {
  return {static_cast<int64_t>(rng() % us_values), static_cast<int64_t>(1 + rng() % 3)};
}

void ExpectIsTheFrameOrder(const StackOrder& order, const Selected& selected, const Symbols& symbols,
                           const std::string& where) {
  struct Want {
    std::vector<Sym> frames;
    StackId id;
    HangSums sums;
  };
  std::vector<Want> want;
  for (const auto& [id, sums] : selected) {
    const std::span<const Sym> f = symbols.Frames(id);
    want.push_back({{f.begin(), f.end()}, id, sums});
  }
  // Frame order: frame by frame from the root, by text (then id), a prefix first.
  auto named = [&symbols](const std::vector<Sym>& frames) {
    std::vector<std::pair<std::string_view, Sym>> out;
    for (Sym f : frames) out.emplace_back(symbols.Text(f), f);
    return out;
  };
  std::sort(want.begin(), want.end(),
            [&named](const Want& a, const Want& b) { return named(a.frames) < named(b.frames); });
  ASSERT_EQ(order.size(), want.size()) << where;
  int64_t us = 0, count = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const StackOrder::Entry& e = order.entries()[i];
    EXPECT_EQ(e.id, want[i].id) << where << " at " << i;
    const std::span<const Sym> f = e.Frames();
    EXPECT_EQ(std::vector<Sym>(f.begin(), f.end()), want[i].frames) << where << " at " << i;
    EXPECT_EQ(e.hang_us, want[i].sums.hang_us) << where << " at " << i;
    EXPECT_EQ(e.hang_count, want[i].sums.hang_count) << where << " at " << i;
    size_t common = 0;
    if (i > 0) {
      const std::vector<Sym>& a = want[i - 1].frames;
      const std::vector<Sym>& b = want[i].frames;
      while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
    }
    EXPECT_EQ(e.common, common) << where << " at " << i;
    EXPECT_EQ(order.HangUs(0, i), us) << where << " at " << i;
    EXPECT_EQ(order.HangCount(0, i), count) << where << " at " << i;
    us += want[i].sums.hang_us;
    count += want[i].sums.hang_count;
  }
  EXPECT_EQ(order.HangUs(0, want.size()), us) << where;
}

TEST(StackOrder, IsTheFrameOrderOfEachRoundsStacks) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Symbols symbols;
    const std::vector<StackId> stacks = MakeStacks(symbols, seed, 2500);
    std::mt19937_64 rng(seed * 31);
    Selected selected;
    for (StackId id : stacks) {
      if (rng() % 10 < 7) selected[id] = RandomSums(rng, 1000);
    }
    StackOrder order;
    size_t carried = 0;
    for (int round = 0; round < 40; ++round) {
      const std::string where = "seed " + std::to_string(seed) + " round " + std::to_string(round);
      // Stacks come, leave and change; every tenth round most of them (made anew), one round none.
      const size_t before = selected.size();
      size_t moved = 0;
      const uint64_t churn = round % 10 == 9 ? 90 : round == 5 ? 0 : 3;
      for (StackId id : stacks) {
        if (rng() % 100 >= churn) continue;
        if (selected.erase(id) == 0) selected[id] = RandomSums(rng, 1000);
        ++moved;
      }
      for (auto& entry : selected) {
        if (rng() % 4 == 0) entry.second = RandomSums(rng, 1000);
      }
      const std::vector<IdSums::Entry> by_stack = BySum(selected);
      const bool from_previous = order.Update(by_stack, symbols, nullptr);
      EXPECT_EQ(from_previous, round > 0 && before > 0 && CheaperThanAWalk(moved, before)) << where;
      carried += from_previous ? 1 : 0;
      ExpectIsTheFrameOrder(order, selected, symbols, where);
      // What the warm-up holds from the budget for it covers what it holds.
      EXPECT_LE(order.MemoryBytes(), StackOrder::BytesFor(stacks.size(), symbols.stacks().IdBound()))
          << where;
    }
    EXPECT_GE(carried, 30u) << seed;
    // No stacks, then some again: made anew from nothing.
    const size_t n = order.size();
    EXPECT_EQ(order.Update({}, symbols, nullptr), CheaperThanAWalk(n, n));
    ExpectIsTheFrameOrder(order, {}, symbols, "empty");
    EXPECT_FALSE(order.Update(BySum(selected), symbols, nullptr));
    ExpectIsTheFrameOrder(order, selected, symbols, "after empty");
    // Another symbol table (a restore, a scenario's own): its ids mean other stacks.
    Symbols other;
    const std::vector<StackId> theirs = MakeStacks(other, seed + 100, 200);
    Selected their_selected;
    for (StackId id : theirs) their_selected[id] = RandomSums(rng, 1000);
    EXPECT_FALSE(order.Update(BySum(their_selected), other, nullptr));
    ExpectIsTheFrameOrder(order, their_selected, other, "other symbols");
    // Cleared, it gives its memory back.
    order.Clear();
    EXPECT_LT(order.MemoryBytes(), 64u);
  }
}

// Every field of every node, in the order the nodes were made.
std::string Dump(const FlameTree& t) {
  std::string out = t.truncated ? "truncated\n" : "whole\n";
  for (const FlameNode& n : t.nodes) {
    out += std::to_string(n.frame) + (n.other ? " other" : "") + " us=" + std::to_string(n.hang_us) +
           " count=" + std::to_string(n.hang_count) + (n.ends_here ? " ends" : "") +
           " self=" + std::to_string(n.self_us) + "/" + std::to_string(n.self_count) + " kids=";
    for (uint32_t k : n.children) out += std::to_string(k) + ",";
    out += '\n';
  }
  return out;
}

// A node of 6 000 children and 6 000 other stacks: the radix sorts of both builders.
TEST(StackOrder, AWideNodesTreeIsTheTreeOfItsStacks) {
  Symbols symbols;
  const std::vector<StackId> stacks = MakeStacks(symbols, 3, 6000, 6000);
  std::mt19937_64 rng(11);
  Selected selected;
  for (StackId id : stacks) selected[id] = RandomSums(rng, 5);
  StackOrder order;
  for (int round = 0; round < 3; ++round) {
    for (StackId id : stacks) {
      if (rng() % 100 < 3 && selected.erase(id) == 0) selected[id] = RandomSums(rng, 5);
    }
    const std::vector<IdSums::Entry> by_stack = BySum(selected);
    order.Update(by_stack, symbols, nullptr);
    ExpectIsTheFrameOrder(order, selected, symbols, "round " + std::to_string(round));
    std::vector<FlameStack> spans;
    for (const IdSums::Entry& e : by_stack)
      spans.push_back({symbols.Frames(e.id), e.sums.hang_us, e.sums.hang_count});
    std::shuffle(spans.begin(), spans.end(), rng);
    for (size_t bound : {size_t{50}, size_t{5'000}, size_t{1'000'000}}) {
      const AnswerLimits limits{.max_nodes = bound};
      EXPECT_EQ(Dump(BuildFlameTree(order, symbols, limits)), Dump(BuildFlameTree(spans, symbols, limits)))
          << "round " << round << " nodes " << bound;
    }
  }
}

TEST(StackOrder, ItsFlameTreeIsTheTreeOfItsStacks) {
  const AnswerLimits bounds[] = {{.max_nodes = 1},   {.max_nodes = 2},   {.max_nodes = 3},
                                 {.max_nodes = 5},   {.max_nodes = 8},   {.max_nodes = 13},
                                 {.max_nodes = 40},  {.max_nodes = 300}, {.max_nodes = 1'000'000},
                                 {.max_bytes = 900}, {.max_bytes = 4000}};
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    for (uint64_t us_values : {uint64_t{3}, uint64_t{1000}}) {  // many ties, few
      Symbols symbols;
      const std::vector<StackId> stacks = MakeStacks(symbols, seed, 400);
      std::mt19937_64 rng(seed * 7 + us_values);
      Selected selected;
      for (StackId id : stacks) {
        if (rng() % 10 < 8) selected[id] = RandomSums(rng, us_values);
      }
      StackOrder order;
      for (int round = 0; round < 6; ++round) {
        for (StackId id : stacks) {
          if (rng() % 100 < 4 && selected.erase(id) == 0) selected[id] = RandomSums(rng, us_values);
        }
        const std::vector<IdSums::Entry> by_stack = BySum(selected);
        order.Update(by_stack, symbols, nullptr);
        std::vector<FlameStack> spans;
        for (const IdSums::Entry& e : by_stack) {
          spans.push_back({symbols.Frames(e.id), e.sums.hang_us, e.sums.hang_count});
        }
        for (const AnswerLimits& limits : bounds) {
          EXPECT_EQ(Dump(BuildFlameTree(order, symbols, limits)),
                    Dump(BuildFlameTree(spans, symbols, limits)))
              << "seed " << seed << " ties " << us_values << " round " << round << " nodes "
              << limits.max_nodes << " bytes " << limits.max_bytes;
        }
      }
    }
  }
}

// Siblings whose names share long prefixes (one namespace's functions), end inside another's
// (a prefix of it), or hold zero bytes are in the order of their texts, made anew and merged.
TEST(StackOrder, NamesThatShareLongPrefixesAreInTextOrder) {
  Symbols symbols;
  const Sym root = symbols.Intern("root");
  std::vector<std::string> names = {"x",
                                    std::string("x\0", 2),
                                    std::string("x\0\0", 3),
                                    "x\x01",
                                    "",
                                    std::string(16, 'a'),
                                    std::string(17, 'a'),
                                    std::string(32, 'a'),
                                    std::string(33, 'a'),
                                    std::string(32, 'a') + "b"};
  // Interned longest first: ids that run against the texts' order.
  names.insert(names.begin(), {std::string("y\0\0", 3), std::string("y\0", 2), "y"});
  for (size_t at :
       {7, 8, 9, 15, 16, 17, 24, 32}) {  // two texts that differ first at byte `at`, then the other way
    names.push_back(std::string(at, 'a') + "ba");
    names.push_back(std::string(at, 'a') + "ab");
  }
  const size_t picked = names.size();  // these, in both rounds; of the rest, a tenth come later
  std::mt19937_64 rng(5);
  for (int i = 0; i < 5000; ++i) {  // past kRadixRunsFrom: the radix path
    std::string name = "mozilla::dom::ContentParent::";
    for (int k = rng() % 4; k > 0; --k) name += "Recv";
    name += std::to_string(rng() % 3000);
    names.push_back(name);
  }
  std::shuffle(names.begin() + static_cast<ptrdiff_t>(picked), names.end(), rng);
  // The texts interned first, the stacks made in the reverse order: stacks by id are not in the
  // order of their frames' ids (the radix sort's path).
  std::vector<Sym> leaves;
  for (const std::string& name : names) leaves.push_back(symbols.Intern(name));
  // The picked names again under another caller, behind a prefix they all share there.
  const Sym other = symbols.Intern("other");
  std::vector<Sym> prefixed;
  for (size_t i = 0; i < picked; ++i) prefixed.push_back(symbols.Intern("mozilla::" + names[i]));
  Selected selected, later;
  for (size_t i = names.size(); i-- > 0;) {
    const std::vector<Sym> f{root, leaves[i]};
    (i >= picked && i % 10 == 0 ? later : selected)[symbols.InternStack(f)] = {
        static_cast<int64_t>(rng() % 3), 1};
  }
  for (size_t i = picked; i-- > 0;) {
    const std::vector<Sym> f{other, prefixed[i]};
    selected[symbols.InternStack(f)] = {1, 1};
  }
  StackOrder order;
  EXPECT_FALSE(order.Update(BySum(selected), symbols, nullptr));
  ExpectIsTheFrameOrder(order, selected, symbols, "made anew");
  for (const auto& [id, sums] : later) selected[id] = sums;  // a tenth come: merged in
  EXPECT_TRUE(order.Update(BySum(selected), symbols, nullptr));
  ExpectIsTheFrameOrder(order, selected, symbols, "merged");
  std::vector<FlameStack> spans;
  for (const IdSums::Entry& e : BySum(selected))
    spans.push_back({symbols.Frames(e.id), e.sums.hang_us, e.sums.hang_count});
  for (size_t bound : {size_t{3}, size_t{100}, size_t{1'000'000}}) {
    const AnswerLimits limits{.max_nodes = bound};
    EXPECT_EQ(Dump(BuildFlameTree(order, symbols, limits)), Dump(BuildFlameTree(spans, symbols, limits)))
        << bound;
  }
}

// An order never updated, or cleared, is no stacks: a tree of the root alone.
TEST(StackOrder, WithNoStacksItsTreeIsTheRootAlone) {
  Symbols symbols;
  StackOrder order;
  for (int i = 0; i < 2; ++i) {
    const FlameTree t = BuildFlameTree(order, symbols, AnswerLimits{});
    ASSERT_EQ(t.nodes.size(), 1u);
    EXPECT_EQ(t.nodes[0].hang_us, 0);
    EXPECT_TRUE(t.nodes[0].children.empty());
    const std::vector<Sym> f{symbols.Intern("a")};
    order.Update(BySum({{symbols.InternStack(f), {5, 1}}}), symbols, nullptr);
    EXPECT_EQ(BuildFlameTree(order, symbols, AnswerLimits{}).nodes[0].hang_us, 5);
    order.Clear();
  }
}

// Siblings of equal hang time and count rank by their frame's text, not its id: interned
// "b", "a", "c" (ids in that order), one place left under "x" goes to "a", either way.
TEST(StackOrder, SiblingsThatTieRankByText) {
  Symbols symbols;
  const Sym x = symbols.Intern("x");
  Selected selected;
  for (const char* leaf : {"b", "a", "c"}) {
    const std::vector<Sym> f{x, symbols.Intern(leaf)};
    selected[symbols.InternStack(f)] = {10, 1};
  }
  const std::vector<IdSums::Entry> by_stack = BySum(selected);
  StackOrder order;
  order.Update(by_stack, symbols, nullptr);
  std::vector<FlameStack> spans;
  for (const IdSums::Entry& e : by_stack)
    spans.push_back({symbols.Frames(e.id), e.sums.hang_us, e.sums.hang_count});
  const AnswerLimits limits{.max_nodes = 4};  // the root, x, one leaf and x's "(other)"
  for (const FlameTree& t :
       {BuildFlameTree(order, symbols, limits), BuildFlameTree(spans, symbols, limits)}) {
    ASSERT_EQ(t.nodes.size(), 4u);
    const FlameNode& x_node = t.nodes[t.nodes[0].children.at(0)];
    ASSERT_EQ(x_node.children.size(), 2u);
    const FlameNode& other = t.nodes[x_node.children[0]];  // heaviest first
    const FlameNode& kept = t.nodes[x_node.children[1]];
    EXPECT_TRUE(other.other);
    EXPECT_EQ(other.hang_us, 20);
    EXPECT_EQ(symbols.Text(kept.frame), "a");
  }
}

}  // namespace
}  // namespace seismo
