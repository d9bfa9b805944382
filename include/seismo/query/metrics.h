// /metrics: Prometheus text exposition format 0.0.4. Every family has
// `# HELP` and `# TYPE`; names follow Prometheus conventions (`_total` for
// counters, base units: seconds, bytes).
//
// Threading: pure function on values the caller copied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/core/record_counts.h"
#include "seismo/query/provider.h"

namespace seismo {

// A copy of one latency histogram per route label (non-cumulative bucket counts;
// counts.size() == upper_bounds_s.size() + 1, the last being +Inf).
struct LatencyHistograms {
  std::vector<double> upper_bounds_s;
  struct Route {
    std::string path;
    std::vector<uint64_t> counts;
    double sum_s = 0;
  };
  std::vector<Route> routes;
};

struct HttpStats {
  LatencyHistograms latency;
  uint64_t sse_clients = 0;
  uint64_t answer_memory_bytes = 0;  // held by API answers in flight (ADR 0025)
  uint64_t answers_refused = 0;      // API requests answered 503: the answer budget was held
  uint64_t answer_cache_hits = 0;    // API answers served from the answer cache (ADR 0025)
};

// Alert counts by state from the alert engine's JSON array: the top-level
// "state" member of each alert object.
std::vector<std::pair<std::string, uint64_t>> AlertStateCounts(std::string_view alerts_json);

std::string MetricsText(const Snapshot* snap, const RecordCounts& counts, const ServiceStatus& status,
                        std::string_view alerts_json, const HttpStats& http, int64_t now_ms);

}  // namespace seismo
