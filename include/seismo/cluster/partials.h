// A source partition's state as aggregates-topic partials, and back (ADR 0023,
// ADR 0024): split by bucket when published, merged into any state when read.
// Merging partials is the merge of checkpoint restore and of shards
// (ShardState::RestoreSeries): values add, sketches merge, first times take
// the minimum, so the order partials arrive in does not matter.
//
// Threading: pure functions; MergePartial runs where the state's writer runs.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seismo/aggregate/shard_state.h"
#include "seismo/cluster/record.h"

namespace seismo {

// Half of Kafka's default max.message.bytes (1 048 588): room for the key, the
// batch's overhead, and a broker configured below the default.
inline constexpr size_t kMaxPartialBytes = 512 * 1024;

// One partial per bucket any series holds, ascending by bucket, each bucket in as
// few parts (a power of two, by the series' content hash) as keep every encoded
// value within `max_value_bytes` (a single series larger than that still makes one
// part of its own). A series with a value in a bucket appears in that bucket's
// partial with that one entry, its installs sketch and first time; a key that comes more
// than once (a crash series in several shards) is there once, its copies merged.
// Within a partial, series are ordered by content hash, so a bucket that did not change
// encodes to the same bytes. `partition.bucket` and `partition.part` are ignored.
std::vector<PartialRecord> SplitIntoPartials(std::span<const SeriesImage> series,
                                             const PartitionBucket& partition, int64_t bucket_ms,
                                             int64_t source_offset, int64_t stream_time_ms,
                                             std::string_view owner, const Symbols& symbols,
                                             size_t max_value_bytes = kMaxPartialBytes);

// Adds a partial's series into `state` (RestoreSeries).
void MergePartial(const PartialRecord& partial, ShardState& state);

}  // namespace seismo
