// /api/v1/builds: one row per (channel, product, version, build_id), newest
// build first, with usage, crash counts and rates per class, and hang rates
// of the build's date per source, and how it compares with its baseline builds at equal
// age (docs/api.md, ADR 0029).
//
// Threading: pure function on an immutable Snapshot.
#pragma once

#include <string>

#include "seismo/aggregate/releases.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/query/params.h"

namespace seismo {

// `policy`: which earlier builds each row's `at_equal_age` compares it with (releases_json.h).
std::string BuildsJson(const Snapshot& snap, const Query& q, const BaselinePolicy& policy = {});

}  // namespace seismo
