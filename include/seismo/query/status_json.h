// /api/v1/status, /readyz and the small SSE "snapshot" message.
//
// Threading: pure functions; `snap` may be null (nothing published yet).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seismo/aggregate/releases.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/core/record_counts.h"
#include "seismo/query/answer_bound.h"
#include "seismo/query/provider.h"

namespace seismo {

// What the API knows about the configuration before a snapshot exists.
struct ApiSettings {
  std::vector<int64_t> windows_ms = {3'600'000, 86'400'000, 604'800'000};
  int64_t bucket_ms = 60'000;
  AnswerLimits limits;  // bytes and flame-graph nodes of one answer ([http] max_answer_*)
  BaselinePolicy baselines;  // which earlier builds a build is compared with ([alerts]; ADR 0029)
};

// `now_ms` is the wall clock (for uptime).
std::string StatusJson(const Snapshot* snap, const RecordCounts& counts, const ServiceStatus& status,
                       const ApiSettings& settings, int64_t now_ms);

// The /readyz body: {"ready", "restored", "consuming", "sources_done", "reason"}; served with
// 200 when IsReady(status), else 503.
std::string ReadyzJson(const ServiceStatus& status);

// {"stream_time": "..." | null, "documents": n}
std::string SnapshotEventJson(const Snapshot* snap, const RecordCounts& counts);

}  // namespace seismo
