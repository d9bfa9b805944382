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
#include "seismo/query/answer_bound.h"
#include "seismo/query/params.h"

namespace seismo {

class HangRows;       // query/hang_rows.h
class BuildDateSums;  // query/build_date_sums.h

// `policy`: which earlier builds each row's `at_equal_age` compares it with (releases_json.h).
// `shared`: the hang rows of the round's answers (read when they serve the query, HangRows::Serves).
// `kept`: the warm-up's hang sums by build date (read instead of the rows when they serve it).
// `limits`: the rows that fit `max_bytes`, then `"truncated": true, "builds_omitted": n`.
std::string BuildsJson(const Snapshot& snap, const Query& q, const BaselinePolicy& policy = {},
                       const HangRows* shared = nullptr, const BuildDateSums* kept = nullptr,
                       const AnswerLimits& limits = {});

}  // namespace seismo
