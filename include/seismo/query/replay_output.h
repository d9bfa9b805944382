// The replay/run output document of SPEC §6.4: one JSON object with `records`,
// `usage`, `builds`, `hangs`, `crashes` and `alerts`, rows sorted by their
// dimension tuple (Snapshot::sorted, KeyLess) so two runs over the same input give
// byte-identical files.
//
// It is written from the final Snapshot as it is made: every row's numbers come
// from the series (total within the retention, distinct installs), the counters
// (duplicates, late_dropped, folded) from Snapshot::counters, and the text reaches
// the sink in pieces of about kOutputPiece bytes (or of a part of rows each, with several
// threads), never as one string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "seismo/aggregate/snapshot.h"
#include "seismo/core/record_counts.h"
#include "seismo/query/output_sink.h"

namespace seismo {

// Rates from exact integer sums: per usage hour, null when the usage is 0.
std::optional<double> PerUsageHour(int64_t amount_thousandths, int64_t usage_ms);
double UsageHours(int64_t usage_ms);

// Bytes WriteReplayOutput gathers before handing them to the sink.
inline constexpr size_t kOutputPiece = size_t{1} << 20;

// Writes the document to `sink` (no trailing newline). `alerts_json` is a JSON array
// (already rendered), "[]" when there are none; `indent` > 0 pretty-prints. `threads` > 1
// writes a table's rows in parts of 512 on that many threads (the caller's among them),
// handed to the sink in order, one part per write: the same bytes.
void WriteReplayOutput(const Snapshot& snap, const RecordCounts& counts, std::string_view alerts_json,
                       int indent, OutputSink& sink, int threads = 1);

// The same document as one string (tests, small outputs; no sink, no pieces).
std::string ReplayOutputJson(const Snapshot& snap, const RecordCounts& counts,
                             const std::string& alerts_json = "[]", int indent = 0, int threads = 1);

}  // namespace seismo
