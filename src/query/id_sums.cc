#include "seismo/query/id_sums.h"

#include <bit>

#include "seismo/query/radix_sort.h"

namespace seismo {

std::span<const IdSums::Entry> IdSums::Reduce() {
  if (ids_ascending_) {
    // Within each group the ids are in order already: a stable sort by group keeps them so.
    RadixSortBy(entries_, std::bit_width(max_group_), [](const Entry& e) { return uint64_t{e.group}; });
  } else {
    // The key: the group above the id's bits.
    const int id_bits = std::bit_width(max_id_);
    RadixSortBy(entries_, id_bits + std::bit_width(max_group_),
                [id_bits](const Entry& e) { return (uint64_t{e.group} << id_bits) | e.id; });
  }
  // Equal keys are adjacent: summed into the first.
  size_t out = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (out > 0 && entries_[out - 1].group == entries_[i].group && entries_[out - 1].id == entries_[i].id) {
      entries_[out - 1].sums.Add(entries_[i].sums);
    } else {
      entries_[out++] = entries_[i];
    }
  }
  entries_.resize(out);
  ids_ascending_ = max_group_ == 0;  // sorted by (group, id): by id when there is one group
  return entries_;
}

}  // namespace seismo
