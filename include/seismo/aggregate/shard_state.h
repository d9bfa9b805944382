// ShardState: the aggregates of the series routed to one shard.
//
//   ShardState
//   ├── tables_[kUsage]       key -> SeriesValues
//   ├── tables_[kBuildUsage]  key -> SeriesValues
//   ├── tables_[kHangs]       key -> SeriesValues
//   └── tables_[kCrashes]     key -> SeriesValues (+ installs sketch)
//
// Ownership: created and owned by its ShardWorker. Threading: Apply() and
// every mutator run on the shard thread only; readers get merged copies
// (Aggregates) produced on the shard thread or after it stopped.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/hll.h"

namespace seismo {

struct SeriesValues {
  std::array<int64_t, kMaxValues> v{};
  HyperLogLog installs;  // kCrashes only

  void Add(const SeriesValues& o);
};

using SeriesTable = std::unordered_map<std::string, SeriesValues>;

struct ShardCounters {
  uint64_t deltas = 0;
  uint64_t duplicates = 0;  // crash deltas whose document id was seen before
};

class ShardState {
 public:
  void Apply(const Delta& d);

  const SeriesTable& table(Table t) const { return tables_[static_cast<size_t>(t)]; }
  const ShardCounters& counters() const { return counters_; }

 private:
  std::array<SeriesTable, kTableCount> tables_;
  std::unordered_set<uint64_t> seen_crash_docs_;
  ShardCounters counters_;
};

}  // namespace seismo
