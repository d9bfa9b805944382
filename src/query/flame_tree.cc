#include "seismo/query/flame_tree.h"

#include <algorithm>
#include <bit>
#include <queue>
#include <string_view>
#include <vector>

#include "seismo/core/huge_pages.h"
#include "seismo/query/radix_sort.h"
#include "seismo/query/stack_order.h"

namespace seismo {
namespace {

constexpr std::string_view kOtherName = "(other)";
constexpr size_t kAhead = 16;        // stacks a walk asks memory for before it reads them
constexpr size_t kRadixFrom = 4096;  // a node's stacks sorted by a radix sort from this many

// A node not taken yet: the stacks [lo, hi) of its runs (below) share their first `depth`
// frames, the last of which is `frame`; they are grouped by their next frame only if it is
// taken.
struct Candidate {
  uint32_t parent = 0;
  size_t lo = 0, hi = 0, depth = 0;
  Sym frame = kNoId;
  // The frame's text, read the first time a comparison needs it (siblings of equal weight and
  // count compare it), then kept: a candidate in the heap is compared many times.
  mutable std::string_view text{};
  mutable bool text_read = false;
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

// How a child ranks before its frame's text is read: by weight, then hang count.
struct ChildRank {
  double weight = 0;
  int64_t hang_count = 0;
};
bool RanksBelow(const ChildRank& a, const ChildRank& b) {
  return a.weight < b.weight || (a.weight == b.weight && a.hang_count < b.hang_count);
}

// A node's stacks grouped by their next frame (a node taken): the stacks that end at it, and
// a group per child, in frame order, each a run [lo, hi) of the stacks.
struct ChildGroup {
  size_t lo = 0, hi = 0;
  Sym frame = kNoId;
  int64_t hang_us = 0, hang_count = 0;
  int64_t baseline_us = 0, baseline_count = 0;
  bool has_kids = false;  // some stack of the group goes on below the child
};
struct Grouping {
  bool ends_here = false;
  int64_t self_us = 0, self_count = 0, self_baseline_us = 0, self_baseline_count = 0;
  std::span<const Sym> ref{};  // a stack of the run
  size_t shared = 0;           // frames from `depth` on that every stack of the run has as ref has them
  bool longer = false;         // some stack goes on past them
};

// Stacks in any order (BuildFlameTree's span): a node's run is grouped by its next frame when
// the node is taken (those that end at it first, then by frame id): a radix sort done one
// digit at a time, and only below the nodes kept, so a node never taken costs nothing below
// it. The runs come out where a sort of whole stacks by frame ids would put them.
class StackRuns {
 public:
  explicit StackRuns(std::span<const FlameStack> stacks) : stacks_(stacks), order_(stacks.size()) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
  }
  size_t size() const { return stacks_.size(); }
  void Total(Candidate& root) const {
    for (const FlameStack& st : stacks_) {
      root.hang_us += st.hang_us;
      root.hang_count += st.hang_count;
      root.baseline_us += st.baseline_us;
      root.baseline_count += st.baseline_count;
    }
  }
  template <typename Visit>
  Grouping Group(const Candidate& c, const Visit& visit) {
    keyed_.clear();
    bool grouped = true;  // already in key order
    Grouping s;
    // How far every stack goes on with the first one's frames (when they all share the next).
    s.ref = c.lo < c.hi ? stacks_[order_[c.lo]].frames : std::span<const Sym>();
    s.shared = s.ref.size() - std::min(s.ref.size(), c.depth);
    size_t deepest = 0;    // the longest stack's frames
    uint64_t max_key = 0;  // the radix sort's bits
    const FlameStack* const stacks = stacks_.data();  // in registers through the walk
    const uint32_t* const order = order_.data();
    for (size_t i = c.lo; i < c.hi; ++i) {
      // Each stack's frames are somewhere else in memory (the stack table's): asked for a
      // few stacks ahead, the walk waits on memory once per batch, not once per stack.
      if (i + kAhead < c.hi) {
        const std::span<const Sym> ahead = stacks[order[i + kAhead]].frames;
        __builtin_prefetch(ahead.data() + std::min(c.depth, ahead.size()));
      }
      const std::span<const Sym> f = stacks[order[i]].frames;
      const uint64_t key = c.depth < f.size() ? uint64_t{f[c.depth]} + 1 : 0;
      if (!keyed_.empty() && key < keyed_.back().first) grouped = false;
      max_key = std::max(max_key, key);
      keyed_.emplace_back(key, order[i]);
      if (s.shared > 0) {
        size_t m = 0;
        while (m < s.shared && c.depth + m < f.size() && f[c.depth + m] == s.ref[c.depth + m]) ++m;
        s.shared = m;
      }
      deepest = std::max(deepest, f.size());
    }
    s.longer = deepest > c.depth + s.shared;
    if (!grouped) {
      // Many children (a node of a million stacks): by a radix sort of the frame ids, a few
      // passes where a comparison sort took ~20 (radix_sort.h).
      if (keyed_.size() >= kRadixFrom) {
        RadixSortBy(keyed_, std::bit_width(max_key), [](const auto& k) { return k.first; });
      } else {
        std::sort(keyed_.begin(), keyed_.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      for (size_t k = 0; k < keyed_.size(); ++k) order_[c.lo + k] = keyed_[k].second;
    }
    for (size_t i = 0; i < keyed_.size();) {
      const size_t lo = i;
      const uint64_t key = keyed_[i].first;
      ChildGroup g{c.lo + lo, 0, static_cast<Sym>(key - 1)};
      for (; i < keyed_.size() && keyed_[i].first == key; ++i) {
        if (i + kAhead < keyed_.size()) __builtin_prefetch(&stacks_[keyed_[i + kAhead].second]);
        const FlameStack& st = stacks_[keyed_[i].second];
        g.hang_us += st.hang_us;
        g.hang_count += st.hang_count;
        g.baseline_us += st.baseline_us;
        g.baseline_count += st.baseline_count;
        g.has_kids = g.has_kids || st.frames.size() > c.depth + 1;
      }
      g.hi = c.lo + i;
      if (key == 0) {  // the stacks that end here
        s.ends_here = true;
        s.self_us = g.hang_us;
        s.self_count = g.hang_count;
        s.self_baseline_us = g.baseline_us;
        s.self_baseline_count = g.baseline_count;
        continue;
      }
      visit(s, g);
    }
    return s;
  }
  Sym FrameOf(const ChildGroup& g, size_t /*depth*/) const { return g.frame; }
  static constexpr bool kGroupsTwiceCheaply = false;  // a second Group walks the stacks again
  static constexpr bool kChildrenInNameOrder = false;  // by frame id

 private:
  std::span<const FlameStack> stacks_;
  std::vector<uint32_t, HugePageAllocator<uint32_t>> order_;  // of stacks_: each run grouped when taken
  std::vector<std::pair<uint64_t, uint32_t>, HugePageAllocator<std::pair<uint64_t, uint32_t>>>
      keyed_;  // (next frame + 1, or 0 where it ends; stack)
};

// Stacks in frame order, distinct, with running sums and each one's common prefix with the
// one before (stack_order.h): a node's run is grouped by a walk of those prefix lengths, its
// children's sums are two reads each, and a child's frame is read only when it is listed. A
// node costs its stacks' places in the order, read in order, and never their frames, which
// are elsewhere in memory (a node with a million children lists as many as the bound has
// places).
class OrderRuns {
 public:
  explicit OrderRuns(const StackOrder& order) : order_(order), e_(order.entries()), shape_(order.shapes()) {}
  size_t size() const { return e_.size(); }
  void Total(Candidate& root) const {
    root.hang_us = order_.HangUs(0, e_.size());
    root.hang_count = order_.HangCount(0, e_.size());
  }
  template <typename Visit>
  Grouping Group(const Candidate& c, const Visit& visit) const {
    Grouping s;
    if (c.lo == c.hi) return s;
    const size_t d = c.depth;
    // In frame order, the frames every stack of a run shares are those its first and last share.
    const std::span<const Sym> first = e_[c.lo].Frames(), last = e_[c.hi - 1].Frames();
    s.ref = first;
    while (d + s.shared < first.size() && d + s.shared < last.size() &&
           first[d + s.shared] == last[d + s.shared]) {
      ++s.shared;
    }
    // Two distinct stacks that share those frames cannot both end there.
    s.longer = c.hi - c.lo > 1 || first.size() > d + s.shared;
    size_t i = c.lo;
    if (first.size() == d) {  // the stack that ends here comes first (before those it is a prefix of)
      s.ends_here = true;
      s.self_us = order_.HangUs(i, i + 1);
      s.self_count = order_.HangCount(i, i + 1);
      ++i;
    }
    while (i < c.hi) {
      size_t j = i + 1;
      while (j < c.hi && shape_[j].common > d) ++j;  // the stacks that go on with stack i's frame at d
      ChildGroup g{i, j, kNoId, order_.HangUs(i, j), order_.HangCount(i, j)};
      g.has_kids = j - i > 1 || shape_[i].size > d + 1;
      visit(s, g);
      i = j;
    }
    return s;
  }
  Sym FrameOf(const ChildGroup& g, size_t depth) const { return e_[g.lo].frames[depth]; }
  static constexpr bool kGroupsTwiceCheaply = true;  // a second Group reads the same arrays in order
  // The order is by frame text (stack_order.h): a node's children come by their frames' texts,
  // and a child's place in it ranks it among its siblings as its text does.
  static constexpr bool kChildrenInNameOrder = true;

 private:
  const StackOrder& order_;
  std::span<const StackOrder::Entry> e_;
  std::span<const StackOrder::Shape> shape_;
};

// The tree of the stacks a Runs holds (StackRuns or OrderRuns).
template <typename Runs>
FlameTree BuildTree(Runs& runs, const Symbols& symbols, const AnswerLimits& limits,
                    const FlameTreeOptions& options) {
  auto weight = [&options](int64_t hang_us, int64_t baseline_us) {
    return static_cast<double>(hang_us) * options.build_weight +
           static_cast<double>(baseline_us) * options.baseline_weight;
  };

  FlameTree t;
  std::vector<Left> left;
  auto text_of = [&symbols](const Candidate& c) {
    if (!c.text_read) {
      c.text = symbols.Text(c.frame);
      c.text_read = true;
    }
    return c.text;
  };
  // Nodes are taken heaviest first: by weight, hang count, then frame text; then, as only nodes
  // of different parents tie that far, the parent taken first; then frame id (two ids of one
  // text). None of it depends on where the stacks are, so both Runs take the same nodes.
  auto lighter = [&text_of](const Candidate& a, const Candidate& b) {  // the queue's top is the heaviest
    if (a.weight != b.weight) return a.weight < b.weight;
    if (a.hang_count != b.hang_count) return a.hang_count < b.hang_count;
    if (a.frame != b.frame) {
      const std::string_view ta = text_of(a), tb = text_of(b);
      if (ta != tb) return ta > tb;
    }
    if (a.parent != b.parent) return a.parent > b.parent;
    return a.frame > b.frame;
  };
  // The same between siblings. Where the runs list a node's children in name order, the one
  // listed later ranks below among ties, so no text is read: a node with a million children of
  // one weight compares places, not a million texts.
  auto sibling_lighter = [&lighter](const Candidate& a, const Candidate& b) {
    if constexpr (Runs::kChildrenInNameOrder) {
      if (a.weight == b.weight && a.hang_count == b.hang_count) return a.lo > b.lo;
    }
    return lighter(a, b);
  };
  // A node's children wait for a place; only the heaviest few can ever get one. Siblings
  // leave the queue heaviest first and every node taken uses a place of the bound, so a
  // child with as many heavier siblings as places are left never leaves it: it is not even
  // listed (a node with a million children lists as many as the bound has places, kept as a
  // heap whose top is the lightest).
  std::vector<Candidate> kids;
  std::vector<ChildRank, HugePageAllocator<ChildRank>> ranks;  // of a node's children (the first pass below)
  size_t places = 0;
  bool dropped = false;
  auto heavier = [&sibling_lighter](const Candidate& a, const Candidate& b) { return sibling_lighter(b, a); };
  // A child of weight w and hang count `count` can get no place: none is left and it is
  // lighter than the lightest listed (asked before a candidate is made, so before its frame's
  // text is read, and its frame: a node may have a million children). Where the runs list
  // children in name order, its place `lo` ranks it among ties too.
  auto unlisted = [&](double w, int64_t count, size_t lo) {
    if (kids.size() < places) return false;
    if (kids.empty()) return true;
    const Candidate& lightest = kids.front();
    if constexpr (Runs::kChildrenInNameOrder) {
      if (w == lightest.weight && count == lightest.hang_count) return lo > lightest.lo;
    }
    return RanksBelow({w, count}, {lightest.weight, lightest.hang_count});
  };
  auto offer = [&](const Candidate& kid) {
    if (kids.size() < places) {
      kids.push_back(kid);
      std::push_heap(kids.begin(), kids.end(), heavier);
      return;
    }
    dropped = true;
    if (unlisted(kid.weight, kid.hang_count, kid.lo) || !heavier(kid, kids.front())) return;
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
      kid.text_read = false;
      kid.chain = c.chain - 1;
      kid.has_kids = kid.chain > 0 || c.tail_has_kids;
      offer(kid);
      left.push_back({1, n.hang_us, n.hang_count, n.baseline_us, n.baseline_count});
      return;
    }
    // Where grouping twice is cheap, a first pass finds the weight and count of the
    // places-th heaviest child: a child below it has as many heavier siblings as places are
    // left, so it can get none, and the second pass drops it on two integer compares, before
    // its frame's text is read (a node with a million children of equal weight and a few
    // heavier ones otherwise reads the text of most of them).
    bool floored = false;
    ChildRank floor{};
    if constexpr (Runs::kGroupsTwiceCheaply) {
      ranks.clear();
      runs.Group(c, [&](const Grouping&, const ChildGroup& g) {
        ranks.push_back({weight(g.hang_us, g.baseline_us), g.hang_count});
      });
      if (places > 0 && ranks.size() > places) {
        std::nth_element(ranks.begin(), ranks.begin() + static_cast<ptrdiff_t>(places - 1), ranks.end(),
                         [](const ChildRank& a, const ChildRank& b) { return RanksBelow(b, a); });
        floor = ranks[places - 1];
        floored = true;
      }
    }
    size_t children = 0;
    const Grouping s = runs.Group(c, [&](const Grouping& split, const ChildGroup& g) {
      ++children;
      const double w = weight(g.hang_us, g.baseline_us);
      if ((floored && RanksBelow({w, g.hang_count}, floor)) || unlisted(w, g.hang_count, g.lo)) {
        dropped = true;
        return;
      }
      Candidate kid{index, g.lo, g.hi, c.depth + 1, runs.FrameOf(g, c.depth)};
      kid.hang_us = g.hang_us;
      kid.hang_count = g.hang_count;
      kid.baseline_us = g.baseline_us;
      kid.baseline_count = g.baseline_count;
      kid.weight = w;
      kid.has_kids = g.has_kids;
      if (kid.lo == c.lo && kid.hi == c.hi && split.shared > 1) {
        // Every stack goes on with ref[depth, depth + shared): a chain of single children.
        kid.chain = split.shared - 1;
        kid.ref = split.ref;
        kid.tail_has_kids = split.longer;
      }
      offer(kid);
    });
    n.ends_here = s.ends_here;  // nothing is added to t.nodes while grouping: `n` stands
    n.self_us = s.self_us;
    n.self_count = s.self_count;
    left.push_back({children, n.hang_us - n.self_us, n.hang_count - n.self_count,
                    n.baseline_us - s.self_baseline_us, n.baseline_count - s.self_baseline_count});
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lighter)> waiting(lighter);

  const size_t node_bytes = options.node_json_bytes;
  const size_t other_bytes = node_bytes + JsonTextBound(kOtherName);
  Candidate root{0, 0, runs.size(), 0, kNoId};
  runs.Total(root);
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
    const size_t next_bytes =
        bytes + node_bytes + JsonTextBound(text_of(c)) + has_kids * other_bytes - parent_done * other_bytes;
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
  // Each node's children, heaviest first, ties by name (the comparisons of before, on the
  // same keys: the same order; a folded series' "(other)" frame beside a collapsed "(other)"
  // may tie both, as before). Each child's weight and name are found once, not in every comparison:
  // finding a name is two dependent reads of memory, and where many siblings tie (leaves of
  // one hang time) the comparisons' lookups were a third of building a kept flame graph.
  struct SortKey {
    double weight;
    std::string_view name;
    uint32_t node;
  };
  std::vector<SortKey> keys;
  for (FlameNode& n : t.nodes) {
    if (n.children.size() < 2) continue;
    keys.clear();
    for (const uint32_t c : n.children) {
      const FlameNode& x = t.nodes[c];
      keys.push_back({weight(x.hang_us, x.baseline_us), FlameNodeName(x, symbols, false), c});
    }
    std::sort(keys.begin(), keys.end(), [](const SortKey& a, const SortKey& b) {
      if (a.weight != b.weight) return a.weight > b.weight;
      return a.name < b.name;
    });
    for (size_t i = 0; i < keys.size(); ++i) n.children[i] = keys[i].node;
  }
  return t;
}

}  // namespace

std::string_view FlameNodeName(const FlameNode& n, const Symbols& symbols, bool root) {
  if (root) return "(root)";
  return n.other ? kOtherName : symbols.Text(n.frame);
}

FlameTree BuildFlameTree(std::span<const FlameStack> stacks, const Symbols& symbols,
                         const AnswerLimits& limits, const FlameTreeOptions& options) {
  StackRuns runs(stacks);
  return BuildTree(runs, symbols, limits, options);
}

FlameTree BuildFlameTree(const StackOrder& order, const Symbols& symbols, const AnswerLimits& limits) {
  OrderRuns runs(order);
  return BuildTree(runs, symbols, limits, FlameTreeOptions{});
}

}  // namespace seismo
