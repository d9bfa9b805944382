// ShardImage: everything a ShardState holds, in a form that can be written
// to a checkpoint and restored into a ShardSet of any shard count (series are
// re-routed by key). Window sums and totals are not stored: they are rebuilt
// from the buckets and the stream time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/hll.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/core/bytes.h"

namespace seismo {

struct SeriesImage {
  struct Entry {
    int64_t bucket = 0;
    std::array<int64_t, kMaxValues> v{};
    HyperLogLog installs;  // empty for tables and deltas without install ids
  };
  Table table = Table::kUsage;
  std::string key;
  int64_t first_ms = 0;
  std::vector<Entry> entries;  // ascending buckets
};

struct ShardImage {
  int64_t stream_time_ms = INT64_MIN;
  ShardCounters counters;
  int64_t dedup_epoch = INT64_MIN;
  std::vector<uint64_t> seen_docs;      // crash document ids, current generation
  std::vector<uint64_t> seen_previous;  // previous generation
  std::vector<SeriesImage> series;
};

void EncodeShardImage(const ShardImage& image, ByteWriter& w);
// False when the bytes are not a valid image (the reader then reports !ok()).
bool DecodeShardImage(ByteReader& r, ShardImage& image);

}  // namespace seismo
