#include "seismo/aggregate/partition_counts.h"

namespace seismo {

void AddCounts(RecordCounts& a, const RecordCounts& b) {
  for (size_t i = 0; i < a.by_kind.size(); ++i) a.by_kind[i] += b.by_kind[i];
  for (size_t i = 0; i < a.rejected.size(); ++i) a.rejected[i] += b.rejected[i];
  a.documents += b.documents;
  a.bytes += b.bytes;
}

void AddCounts(ShardCounters& a, const ShardCounters& b) {
  a.deltas += b.deltas;
  a.duplicates += b.duplicates;
  a.late_dropped += b.late_dropped;
  a.folded += b.folded;
  a.dedup_forgotten += b.dedup_forgotten;
}

}  // namespace seismo
