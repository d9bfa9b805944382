// /api/v1/hangs and /api/v1/hangs/timeseries (docs/api.md).
//
// Hang rates divide by the usage of the (source, channel, os, build_date)
// groups the filters select, over the same window; rows grouped by build date
// divide by that date's usage. The source is the `source` filter, else "bhr"
// when the snapshot holds bhr usage, else "main": the two sources measure
// different things and are never summed.
//
// Bounded (query/answer_bound.h): rows past `limits.max_bytes` are left out and counted
// (`"truncated": true, "rows_omitted": n`); a stack's frames past it too
// (`"frames_omitted": n` next to the stack).
//
// Threading: pure functions on an immutable Snapshot.
#pragma once

#include <string>

#include "seismo/aggregate/snapshot.h"
#include "seismo/query/answer_bound.h"
#include "seismo/query/params.h"

namespace seismo {

class BucketSums;  // query/bucket_sums.h
class HangGroups;  // query/hang_groups.h
class HangRows;    // query/hang_rows.h

// `shared`: the hang rows of the round's answers (read when they serve the query,
// HangRows::Serves); `kept`: the warm-up's groups (read when they are the query's,
// HangGroups::Serves). Either way, the same bytes.
std::string HangsJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits = {},
                      const HangRows* shared = nullptr, const HangGroups* kept = nullptr);
// `kept`: the warm-up's sums by bucket (read when they are the query's, BucketSums::Serves),
// else every hang series of the source is walked; the same bytes.
std::string HangsTimeseriesJson(const Snapshot& snap, const Query& q, const BucketSums* kept = nullptr);

// The source a hang query reads: the filter, or bhr when any bhr usage exists, else main.
std::string HangSource(const Snapshot& snap, const Query& q);
// The query's filters with the source filter set to `source` (rows of other sources never count).
Filters HangFilters(const Query& q, const std::string& source);
// The id of a source's text in `snap`'s symbols; kNoId when no key holds it.
Sym SourceId(const Snapshot& snap, std::string_view source);

}  // namespace seismo
