#include "seismo/query/flame_tree.h"

#include <algorithm>
#include <queue>

namespace seismo {
namespace {

constexpr std::string_view kOtherName = "(other)";

// The JSON text of one node besides its name, at most: {"name":,"hang_ms":<25>,
// "hang_count":<20>,"children":[]}, and the comma before it.
constexpr size_t kNodeJsonBytes = 100;

// A node not taken yet: the stacks [lo, hi) (sorted) share their first `depth` frames,
// the last of which is `frame`.
struct Candidate {
  uint32_t parent = 0;
  size_t lo = 0, hi = 0, depth = 0;
  Sym frame = kNoId;
  int64_t hang_us = 0, hang_count = 0;
};

// What a kept node still leaves out: its children not kept and their sums.
struct Left {
  size_t children = 0;
  int64_t hang_us = 0, hang_count = 0;
};

}  // namespace

std::string_view FlameNodeName(const FlameNode& n, const Symbols& symbols, bool root) {
  if (root) return "(root)";
  return n.other ? kOtherName : symbols.Text(n.frame);
}

FlameTree BuildFlameTree(std::vector<FlameStack>& stacks, const Symbols& symbols,
                         const AnswerLimits& limits) {
  // Sorted by frame ids: the stacks below any node are one run, and the ones that end at
  // the node come first.
  std::sort(stacks.begin(), stacks.end(), [](const FlameStack& a, const FlameStack& b) {
    return std::lexicographical_compare(a.frames.begin(), a.frames.end(), b.frames.begin(), b.frames.end());
  });
  std::vector<int64_t> us(stacks.size() + 1, 0), count(stacks.size() + 1, 0);  // prefix sums
  for (size_t i = 0; i < stacks.size(); ++i) {
    us[i + 1] = us[i] + stacks[i].hang_us;
    count[i + 1] = count[i] + stacks[i].hang_count;
  }

  FlameTree t;
  std::vector<Left> left;
  // Makes the node of the stacks [lo, hi) at `depth` and lists its children in `kids`.
  std::vector<Candidate> kids;
  auto make = [&](Sym frame, size_t lo, size_t hi, size_t depth) {
    const auto index = static_cast<uint32_t>(t.nodes.size());
    FlameNode& n = t.nodes.emplace_back();
    n.frame = frame;
    n.hang_us = us[hi] - us[lo];
    n.hang_count = count[hi] - count[lo];
    size_t i = lo;
    while (i < hi && stacks[i].frames.size() == depth) ++i;
    n.ends_here = i > lo;
    n.self_us = us[i] - us[lo];
    n.self_count = count[i] - count[lo];
    kids.clear();
    while (i < hi) {
      const Sym f = stacks[i].frames[depth];
      size_t j = i + 1;
      while (j < hi && stacks[j].frames[depth] == f) ++j;
      kids.push_back({index, i, j, depth + 1, f, us[j] - us[i], count[j] - count[i]});
      i = j;
    }
    left.push_back({kids.size(), n.hang_us - n.self_us, n.hang_count - n.self_count});
  };
  auto lighter = [&symbols](const Candidate& a, const Candidate& b) {  // the queue's top is the heaviest
    if (a.hang_us != b.hang_us) return a.hang_us < b.hang_us;
    if (a.hang_count != b.hang_count) return a.hang_count < b.hang_count;
    if (a.frame != b.frame) return symbols.Text(a.frame) > symbols.Text(b.frame);
    return a.lo > b.lo;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lighter)> waiting(lighter);

  const size_t other_bytes = kNodeJsonBytes + JsonTextBound(kOtherName);
  make(kNoId, 0, stacks.size(), 0);
  size_t others = kids.empty() ? 0 : 1;  // kept nodes that need an "(other)" child
  size_t bytes = ByteBound::kTail + kNodeJsonBytes + JsonTextBound("(root)") + (others ? other_bytes : 0);
  for (const Candidate& c : kids) waiting.push(c);
  while (!waiting.empty()) {
    const Candidate c = waiting.top();
    // Taking c: its parent may no longer need an "(other)", c may need one.
    const size_t has_kids = stacks[c.hi - 1].frames.size() > c.depth ? 1 : 0;  // the longest come last
    const size_t parent_done = left[c.parent].children == 1 ? 1 : 0;
    const size_t next_others = others - parent_done + has_kids;
    const size_t next_bytes = bytes + kNodeJsonBytes + JsonTextBound(symbols.Text(c.frame)) +
                              has_kids * other_bytes - parent_done * other_bytes;
    if (t.nodes.size() + 1 + next_others > limits.max_nodes || next_bytes > limits.max_bytes) break;
    waiting.pop();
    Left& p = left[c.parent];
    --p.children;
    p.hang_us -= c.hang_us;
    p.hang_count -= c.hang_count;
    t.nodes[c.parent].children.push_back(static_cast<uint32_t>(t.nodes.size()));
    make(c.frame, c.lo, c.hi, c.depth);
    for (const Candidate& k : kids) waiting.push(k);
    others = next_others;
    bytes = next_bytes;
  }
  t.truncated = !waiting.empty();

  const size_t kept = t.nodes.size();
  for (size_t i = 0; i < kept; ++i) {
    if (left[i].children == 0) continue;
    t.nodes[i].children.push_back(static_cast<uint32_t>(t.nodes.size()));
    FlameNode& o = t.nodes.emplace_back();
    o.other = true;
    o.hang_us = left[i].hang_us;
    o.hang_count = left[i].hang_count;
    o.ends_here = true;  // collapsed: the folded stacks are one line
    o.self_us = o.hang_us;
    o.self_count = o.hang_count;
  }
  for (FlameNode& n : t.nodes) {
    std::sort(n.children.begin(), n.children.end(), [&t, &symbols](uint32_t a, uint32_t b) {
      const FlameNode& x = t.nodes[a];
      const FlameNode& y = t.nodes[b];
      if (x.hang_us != y.hang_us) return x.hang_us > y.hang_us;
      return FlameNodeName(x, symbols, false) < FlameNodeName(y, symbols, false);
    });
  }
  return t;
}

}  // namespace seismo
