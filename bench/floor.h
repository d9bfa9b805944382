// The parse-only floor (SPEC §8): simdjson On-Demand reading the fields
// seismo reads (src/parse/ping_fields.cc for main and bhr pings; the
// dimensions, times and frames the crash parser reads for crash documents),
// with no copies, no signatures, no deltas and no aggregation. Replay
// throughput is reported as a ratio of this.
//
// Threading: one FloorExtractor per thread (it owns a simdjson parser).
#pragma once

#include <simdjson.h>

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace seismo::bench {

// The least an exact aggregation adds to the floor, for `seismo_floor --keyed` (what bounds
// issue 15's targets, docs/benchmarks.md): every hang frame interned into one table of
// texts, every stack (its frames' ids) into a table of stacks, and every hang counted in a
// table of series keyed by its stack. One thread: no locks, no queues, no copies but the
// texts kept once.
class FloorKeys {
 public:
  void Frame(std::string_view text);
  void EndHang();
  size_t texts() const { return texts_.size(); }
  size_t series() const { return series_.size(); }

 private:
  std::string_view Keep(std::string_view bytes);

  absl::flat_hash_map<std::string_view, uint32_t> texts_;   // views into blocks_
  absl::flat_hash_map<std::string_view, uint32_t> stacks_;  // a stack's frame ids' bytes
  absl::flat_hash_map<uint32_t, uint64_t> series_;          // stack id -> hangs
  std::vector<uint32_t> frames_;                            // of the hang being read
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t used_ = 0;
};

// What the extractor saw, summed so the compiler cannot drop the work.
struct FloorTotals {
  uint64_t documents = 0;
  uint64_t errors = 0;
  uint64_t usage = 0;        // subsessionLength + timeSinceLastPing
  uint64_t hang_buckets = 0; // histogram buckets and bhr hangs read
  uint64_t frames = 0;       // stack frames read (hangs and crashes)
  uint64_t string_bytes = 0; // bytes of every string value read
  FloorKeys* keys = nullptr; // --keyed: hang frames and stacks keyed as well
};

class FloorExtractor {
 public:
  // `padded` must have SIMDJSON_PADDING readable bytes after the document.
  void Extract(simdjson::padded_string_view padded, FloorTotals& totals);

 private:
  simdjson::ondemand::parser parser_;
};

}  // namespace seismo::bench
