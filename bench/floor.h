// The parse-only floor (SPEC §8): simdjson On-Demand reading the fields
// seismo reads (src/parse/ping_fields.cc for main and bhr pings; the
// dimensions, times and frames the crash parser reads for crash documents),
// with no copies, no signatures, no deltas and no aggregation. Replay
// throughput is reported as a ratio of this.
//
// Threading: one FloorExtractor per thread (it owns a simdjson parser).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string_view>

namespace seismo::bench {

// What the extractor saw, summed so the compiler cannot drop the work.
struct FloorTotals {
  uint64_t documents = 0;
  uint64_t errors = 0;
  uint64_t usage = 0;        // subsessionLength + timeSinceLastPing
  uint64_t hang_buckets = 0; // histogram buckets and bhr hangs read
  uint64_t frames = 0;       // stack frames read (hangs and crashes)
  uint64_t string_bytes = 0; // bytes of every string value read
};

class FloorExtractor {
 public:
  // `padded` must have SIMDJSON_PADDING readable bytes after the document.
  void Extract(simdjson::padded_string_view padded, FloorTotals& totals);

 private:
  simdjson::ondemand::parser parser_;
};

}  // namespace seismo::bench
