// /api/v1/alerts: the alert engine's JSON array narrowed by the query's filters.
//
//   alerts_json = [{"state":"firing","rule":"crash_signature_spike","channel":"release",
//                   "os":"all","build":"20261117090501","build_id":"20261117090501",
//                   "signature":"OOM | small",...}, ...]
//   FilterAlertsJson(alerts_json, q) -> the same array text, only the alerts that match
//
// The JSON belongs to the alert engine (AlertJson in seismo/alert/engine.h); the
// query stage sits upstream of it, so it reads the rendered array with a small
// reader for JSON text this program wrote (an array of objects), looking only at
// top-level string members. A member that is absent or null means the alert does
// not split by that dimension, and the filter does not narrow it (as for table rows
// without a dimension, docs/api.md); "os": "all" counts as not split by OS.
// `build_id` and `build_date` also match each other through the first 8 characters
// of a build id (hang alerts carry a build date, crash alerts a build id).
// `rule` and `state` are exact matches on those members.
//
// Threading: pure functions on values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/query/params.h"

namespace seismo {

// The elements of a JSON array as text (whitespace around them trimmed);
// nullopt when `json` is not a well-formed array of JSON values.
std::optional<std::vector<std::string_view>> SplitJsonArray(std::string_view json);

// The decoded value of `object`'s top-level member `key` when it is a string;
// nullopt when it is absent, not a string, or `object` is not a JSON object.
std::optional<std::string> TopLevelString(std::string_view object, std::string_view key);

// The alerts of `alerts_json` that match q's filters, rule and state, as a JSON
// array. Malformed input yields "[]".
std::string FilterAlertsJson(std::string_view alerts_json, const Query& q);

}  // namespace seismo
