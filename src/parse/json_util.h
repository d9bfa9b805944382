// Small helpers over simdjson On-Demand shared by the parse stage's files.
// Internal to src/parse (simdjson lives only in this stage).
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>

#include "seismo/core/reject.h"

namespace seismo::parse_internal {

namespace od = simdjson::ondemand;

// nullopt = fine; otherwise why the document is rejected.
using Outcome = std::optional<RejectReason>;

// Maps a simdjson error met while reading a field to a reject reason.
// `type_reason` is what an INCORRECT_TYPE error means in that context.
RejectReason FromSimdjson(simdjson::error_code e, RejectReason type_reason = RejectReason::kWrongType);

// Reads an optional string field value: null -> nullopt (ok); non-string -> kWrongType.
// The view is into the parser's string buffer: it lives as long as the document.
Outcome ReadOptString(od::value v, std::optional<std::string_view>& out);

// True when the value is JSON null (consumes nothing otherwise).
bool IsNull(od::value& v);

// Parses a non-negative decimal integer that fills the whole text.
std::optional<uint64_t> ParseUint(std::string_view text);

}  // namespace seismo::parse_internal
