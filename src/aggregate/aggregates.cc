#include "seismo/aggregate/aggregates.h"

namespace seismo {

void Aggregates::Merge(const ShardState& shard) {
  for (size_t t = 0; t < kTableCount; ++t) {
    for (const auto& [key, values] : shard.Totals(static_cast<Table>(t))) tables[t][key].Add(values);
  }
  duplicates += shard.counters().duplicates;
  late_dropped += shard.counters().late_dropped;
  folded += shard.counters().folded;
}

void Aggregates::Add(const Aggregates& other) {
  for (size_t t = 0; t < kTableCount; ++t) {
    for (const auto& [key, values] : other.tables[t]) tables[t][key].Add(values);
  }
  duplicates += other.duplicates;
  late_dropped += other.late_dropped;
  folded += other.folded;
}

}  // namespace seismo
