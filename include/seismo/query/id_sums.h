// IdSums: hang sums by (group, id) over the rows an answer walks, where the ids can be
// many: a flame graph's stacks (one group), a /hangs answer's top stacks per shown row (a
// group per row), its rows by signature (a group per process and thread).
//
//   Add(group, id, values) per row ──> Reduce(): sorted by (group, id), equal keys summed,
//                                       one entry per key
//
// Ids are intern ids (Sym, StackId: dense, below the table's IdBound), so Reduce sorts by
// an LSD radix sort on the bits the keys use (radix_sort.h: a million distinct stacks of
// one group take two passes over the array), where a hash map of a million keys cost an
// insert with a cache miss each (issue 19: the default /hangs answers and the flame graph
// at 10⁶ hang series). When the ids were added in ascending order (rows read in stack
// order, HangRows), Reduce sorts by the group's bits only: none for one group.
//
// Threading: one thread at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "seismo/core/huge_pages.h"
#include "seismo/core/symbols.h"
#include "seismo/query/selection.h"

namespace seismo {

class IdSums {
 public:
  struct Entry {
    uint32_t group = 0;
    InternId id = kNoId;
    HangSums sums;
  };

  void Add(uint32_t group, InternId id, const HangSums& v) {
    ids_ascending_ = ids_ascending_ && (entries_.empty() || id >= entries_.back().id);
    entries_.push_back({group, id, v});
    max_group_ = group > max_group_ ? group : max_group_;
    max_id_ = id > max_id_ ? id : max_id_;
  }
  // Room for `n` Adds without growing (a million at 10⁶ series: each growth copies them).
  void Reserve(size_t n) { entries_.reserve(n); }
  // Sorted by (group, id), one entry per key with the sums of every Add of it. Valid
  // until the next Add.
  std::span<const Entry> Reduce();

 private:
  std::vector<Entry, HugePageAllocator<Entry>> entries_;  // a million at 10⁶ series (huge_pages.h)
  uint32_t max_group_ = 0;
  InternId max_id_ = 0;
  bool ids_ascending_ = true;  // every entry's id >= the one before it
};

}  // namespace seismo
