#include "seismo/query/flame_tree.h"

#include <algorithm>
#include <queue>

namespace seismo {
namespace {

constexpr std::string_view kOtherName = "(other)";

// A node not taken yet: the stacks [lo, hi) (sorted) share their first `depth` frames,
// the last of which is `frame`.
struct Candidate {
  uint32_t parent = 0;
  size_t lo = 0, hi = 0, depth = 0;
  Sym frame = kNoId;
  int64_t hang_us = 0, hang_count = 0;
  int64_t baseline_us = 0, baseline_count = 0;
  double weight = 0;
};

// What a kept node still leaves out: its children not kept and their sums.
struct Left {
  size_t children = 0;
  int64_t hang_us = 0, hang_count = 0;
  int64_t baseline_us = 0, baseline_count = 0;
};

}  // namespace

std::string_view FlameNodeName(const FlameNode& n, const Symbols& symbols, bool root) {
  if (root) return "(root)";
  return n.other ? kOtherName : symbols.Text(n.frame);
}

FlameTree BuildFlameTree(std::vector<FlameStack>& stacks, const Symbols& symbols, const AnswerLimits& limits,
                         const FlameTreeOptions& options) {
  // Sorted by frame ids: the stacks below any node are one run, and the ones that end at
  // the node come first.
  std::sort(stacks.begin(), stacks.end(), [](const FlameStack& a, const FlameStack& b) {
    return std::lexicographical_compare(a.frames.begin(), a.frames.end(), b.frames.begin(), b.frames.end());
  });
  const size_t n_stacks = stacks.size();
  std::vector<int64_t> us(n_stacks + 1, 0), count(n_stacks + 1, 0);  // prefix sums
  std::vector<int64_t> base_us(n_stacks + 1, 0), base_count(n_stacks + 1, 0);
  for (size_t i = 0; i < n_stacks; ++i) {
    us[i + 1] = us[i] + stacks[i].hang_us;
    count[i + 1] = count[i] + stacks[i].hang_count;
    base_us[i + 1] = base_us[i] + stacks[i].baseline_us;
    base_count[i + 1] = base_count[i] + stacks[i].baseline_count;
  }
  auto weight = [&options](int64_t hang_us, int64_t baseline_us) {
    return static_cast<double>(hang_us) * options.build_weight +
           static_cast<double>(baseline_us) * options.baseline_weight;
  };

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
    n.baseline_us = base_us[hi] - base_us[lo];
    n.baseline_count = base_count[hi] - base_count[lo];
    size_t i = lo;
    while (i < hi && stacks[i].frames.size() == depth) ++i;
    n.ends_here = i > lo;
    n.self_us = us[i] - us[lo];
    n.self_count = count[i] - count[lo];
    const int64_t self_base_us = base_us[i] - base_us[lo], self_base_count = base_count[i] - base_count[lo];
    kids.clear();
    while (i < hi) {
      const Sym f = stacks[i].frames[depth];
      size_t j = i + 1;
      while (j < hi && stacks[j].frames[depth] == f) ++j;
      const int64_t kid_us = us[j] - us[i], kid_base_us = base_us[j] - base_us[i];
      kids.push_back({index, i, j, depth + 1, f, kid_us, count[j] - count[i], kid_base_us,
                      base_count[j] - base_count[i], weight(kid_us, kid_base_us)});
      i = j;
    }
    left.push_back({kids.size(), n.hang_us - n.self_us, n.hang_count - n.self_count,
                    n.baseline_us - self_base_us, n.baseline_count - self_base_count});
  };
  auto lighter = [&symbols](const Candidate& a, const Candidate& b) {  // the queue's top is the heaviest
    if (a.weight != b.weight) return a.weight < b.weight;
    if (a.hang_count != b.hang_count) return a.hang_count < b.hang_count;
    if (a.frame != b.frame) return symbols.Text(a.frame) > symbols.Text(b.frame);
    return a.lo > b.lo;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lighter)> waiting(lighter);

  const size_t node_bytes = options.node_json_bytes;
  const size_t other_bytes = node_bytes + JsonTextBound(kOtherName);
  make(kNoId, 0, stacks.size(), 0);
  size_t others = kids.empty() ? 0 : 1;  // kept nodes that need an "(other)" child
  size_t bytes = ByteBound::kTail + node_bytes + JsonTextBound("(root)") + (others ? other_bytes : 0);
  for (const Candidate& c : kids) waiting.push(c);
  while (!waiting.empty()) {
    const Candidate c = waiting.top();
    // Taking c: its parent may no longer need an "(other)", c may need one.
    const size_t has_kids = stacks[c.hi - 1].frames.size() > c.depth ? 1 : 0;  // the longest come last
    const size_t parent_done = left[c.parent].children == 1 ? 1 : 0;
    const size_t next_others = others - parent_done + has_kids;
    const size_t next_bytes = bytes + node_bytes + JsonTextBound(symbols.Text(c.frame)) +
                              has_kids * other_bytes - parent_done * other_bytes;
    if (t.nodes.size() + 1 + next_others > limits.max_nodes || next_bytes > limits.max_bytes) break;
    waiting.pop();
    Left& p = left[c.parent];
    --p.children;
    p.hang_us -= c.hang_us;
    p.hang_count -= c.hang_count;
    p.baseline_us -= c.baseline_us;
    p.baseline_count -= c.baseline_count;
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
    o.baseline_us = left[i].baseline_us;
    o.baseline_count = left[i].baseline_count;
  }
  for (FlameNode& n : t.nodes) {
    std::sort(n.children.begin(), n.children.end(), [&t, &symbols, &weight](uint32_t a, uint32_t b) {
      const FlameNode& x = t.nodes[a];
      const FlameNode& y = t.nodes[b];
      const double wx = weight(x.hang_us, x.baseline_us), wy = weight(y.hang_us, y.baseline_us);
      if (wx != wy) return wx > wy;
      return FlameNodeName(x, symbols, false) < FlameNodeName(y, symbols, false);
    });
  }
  return t;
}

}  // namespace seismo
