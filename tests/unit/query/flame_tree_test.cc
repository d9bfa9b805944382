// BuildFlameTree against a naive call tree (every stack inserted frame by frame into maps) on
// random stacks: every node's sums, unbounded and under bounds, and the same tree whatever the
// order of the stacks.
#include "seismo/query/flame_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace seismo {
namespace {

struct NaiveNode {
  int64_t us = 0, count = 0, base_us = 0, self_us = 0;
  bool ends_here = false;
  std::map<Sym, NaiveNode> kids;
};

struct Corpus {
  Symbols symbols;
  std::vector<std::vector<Sym>> frames;  // owns what the stacks' spans view
  std::vector<FlameStack> stacks;
  NaiveNode root;
};

// Stacks over a small vocabulary, so they share prefixes; some repeat, some are empty, some
// end where others go on.
std::unique_ptr<Corpus> RandomCorpus(uint64_t seed, size_t n) {
  auto c = std::make_unique<Corpus>();
  std::mt19937_64 rng(seed);
  std::vector<Sym> vocabulary;
  for (int i = 0; i < 12; ++i) vocabulary.push_back(c->symbols.Intern("frame" + std::to_string(i)));
  c->frames.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<Sym>& f = c->frames.emplace_back();
    const size_t depth = rng() % 7;
    for (size_t d = 0; d < depth; ++d) f.push_back(vocabulary[rng() % (d < 2 ? 3 : vocabulary.size())]);
    FlameStack s{f, static_cast<int64_t>(rng() % 1000), static_cast<int64_t>(1 + rng() % 5),
                 static_cast<int64_t>(rng() % 700), static_cast<int64_t>(rng() % 3)};
    c->stacks.push_back(s);
    NaiveNode* node = &c->root;
    auto add = [&s](NaiveNode& at) {
      at.us += s.hang_us;
      at.count += s.hang_count;
      at.base_us += s.baseline_us;
    };
    add(*node);
    for (Sym frame : f) {
      node = &node->kids[frame];
      add(*node);
    }
    node->ends_here = true;
    node->self_us += s.hang_us;
  }
  return c;
}

// Every kept node has its naive node's sums; an "(other)" child holds what its parent's kept
// children and its own stacks leave.
void ExpectMatches(const FlameTree& t, uint32_t at, const NaiveNode& naive, const std::string& path) {
  const FlameNode& n = t.nodes[at];
  EXPECT_EQ(n.hang_us, naive.us) << path;
  EXPECT_EQ(n.hang_count, naive.count) << path;
  EXPECT_EQ(n.baseline_us, naive.base_us) << path;
  EXPECT_EQ(n.ends_here, naive.ends_here) << path;
  EXPECT_EQ(n.self_us, naive.self_us) << path;
  int64_t kept_us = 0;
  size_t others = 0;
  for (uint32_t k : n.children) {
    const FlameNode& kid = t.nodes[k];
    if (kid.other) {
      ++others;
      continue;
    }
    auto it = naive.kids.find(kid.frame);
    ASSERT_NE(it, naive.kids.end()) << path;
    kept_us += kid.hang_us;
    ExpectMatches(t, k, it->second, path + "/" + std::to_string(kid.frame));
  }
  const size_t kept = n.children.size() - others;
  EXPECT_LE(others, 1u) << path;
  EXPECT_EQ(others, kept < naive.kids.size() ? 1u : 0u) << path;
  for (uint32_t k : n.children) {
    if (t.nodes[k].other) EXPECT_EQ(t.nodes[k].hang_us, naive.us - naive.self_us - kept_us) << path;
  }
}

std::string Json(const FlameTree& t, const Symbols& symbols) {
  JsonWriter w;
  WriteFlameTree(w, t, symbols, [](JsonWriter& out, const FlameNode& n) {
    out.Key("us").Int(n.hang_us);
    out.Key("count").Int(n.hang_count);
    out.Key("base").Int(n.baseline_us);
  });
  return w.Take();
}

TEST(FlameTree, EveryNodeHasTheSumsOfANaiveCallTree) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto c = RandomCorpus(seed, 300);
    const FlameTree t = BuildFlameTree(c->stacks, c->symbols, AnswerLimits{.max_nodes = 1'000'000});
    EXPECT_FALSE(t.truncated) << seed;
    ExpectMatches(t, 0, c->root, "seed " + std::to_string(seed));
  }
}

TEST(FlameTree, UnderABoundTheKeptNodesAreExactAndTheRestIsOther) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto c = RandomCorpus(seed, 300);
    for (size_t bound : {1u, 2u, 5u, 17u, 60u}) {
      const FlameTree t = BuildFlameTree(c->stacks, c->symbols, AnswerLimits{.max_nodes = bound});
      EXPECT_LE(t.nodes.size(), std::max<size_t>(bound, 2)) << seed << " " << bound;
      ExpectMatches(t, 0, c->root, "seed " + std::to_string(seed) + " bound " + std::to_string(bound));
    }
  }
}

// A run whose stacks all share a few frames is a chain of single children, known without
// looking at the stacks again; where the chain ends, whether the longest stack goes on decides
// if its last node needs an "(other)" (and a place of the bound) when its children do not fit.
TEST(FlameTree, AChainsLastNodeKnowsWhetherAnyStackGoesOn) {
  Symbols symbols;
  const Sym a = symbols.Intern("a"), b = symbols.Intern("b"), c = symbols.Intern("c"),
            d = symbols.Intern("d");
  const std::vector<Sym> longest{a, b, c, d}, shorter{a, b}, other{a, b, d};
  for (const auto& order : {std::vector<const std::vector<Sym>*>{&longest, &shorter, &other},
                            std::vector<const std::vector<Sym>*>{&shorter, &other, &longest},
                            std::vector<const std::vector<Sym>*>{&other, &longest, &shorter}}) {
    std::vector<FlameStack> stacks;
    for (const std::vector<Sym>* f : order) stacks.push_back({*f, static_cast<int64_t>(10 * f->size()), 1});
    for (size_t bound = 1; bound <= 8; ++bound) {
      const FlameTree t = BuildFlameTree(stacks, symbols, AnswerLimits{.max_nodes = bound});
      EXPECT_LE(t.nodes.size(), std::max<size_t>(bound, 2)) << "bound " << bound;
      size_t others = 0;
      for (const FlameNode& n : t.nodes) others += n.other ? 1 : 0;
      EXPECT_EQ(t.truncated, others > 0) << "bound " << bound;
      if (bound >= 6) EXPECT_EQ(t.nodes.size(), 6u);  // (root) a b c d, and d under b
    }
  }
}

TEST(FlameTree, TheOrderOfTheStacksChangesNothing) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    auto c = RandomCorpus(seed, 400);
    for (size_t bound : {7u, 1'000'000u}) {
      FlameTreeOptions weighted;
      weighted.baseline_weight = 0.5;
      for (const FlameTreeOptions& options : {FlameTreeOptions{}, weighted}) {
        const AnswerLimits limits{.max_nodes = bound};
        const std::string first = Json(BuildFlameTree(c->stacks, c->symbols, limits, options), c->symbols);
        std::vector<FlameStack> shuffled = c->stacks;
        std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(seed));
        EXPECT_EQ(Json(BuildFlameTree(shuffled, c->symbols, limits, options), c->symbols), first) << seed;
        std::reverse(shuffled.begin(), shuffled.end());
        EXPECT_EQ(Json(BuildFlameTree(shuffled, c->symbols, limits, options), c->symbols), first) << seed;
      }
    }
  }
}

}  // namespace
}  // namespace seismo
