// Aggregates: the merged, ordered view of every shard's tables — what replay
// writes and what queries read. Merging is sums (and sketch unions), so the
// result does not depend on how series were spread over shards.
//
// Threading: an immutable value once built; share as shared_ptr<const>.
#pragma once

#include <array>
#include <map>
#include <string>

#include "seismo/aggregate/shard_state.h"

namespace seismo {

using OrderedTable = std::map<std::string, SeriesValues>;

struct Aggregates {
  std::array<OrderedTable, kTableCount> tables;
  uint64_t duplicates = 0;
  uint64_t late_dropped = 0;
  uint64_t folded = 0;

  const OrderedTable& table(Table t) const { return tables[static_cast<size_t>(t)]; }
  OrderedTable& table(Table t) { return tables[static_cast<size_t>(t)]; }

  // Adds one shard's state (local state -> combine).
  void Merge(const ShardState& shard);
  // Adds another instance's aggregates (e.g. two consumers of one group).
  void Add(const Aggregates& other);
};

}  // namespace seismo
