// FlameTree: the call tree of a set of stacks, bounded in nodes and bytes (issue 19,
// ADR 0025). Every node's numbers are exact whatever the bound: past it, the children
// that did not fit are folded into one "(other)" child of their parent, which holds
// their sums.
//
//   stacks  a;b;c 50   a;b;d 30   a;e 15   f 5        (root) 100
//   bound 5 nodes                                ->      ├─ a 95 ── (other) 95
//                                                        └─ (other) 5
//
// Which nodes stay: the heaviest. Nodes are taken best first (hang time — or a weighted
// sum of both sides' in a differential tree — then hang count, then frame text, then the
// parent taken first: never where the stacks happen to be) starting
// at the root; a child never weighs more than its
// parent, so the kept nodes are the heaviest nodes of the full tree and form a tree.
// Taking stops before the first node that would pass a bound, counting the "(other)"
// nodes the tree then needs and each node's JSON text (ApiSettings' limits).
//
// Cost: a kept node costs the stacks below it, grouped by their next frame when it is
// taken (a radix sort by frame ids, one frame at a time); below a node never taken nothing
// is sorted. Memory is the stack list, an order of it, the kept nodes and the candidates
// waiting, never the full tree: a stack of a million frames under a 10 000-node bound
// allocates 10 000 nodes. From stacks kept in frame order (a StackOrder, the warm-up's), the
// same tree costs a kept node a read of 8 bytes per stack below it, in order (where each
// stack's shared frames with the one before drop to the node's depth, its children begin),
// and never their frames; a child's sums are running sums' differences; and as the order
// lists a node's children by name, siblings that tie rank by their places, so a node of a
// million leaves of one weight reads none of their texts.
//
// Threading: a pure function of its arguments.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seismo/core/json_writer.h"
#include "seismo/core/symbols.h"
#include "seismo/query/answer_bound.h"

namespace seismo {

class StackOrder;  // query/stack_order.h

struct FlameStack {
  std::span<const Sym> frames;  // root first
  int64_t hang_us = 0;
  int64_t hang_count = 0;
  // A differential tree's other side (query/flame_diff.h): the baseline builds' hangs of
  // the same stack. 0 in a plain tree.
  int64_t baseline_us = 0;
  int64_t baseline_count = 0;
};

struct FlameNode {
  Sym frame = kNoId;  // kNoId for the root and for "(other)"
  bool other = false;
  int64_t hang_us = 0;  // this node and everything below it
  int64_t hang_count = 0;
  bool ends_here = false;  // a stack ends at this node (collapsed: it has a line)
  int64_t self_us = 0;     // of the stacks that end here
  int64_t self_count = 0;
  int64_t baseline_us = 0;  // this node and everything below it, the other side
  int64_t baseline_count = 0;
  std::vector<uint32_t> children;  // indices into FlameTree::nodes, heaviest first, then by name
};

struct FlameTree {
  std::vector<FlameNode> nodes;  // nodes[0] is the root
  bool truncated = false;        // some subtree was folded into an "(other)"
};

// The name a node prints: "(root)", "(other)" or the frame's text.
std::string_view FlameNodeName(const FlameNode& n, const Symbols& symbols, bool root);

// How the bound weighs nodes and what a node's JSON costs. A plain tree weighs hang time;
// a differential one weighs both sides, each per usage hour of its own side (so a path
// that vanished in the new build still competes for a place).
struct FlameTreeOptions {
  double build_weight = 1;       // per microsecond of hang_us
  double baseline_weight = 0;    // per microsecond of baseline_us
  size_t node_json_bytes = 100;  // at most, besides the name: {"name":,"hang_ms":..,"children":[]},
};

// `stacks` in any order (left in it); equal stacks may repeat.
FlameTree BuildFlameTree(std::span<const FlameStack> stacks, const Symbols& symbols,
                         const AnswerLimits& limits, const FlameTreeOptions& options = {});
// The same tree (node for node, in the same order) as from the order's stacks in a span: a
// plain tree, weighed by hang time. `symbols`: the order's.
FlameTree BuildFlameTree(const StackOrder& order, const Symbols& symbols, const AnswerLimits& limits);

// Writes the tree as nested JSON objects, children heaviest first: each node's "name",
// then what `fields(writer, node)` writes, then "children". The root says "truncated"
// when the bound folded anything. A stack is as deep as a document makes it (hundreds of
// thousands of frames fit in one): writing never recurses, so a deep tree cannot
// overflow an HTTP worker's stack.
template <typename Fields>
void WriteFlameTree(JsonWriter& w, const FlameTree& t, const Symbols& symbols, const Fields& fields) {
  struct Open {
    const FlameNode* node;
    size_t next = 0;
  };
  auto open = [&w, &symbols, &fields](const FlameNode& n, bool root) {
    w.BeginObject();
    w.Key("name").String(FlameNodeName(n, symbols, root));
    fields(w, n);
    return Open{&n};
  };
  std::vector<Open> path;
  path.push_back(open(t.nodes[0], true));
  if (t.truncated) w.Key("truncated").Bool(true);
  w.Key("children").BeginArray();
  while (!path.empty()) {
    Open& top = path.back();
    if (top.next == top.node->children.size()) {
      w.EndArray();
      w.EndObject();
      path.pop_back();
      continue;
    }
    const FlameNode& child = t.nodes[top.node->children[top.next++]];
    path.push_back(open(child, false));  // `top` is not used past this point
    w.Key("children").BeginArray();
  }
}

}  // namespace seismo
