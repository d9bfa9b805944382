// Snapshot: the merged, immutable view of every shard's state at one moment,
// what the HTTP API and the alert engine read. Built by the publisher thread
// from per-shard snapshots and shared as shared_ptr<const Snapshot>; readers
// never touch shard state.
//
// Spans are the configured windows W and their doubles 2W (capped at the
// retention): "previous window" sums are span(2W) - span(W).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seismo/aggregate/aggregates.h"
#include "seismo/aggregate/shard_state.h"

namespace seismo {

struct MergedSeries {
  SeriesValues total;                // within the retention
  std::vector<SeriesValues> spans;   // per Snapshot::spans_ms
  std::vector<BucketPoint> points;   // per bucket within the longest window, ascending
  std::vector<HourPoint> hourly;     // per hour over the whole retention
  int64_t first_ms = INT64_MAX;      // earliest event time still retained
};

struct Snapshot {
  int64_t stream_time_ms = 0;
  // Latest event time aggregated per table (INT64_MIN: none yet). Inputs arrive through
  // different topics and can lag one another; rules that compare tables read up to the
  // earliest of these rather than stream_time_ms.
  std::array<int64_t, kTableCount> table_time_ms = MakeTableTimes();
  int64_t bucket_ms = 60'000;
  std::vector<int64_t> windows_ms;
  std::vector<int64_t> spans_ms;
  std::array<std::map<std::string, MergedSeries>, kTableCount> tables;
  ShardCounters counters;  // summed over shards
  size_t memory_bytes = 0;
  int64_t built_at_ms = 0;  // wall clock

  const std::map<std::string, MergedSeries>& table(Table t) const {
    return tables[static_cast<size_t>(t)];
  }
  // Index into spans_ms of a span length; nullopt when not kept.
  std::optional<size_t> SpanIndex(int64_t span_ms) const;
  // Totals as replay output expects them.
  Aggregates Totals() const;
};

// Merges per-shard snapshots (any order gives the same result). `built_at_ms` is the wall
// clock the snapshot is published at (what seismo_snapshot_age_seconds measures from); the
// short form, for snapshots nobody publishes (tests, replay's alert round), leaves it 0.
std::shared_ptr<const Snapshot> MergeSnapshots(
    const std::vector<std::shared_ptr<const ShardSnapshot>>& shards, int64_t bucket_ms,
    const std::vector<int64_t>& windows_ms, int64_t built_at_ms);
inline std::shared_ptr<const Snapshot> MergeSnapshots(
    const std::vector<std::shared_ptr<const ShardSnapshot>>& shards, int64_t bucket_ms,
    const std::vector<int64_t>& windows_ms) {
  return MergeSnapshots(shards, bucket_ms, windows_ms, 0);
}

}  // namespace seismo
