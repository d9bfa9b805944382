// StackOrder: a selection's distinct stacks in frame order with their hang sums, kept by
// the warm-up from one round to the next so that its flame graph does not sort 10⁶ stacks
// every round (ADR 0034, step 5; issue 19).
//
//   round k    IdSums by stack ──Update──> [ a ][ a;b ][ a;b;c ][ a;d ][ e ]   frame order
//   round k+1  IdSums by stack ──Update──> the same, with the new stacks merged in at their
//                                          places, the stacks gone taken out, sums replaced
//
// Frame order: frame by frame from the root, by the frames' texts (then ids, should two ids
// share a text), a stack before the stacks it is a prefix of; so a node's stacks are one run
// of it, and its children come in the order of their names. Each entry knows how many frames
// it shares with the one before it, so a node's children are the places in its run where that
// drops to the node's depth, found without reading a frame; with the running sums a child's
// sums are two reads; and siblings of one weight rank by their places, without reading their
// names (flame_tree.h: a node of a million leaves that tie reads none of their texts).
//
// Update matches this round's stacks with the order's by id. An id means the same stack from
// one round to the next while the order keeps the snapshot it was made from (`keep`): the
// intern table gives no swept id out again while a snapshot taken before the sweep lives
// (core/intern.h), and the frames of the stacks that left stay readable. Against another
// symbol table (a restore, a scenario's own) it is made anew. Cost:
// - every round, a pass over this round's stacks (one read of `position` and one write of
//   sums each), and one over the order for the running sums;
// - a stack that came: a binary search of the order for its place (comparing two frames' texts
//   at each step, where their stacks first differ), then one pass that moves the order's
//   entries up to make room; the shared frames of the entries beside a stack that came or
//   left are compared again;
// - made anew: at each depth, a run's stacks grouped by their frame there (a radix sort of the
//   ids), then its groups sorted by 8 bytes of their texts past the bytes all share, to the
//   depth where each stack is alone: each child's text read twice (a million leaves sharing
//   29 bytes: ~0.23 s, against 0.05 s by ids alone; seismo_micro BM_StackOrderMadeAnew).
//
// Memory: BytesFor(stacks, id bound), held between rounds by the warm-up and counted in the
// answer budget (api.h WarmCarry); Clear gives it back. An Update takes
// ScratchBytesFor(stacks) more while it runs, within the hold of the answer it is made for
// (ADR 0037). If an Update throws (out of memory), the order is cleared and the next Update
// makes it anew. The order also keeps the snapshot of its last Update alive (`keep`): when the
// warm-up skips the flame graph (a request built it first), that is an older snapshot than the
// warm-up's own, until the next Update.
//
// Threading: one thread at a time (the warm-up's).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "seismo/core/huge_pages.h"
#include "seismo/core/symbols.h"
#include "seismo/query/id_sums.h"

namespace seismo {

class StackOrder {
 public:
  struct Entry {
    const Sym* frames = nullptr;  // the stack table's bytes, root first
    uint32_t size = 0;
    StackId id = kNoId;
    uint32_t common = 0;  // frames it shares with the entry before it, from the root (0 for the first)
    int64_t hang_us = 0;
    int64_t hang_count = 0;
    std::span<const Sym> Frames() const { return {frames, size}; }
  };

  // Makes the order `by_stack`'s stacks (IdSums::Reduce of one group: by id, one entry per
  // stack), with their sums. `keep` keeps the stacks' ids readable until the next Update (the
  // snapshot they were read from; nothing where `symbols` outlives the order). True when it
  // was brought from the previous order, false when made anew.
  bool Update(std::span<const IdSums::Entry> by_stack, const Symbols& symbols,
              std::shared_ptr<const void> keep);
  void Clear();

  // An entry's shape, apart (what a walk of a node's stacks reads: 8 bytes of each).
  struct Shape {
    uint32_t common = 0;  // Entry::common
    uint32_t size = 0;    // Entry::size
  };

  // In frame order.
  std::span<const Entry> entries() const { return entries_; }
  std::span<const Shape> shapes() const { return shapes_; }
  size_t size() const { return entries_.size(); }
  // Sums of the stacks [lo, hi) of the order.
  int64_t HangUs(size_t lo, size_t hi) const { return us_before_[hi] - us_before_[lo]; }
  int64_t HangCount(size_t lo, size_t hi) const { return count_before_[hi] - count_before_[lo]; }

  // Bytes an order of `stacks` stacks of a table whose ids are below `id_bound` holds, at
  // most, between updates; what an Update takes beside them while it runs, given back when it
  // returns (ADR 0037); and what it holds now (its arrays' capacities).
  static uint64_t BytesFor(size_t stacks, size_t id_bound);
  static uint64_t ScratchBytesFor(size_t stacks);
  uint64_t MemoryBytes() const;

 private:
  void MakeAnew(std::span<const IdSums::Entry> by_stack, const Symbols& symbols);
  bool MergeIn(std::span<const IdSums::Entry> by_stack, const Symbols& symbols);
  void Positions(std::span<const IdSums::Entry> by_stack);  // position_ covers their ids
  void Index(size_t from);  // position_, `common` and shapes_ from entries_[from] on; the running sums

  std::vector<Entry, HugePageAllocator<Entry>> entries_;
  std::vector<Shape, HugePageAllocator<Shape>> shapes_;  // of each entry
  std::vector<int64_t, HugePageAllocator<int64_t>> us_before_ = {0},
                                                   count_before_ = {0};  // running sums, size() + 1
  std::vector<uint32_t, HugePageAllocator<uint32_t>>
      position_;  // by stack id: its place, if entries_ says so
  const Symbols* symbols_ = nullptr;
  std::shared_ptr<const void> keep_;
};

}  // namespace seismo
