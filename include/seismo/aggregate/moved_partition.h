// MovedPartition: everything a source partition's state is when it moves to another
// instance (ADR 0024, "Restoring a partition"): read back from the aggregates topic,
// adopted by a running pipeline (Pipeline::AdoptSource) as if it had never left.
#pragma once

#include <cstdint>
#include <vector>

#include "seismo/aggregate/crash_ids.h"
#include "seismo/aggregate/partition_counts.h"
#include "seismo/aggregate/shard_image.h"

namespace seismo {

struct MovedPartition {
  std::vector<SeriesImage> series;     // each series once per bucket it has a value in, or whole
  int64_t stream_time_ms = INT64_MIN;  // the partition's stream time where it was
  PartitionCounts counts;              // its record counts and shard counters
  CrashIds crash_ids;                  // the crash ids its states remember
};

}  // namespace seismo
