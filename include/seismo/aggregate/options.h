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
  size_t max_series = 200'000;         // per shard, series of every table (fold.h)
  uint64_t memory_limit = 2ull << 30;  // bytes, whole process (ADR 0010)
  uint64_t fixed_reserve = 0;          // bytes of memory_limit that queues, buffers and code hold
  size_t shards = 1;                   // to divide memory_limit
};

// Copies of the aggregate state that live at once: the shards' own state, each
// shard's latest snapshot, the merged snapshot being published and the one readers
// may still hold (ADR 0010).
inline constexpr uint64_t kStateCopies = 4;

// Bytes one shard's state may hold: what memory_limit leaves after the fixed
// reserve, shared by the shards and the copies. Never below 1 MiB.
inline uint64_t ShardStateBudget(const AggregateOptions& o) {
  const uint64_t free = o.memory_limit > o.fixed_reserve ? o.memory_limit - o.fixed_reserve : 0;
  const uint64_t shards = o.shards == 0 ? 1 : o.shards;
  const uint64_t budget = free / shards / kStateCopies;
  return budget < (1u << 20) ? (1u << 20) : budget;
}

}  // namespace seismo
