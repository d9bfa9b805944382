#include "seismo/aggregate/shard_state.h"

namespace seismo {

void SeriesValues::Add(const SeriesValues& o) {
  for (size_t i = 0; i < kMaxValues; ++i) v[i] += o.v[i];
  if (!o.installs.empty()) installs.Merge(o.installs);
}

void ShardState::Apply(const Delta& d) {
  ++counters_.deltas;
  if (d.table == Table::kCrashes && d.doc_hash != 0) {
    if (!seen_crash_docs_.insert(d.doc_hash).second) {
      ++counters_.duplicates;
      return;
    }
  }
  SeriesValues& s = tables_[static_cast<size_t>(d.table)][d.key];
  for (size_t i = 0; i < kMaxValues; ++i) s.v[i] += d.values[i];
  if (d.install_hash != 0) s.installs.Add(d.install_hash);
}

}  // namespace seismo
