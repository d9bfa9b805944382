// FlameTree: the call tree of a set of stacks, bounded in nodes and bytes (issue 19,
// ADR 0025). Every node's numbers are exact whatever the bound: past it, the children
// that did not fit are folded into one "(other)" child of their parent, which holds
// their sums.
//
//   stacks  a;b;c 50   a;b;d 30   a;e 15   f 5        (root) 100
//   bound 5 nodes                                ->      ├─ a 95 ── (other) 95
//                                                        └─ (other) 5
//
// Which nodes stay: the heaviest. Nodes are taken best first (hang time, then hang
// count, then frame text) starting at the root; a child never weighs more than its
// parent, so the kept nodes are the heaviest nodes of the full tree and form a tree.
// Taking stops before the first node that would pass a bound, counting the "(other)"
// nodes the tree then needs and each node's JSON text (ApiSettings' limits).
//
// Cost: the stacks are sorted once; a kept node costs the stacks below it. Memory is
// the stack list, the kept nodes and the candidates waiting, never the full tree: a
// stack of a million frames under a 10 000-node bound allocates 10 000 nodes.
//
// Threading: a pure function of its arguments.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seismo/core/symbols.h"
#include "seismo/query/answer_bound.h"

namespace seismo {

struct FlameStack {
  std::span<const Sym> frames;  // root first
  int64_t hang_us = 0;
  int64_t hang_count = 0;
};

struct FlameNode {
  Sym frame = kNoId;  // kNoId for the root and for "(other)"
  bool other = false;
  int64_t hang_us = 0;  // this node and everything below it
  int64_t hang_count = 0;
  bool ends_here = false;  // a stack ends at this node (collapsed: it has a line)
  int64_t self_us = 0;     // of the stacks that end here
  int64_t self_count = 0;
  std::vector<uint32_t> children;  // indices into FlameTree::nodes, heaviest first, then by name
};

struct FlameTree {
  std::vector<FlameNode> nodes;  // nodes[0] is the root
  bool truncated = false;        // some subtree was folded into an "(other)"
};

// The name a node prints: "(root)", "(other)" or the frame's text.
std::string_view FlameNodeName(const FlameNode& n, const Symbols& symbols, bool root);

// `stacks` in any order (it is sorted in place); equal stacks may repeat.
FlameTree BuildFlameTree(std::vector<FlameStack>& stacks, const Symbols& symbols, const AnswerLimits& limits);

}  // namespace seismo
