// PartitionCounts: what one source partition's documents added to the counters (ADR 0024,
// "Counts"): the parse workers' decisions (accepted by kind, rejected by reason) and the
// shard threads' (duplicates, late, folded) for that partition's state alone. A cluster
// publishes them per partition (cluster/record.h, c/ records) so the global view's header
// counts are the whole corpus's, and a partition that moves takes them along.
#pragma once

#include "seismo/aggregate/shard_state.h"
#include "seismo/core/record_counts.h"

namespace seismo {

struct PartitionCounts {
  RecordCounts records;
  ShardCounters shards;
};

// a += b, field by field.
void AddCounts(RecordCounts& a, const RecordCounts& b);
void AddCounts(ShardCounters& a, const ShardCounters& b);
inline void AddCounts(PartitionCounts& a, const PartitionCounts& b) {
  AddCounts(a.records, b.records);
  AddCounts(a.shards, b.shards);
}

}  // namespace seismo
