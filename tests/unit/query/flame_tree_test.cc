// BuildFlameTree against a naive call tree (every stack inserted frame by frame into maps) on
// random stacks: every node's sums, unbounded and under bounds of nodes and bytes; under a
// bound, the nodes kept are the heaviest (none left out outweighs one kept); and the same tree
// whatever the order of the stacks.
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
// `us_values`: how many distinct hang times (few make many ties).
std::unique_ptr<Corpus> RandomCorpus(uint64_t seed, size_t n, uint64_t us_values = 1000) {
  auto c = std::make_unique<Corpus>();
  std::mt19937_64 rng(seed);
  std::vector<Sym> vocabulary;
  for (int i = 0; i < 12; ++i) vocabulary.push_back(c->symbols.Intern("frame" + std::to_string(i)));
  c->frames.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<Sym>& f = c->frames.emplace_back();
    const size_t depth = rng() % 7;
    for (size_t d = 0; d < depth; ++d) f.push_back(vocabulary[rng() % (d < 2 ? 3 : vocabulary.size())]);
    FlameStack s{f, static_cast<int64_t>(rng() % us_values), static_cast<int64_t>(1 + rng() % 5),
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

// How a node ranks for a place (flame_tree.h): weight, then hang count, then the text first
// in order (the last tie-break, the stacks' order, only parts nodes of different parents).
// Nodes leave the queue heaviest first and a child never weighs more than its parent, so no
// node left out weighs more than one kept; among siblings, none left out ranks above one kept.
// (Across parents a child that ties its parent's weight and count may rank above a node kept
// before its parent, by its text: only weights are compared there.)
struct Rank {
  double weight;
  int64_t count;
  std::string_view text;
  const NaiveNode* parent;
};
bool Heavier(const Rank& a, const Rank& b) {
  if (a.weight != b.weight) return a.weight > b.weight;
  if (a.count != b.count) return a.count > b.count;
  return a.text < b.text;
}
struct Ranks {
  const Symbols* symbols;
  FlameTreeOptions options;
  std::vector<Rank> kept;      // every kept node but the root
  std::vector<Rank> left_out;  // children of kept nodes that were not kept
  Rank Of(Sym frame, const NaiveNode& n, const NaiveNode& parent) const {
    return {static_cast<double>(n.us) * options.build_weight +
                static_cast<double>(n.base_us) * options.baseline_weight,
            n.count, symbols->Text(frame), &parent};
  }
};

// Every kept node has its naive node's sums; an "(other)" child holds what its parent's kept
// children and its own stacks leave. `ranks` gathers the kept nodes and those left out.
void ExpectMatches(const FlameTree& t, uint32_t at, const NaiveNode& naive, const std::string& path,
                   Ranks* ranks = nullptr) {
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
    if (ranks != nullptr) ranks->kept.push_back(ranks->Of(kid.frame, it->second, naive));
    ExpectMatches(t, k, it->second, path + "/" + std::to_string(kid.frame), ranks);
  }
  if (ranks != nullptr) {
    for (const auto& entry : naive.kids) {
      const auto frame = entry.first;  // a lambda below captures it (clang 14: no bindings)
      const bool kept_kid = std::any_of(n.children.begin(), n.children.end(), [&](uint32_t k) {
        return !t.nodes[k].other && t.nodes[k].frame == frame;
      });
      if (!kept_kid) ranks->left_out.push_back(ranks->Of(frame, entry.second, naive));
    }
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

// Under bounds of nodes or bytes, plain and weighted by both sides (as a differential tree
// is), with hang times drawn from many values and from four (ties to break).
TEST(FlameTree, UnderABoundTheHeaviestNodesAreKeptExactAndTheRestIsOther) {
  FlameTreeOptions weighted;
  weighted.build_weight = 1.0 / 3;
  weighted.baseline_weight = 1.0 / 7;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    for (uint64_t us_values : {1000u, 4u}) {
      auto c = RandomCorpus(seed, 300, us_values);
      for (const FlameTreeOptions& options : {FlameTreeOptions{}, weighted}) {
        std::vector<AnswerLimits> bounds;
        for (size_t nodes : {1u, 2u, 5u, 17u, 60u}) bounds.push_back({.max_nodes = nodes});
        for (size_t bytes : {300u, 900u, 2500u}) bounds.push_back({.max_bytes = bytes});
        for (const AnswerLimits& limits : bounds) {
          const std::string what = "seed " + std::to_string(seed) + " us values " +
                                   std::to_string(us_values) + " bound " + std::to_string(limits.max_nodes) +
                                   " nodes " + std::to_string(limits.max_bytes) + " bytes";
          const FlameTree t = BuildFlameTree(c->stacks, c->symbols, limits, options);
          EXPECT_LE(t.nodes.size(), std::max<size_t>(limits.max_nodes, 2)) << what;
          Ranks ranks{&c->symbols, options};
          ExpectMatches(t, 0, c->root, what, &ranks);
          EXPECT_EQ(t.truncated, !ranks.left_out.empty()) << what;
          for (const Rank& out : ranks.left_out) {
            for (const Rank& in : ranks.kept) {
              ASSERT_FALSE(out.weight > in.weight || (out.parent == in.parent && Heavier(out, in)))
                  << what << ": " << out.text << " (" << out.weight << ", " << out.count << ") left out, "
                  << in.text << " (" << in.weight << ", " << in.count << ") kept";
            }
          }
        }
      }
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

// A node with more children than the bound has places keeps its heaviest, wherever they are
// among its children's frames.
TEST(FlameTree, AWideNodeKeepsItsHeaviestChildren) {
  Symbols symbols;
  std::vector<std::vector<Sym>> frames;
  for (int i = 0; i < 50; ++i) frames.push_back({symbols.Intern("f" + std::to_string(100 + i))});
  for (bool heavy_last : {true, false}) {
    std::vector<FlameStack> stacks;
    for (int i = 0; i < 50; ++i)
      stacks.push_back({frames[static_cast<size_t>(i)], heavy_last ? 10 + i : 60 - i, 1});
    // (root), three children, "(other)".
    const FlameTree t = BuildFlameTree(stacks, symbols, AnswerLimits{.max_nodes = 5});
    ASSERT_EQ(t.nodes.size(), 5u);
    EXPECT_TRUE(t.truncated);
    std::vector<std::string_view> kept;
    for (uint32_t k : t.nodes[0].children) kept.push_back(FlameNodeName(t.nodes[k], symbols, false));
    // Heaviest first: the 47 folded into "(other)" weigh more than any one kept.
    const std::vector<std::string_view> heaviest =
        heavy_last ? std::vector<std::string_view>{"(other)", "f149", "f148", "f147"}
                   : std::vector<std::string_view>{"(other)", "f100", "f101", "f102"};
    EXPECT_EQ(kept, heaviest) << heavy_last;
  }
}

// Siblings are listed heaviest first, siblings of one weight by name: not by when their frames
// were interned (here the reverse of the names' order), and not by hang count.
TEST(FlameTree, SiblingsAreHeaviestFirstThenByName) {
  Symbols symbols;
  std::vector<std::vector<Sym>> frames;
  for (const char* name : {"zeta", "mu", "beta", "alpha", "heavy", "light"}) {
    frames.push_back({symbols.Intern("caller"), symbols.Intern(name)});
  }
  const std::vector<FlameStack> stacks = {{frames[0], 500, 1}, {frames[1], 500, 3}, {frames[2], 500, 2},
                                          {frames[3], 500, 1}, {frames[4], 900, 1}, {frames[5], 100, 9}};
  const FlameTree t = BuildFlameTree(stacks, symbols, AnswerLimits{});
  ASSERT_EQ(t.nodes[0].children.size(), 1u);
  std::vector<std::string_view> order;
  for (uint32_t k : t.nodes[t.nodes[0].children[0]].children)
    order.push_back(FlameNodeName(t.nodes[k], symbols, false));
  EXPECT_EQ(order, (std::vector<std::string_view>{"heavy", "alpha", "beta", "mu", "zeta", "light"}));
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
