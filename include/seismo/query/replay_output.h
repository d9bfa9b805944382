// The replay/run output document of SPEC §6.4: one JSON object with `records`,
// `usage`, `builds`, `hangs`, `crashes` and `alerts`, rows sorted by their
// dimension tuple so two runs over the same input give byte-identical files.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "seismo/aggregate/aggregates.h"
#include "seismo/core/reject.h"

namespace seismo {

// Rates from exact integer sums: per usage hour, null when the usage is 0.
std::optional<double> PerUsageHour(int64_t amount_thousandths, int64_t usage_ms);
double UsageHours(int64_t usage_ms);

// `alerts_json` is a JSON array (already rendered), "[]" when there are none.
std::string ReplayOutputJson(const Aggregates& aggregates, const RecordCounts& counts,
                             const std::string& alerts_json = "[]", int indent = 0);

}  // namespace seismo
