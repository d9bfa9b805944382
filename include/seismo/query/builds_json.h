// /api/v1/builds: one row per (channel, product, version, build_id), newest
// build first, with usage, crash counts and rates per class, and hang rates
// of the build's date per source (docs/api.md).
//
// Threading: pure function on an immutable Snapshot.
#pragma once

#include <string>

#include "seismo/aggregate/snapshot.h"
#include "seismo/query/params.h"

namespace seismo {

std::string BuildsJson(const Snapshot& snap, const Query& q);

}  // namespace seismo
