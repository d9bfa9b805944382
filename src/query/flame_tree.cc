#include "seismo/query/flame_tree.h"

#include <algorithm>
#include <bit>
#include <queue>

#include "seismo/core/huge_pages.h"
#include "seismo/query/radix_sort.h"

namespace seismo {
namespace {

constexpr std::string_view kOtherName = "(other)";
constexpr size_t kAhead = 16;        // stacks a walk asks memory for before it reads them
constexpr size_t kRadixFrom = 4096;  // a node's stacks sorted by a radix sort from this many

// A node not taken yet: the stacks order[lo, hi) share their first `depth` frames, the
// last of which is `frame`; they are grouped by their next frame only if it is taken.
struct Candidate {
  uint32_t parent = 0;
  size_t lo = 0, hi = 0, depth = 0;
  Sym frame = kNoId;
  int64_t hang_us = 0, hang_count = 0;
  int64_t baseline_us = 0, baseline_count = 0;
  double weight = 0;
  bool has_kids = false;  // some stack goes on below it
  // A chain: every stack of the run goes on with the frames ref[depth, depth + chain), so
  // the next `chain` nodes down have one child each, known without looking at the stacks
  // again; `tail_has_kids` is has_kids of the chain's last node.
  size_t chain = 0;
  std::span<const Sym> ref{};
  bool tail_has_kids = false;
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

FlameTree BuildFlameTree(std::span<const FlameStack> stacks, const Symbols& symbols,
                         const AnswerLimits& limits, const FlameTreeOptions& options) {
  // The stacks below a node are one run of `order`. A node taken groups its run by the
  // stacks' next frame (those that end at the node first, then by frame id): a radix sort
  // done one digit at a time, and only below the nodes kept, so a node never taken costs
  // nothing below it. The runs come out where a sort of whole stacks by frame ids would put
  // them.
  std::vector<uint32_t, HugePageAllocator<uint32_t>> order(stacks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  auto weight = [&options](int64_t hang_us, int64_t baseline_us) {
    return static_cast<double>(hang_us) * options.build_weight +
           static_cast<double>(baseline_us) * options.baseline_weight;
  };

  FlameTree t;
  std::vector<Left> left;
  std::vector<std::pair<uint64_t, uint32_t>, HugePageAllocator<std::pair<uint64_t, uint32_t>>>
      keyed;  // (next frame + 1, or 0 where it ends; stack)
  auto lighter = [&symbols](const Candidate& a, const Candidate& b) {  // the queue's top is the heaviest
    if (a.weight != b.weight) return a.weight < b.weight;
    if (a.hang_count != b.hang_count) return a.hang_count < b.hang_count;
    if (a.frame != b.frame) return symbols.Text(a.frame) > symbols.Text(b.frame);
    return a.lo > b.lo;
  };
  // A node's children wait for a place; only the heaviest few can ever get one. Siblings
  // leave the queue heaviest first and every node taken uses a place of the bound, so a
  // child with as many heavier siblings as places are left never leaves it: it is not even
  // listed (a node with a million children lists as many as the bound has places, kept as a
  // heap whose top is the lightest).
  std::vector<Candidate> kids;
  size_t places = 0;
  bool dropped = false;
  auto heavier = [&lighter](const Candidate& a, const Candidate& b) { return lighter(b, a); };
  // A child of weight w can get no place: none is left and it is lighter than the lightest
  // listed (asked before a candidate is made: a node may have a million children).
  auto unlisted = [&](double w) {
    return kids.size() >= places && (kids.empty() || w < kids.front().weight);
  };
  auto offer = [&](const Candidate& kid) {
    if (kids.size() < places) {
      kids.push_back(kid);
      std::push_heap(kids.begin(), kids.end(), heavier);
      return;
    }
    dropped = true;
    if (unlisted(kid.weight) || !heavier(kid, kids.front())) return;
    std::pop_heap(kids.begin(), kids.end(), heavier);
    kids.back() = kid;
    std::push_heap(kids.begin(), kids.end(), heavier);
  };
  // Makes the node of the candidate `c` and lists in `kids` those of its children that may
  // get a place.
  auto make = [&](const Candidate& c) {
    const auto index = static_cast<uint32_t>(t.nodes.size());
    FlameNode& n = t.nodes.emplace_back();
    n.frame = c.frame;
    n.hang_us = c.hang_us;
    n.hang_count = c.hang_count;
    n.baseline_us = c.baseline_us;
    n.baseline_count = c.baseline_count;
    kids.clear();
    places = limits.max_nodes > t.nodes.size() ? limits.max_nodes - t.nodes.size() : 0;
    if (c.chain > 0) {  // one child, the run's next shared frame
      Candidate kid = c;
      kid.parent = index;
      kid.depth = c.depth + 1;
      kid.frame = c.ref[c.depth];
      kid.chain = c.chain - 1;
      kid.has_kids = kid.chain > 0 || c.tail_has_kids;
      offer(kid);
      left.push_back({1, n.hang_us, n.hang_count, n.baseline_us, n.baseline_count});
      return;
    }
    keyed.clear();
    bool grouped = true;  // already in key order
    // How far every stack goes on with the first one's frames (when they all share the next).
    const std::span<const Sym> ref = c.lo < c.hi ? stacks[order[c.lo]].frames : std::span<const Sym>();
    size_t shared = ref.size() - std::min(ref.size(), c.depth);
    size_t deepest = 0;    // the longest stack's frames
    uint64_t max_key = 0;  // the radix sort's bits
    for (size_t i = c.lo; i < c.hi; ++i) {
      // Each stack's frames are somewhere else in memory (the stack table's): asked for a
      // few stacks ahead, the walk waits on memory once per batch, not once per stack.
      if (i + kAhead < c.hi) {
        const std::span<const Sym> ahead = stacks[order[i + kAhead]].frames;
        __builtin_prefetch(ahead.data() + std::min(c.depth, ahead.size()));
      }
      const std::span<const Sym> f = stacks[order[i]].frames;
      const uint64_t key = c.depth < f.size() ? uint64_t{f[c.depth]} + 1 : 0;
      if (!keyed.empty() && key < keyed.back().first) grouped = false;
      max_key = std::max(max_key, key);
      keyed.emplace_back(key, order[i]);
      if (shared > 0) {
        size_t m = 0;
        while (m < shared && c.depth + m < f.size() && f[c.depth + m] == ref[c.depth + m]) ++m;
        shared = m;
      }
      deepest = std::max(deepest, f.size());
    }
    const bool longer = deepest > c.depth + shared;  // some stack goes on past what they all share
    if (!grouped) {
      // Many children (a node of a million stacks): by a radix sort of the frame ids, a few
      // passes where a comparison sort took ~20 (radix_sort.h).
      if (keyed.size() >= kRadixFrom) {
        RadixSortBy(keyed, std::bit_width(max_key), [](const auto& k) { return k.first; });
      } else {
        std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      for (size_t k = 0; k < keyed.size(); ++k) order[c.lo + k] = keyed[k].second;
    }
    int64_t self_base_us = 0, self_base_count = 0;
    size_t children = 0;
    for (size_t i = 0; i < keyed.size();) {
      const size_t lo = i;
      const uint64_t key = keyed[i].first;
      int64_t hang_us = 0, hang_count = 0, baseline_us = 0, baseline_count = 0;
      bool has_kids = false;
      for (; i < keyed.size() && keyed[i].first == key; ++i) {
        if (i + kAhead < keyed.size()) __builtin_prefetch(&stacks[keyed[i + kAhead].second]);
        const FlameStack& st = stacks[keyed[i].second];
        hang_us += st.hang_us;
        hang_count += st.hang_count;
        baseline_us += st.baseline_us;
        baseline_count += st.baseline_count;
        has_kids = has_kids || st.frames.size() > c.depth + 1;
      }
      if (key == 0) {  // the stacks that end here
        n.ends_here = true;
        n.self_us = hang_us;
        n.self_count = hang_count;
        self_base_us = baseline_us;
        self_base_count = baseline_count;
        continue;
      }
      ++children;
      const double w = weight(hang_us, baseline_us);
      if (unlisted(w)) {
        dropped = true;
        continue;
      }
      Candidate kid{index, c.lo + lo, c.lo + i, c.depth + 1, static_cast<Sym>(key - 1)};
      kid.hang_us = hang_us;
      kid.hang_count = hang_count;
      kid.baseline_us = baseline_us;
      kid.baseline_count = baseline_count;
      kid.weight = w;
      kid.has_kids = has_kids;
      if (kid.lo == c.lo && kid.hi == c.hi && shared > 1) {
        // Every stack goes on with ref[depth, depth + shared): a chain of single children.
        kid.chain = shared - 1;
        kid.ref = ref;
        kid.tail_has_kids = longer;
      }
      offer(kid);
    }
    left.push_back({children, n.hang_us - n.self_us, n.hang_count - n.self_count,
                    n.baseline_us - self_base_us, n.baseline_count - self_base_count});
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lighter)> waiting(lighter);

  const size_t node_bytes = options.node_json_bytes;
  const size_t other_bytes = node_bytes + JsonTextBound(kOtherName);
  Candidate root{0, 0, stacks.size(), 0, kNoId};
  for (const FlameStack& st : stacks) {
    root.hang_us += st.hang_us;
    root.hang_count += st.hang_count;
    root.baseline_us += st.baseline_us;
    root.baseline_count += st.baseline_count;
  }
  make(root);
  size_t others = left[0].children > 0 ? 1 : 0;  // kept nodes that need an "(other)" child
  size_t bytes = ByteBound::kTail + node_bytes + JsonTextBound("(root)") + (others ? other_bytes : 0);
  for (const Candidate& k : kids) waiting.push(k);
  while (!waiting.empty()) {
    const Candidate c = waiting.top();
    // Taking c: its parent may no longer need an "(other)", c may need one.
    const size_t has_kids = c.has_kids ? 1 : 0;
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
    make(c);
    for (const Candidate& k : kids) waiting.push(k);
    others = next_others;
    bytes = next_bytes;
  }
  t.truncated = !waiting.empty() || dropped;

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
