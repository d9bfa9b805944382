// How shards bucket, window and bound their state (config section [aggregate]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace seismo {

struct AggregateOptions {
  int64_t bucket_ms = 60'000;
  std::vector<int64_t> windows_ms = {3'600'000, 86'400'000, 604'800'000};
  int64_t retention_ms = 14 * 86'400'000LL;
  size_t max_series = 200'000;      // per shard, hang and crash series (usage is never folded)
  uint64_t memory_limit = 2ull << 30;  // bytes, whole process; each shard gets its share
  size_t shards = 1;                 // to divide memory_limit
};

}  // namespace seismo
