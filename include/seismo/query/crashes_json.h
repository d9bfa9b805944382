// /api/v1/crashes/top (Top Crashers), /api/v1/crashes/timeseries and
// /api/v1/crashes/signature (docs/api.md; Crash Stats behaviour in
// reference/socorro-signatures.md §13).
//
// Top Crashers ranks signatures by crash count in the window (ties by
// signature, so the order is total), 1-based. The previous window of equal
// length is span(2W) - span(W); it is ranked the same way over every
// signature it holds, and rank_change = previous_rank - rank (positive: moved
// up). A signature absent from the previous window has previous_rank and
// rank_change null and is_new true — unless the previous window holds no crash of
// the selection (right after start): then is_new is false ("no previous data";
// previous_total 0). window=all has no previous window: previous_total,
// previous_rank and rank_change are null and is_new is false. With sparklines=1
// each row carries `trend`, its counts per bin (trend_bins of them, from trend_from).
// Crash rates divide by the usage (main pings) of the selected
// (channel, product, version, build_id, os) groups in the same window.
// installs is the HyperLogLog estimate, never more than the crash count.
//
// Threading: pure functions on an immutable Snapshot.
#pragma once

#include <string>

#include "seismo/aggregate/snapshot.h"
#include "seismo/query/answer_bound.h"
#include "seismo/query/params.h"

namespace seismo {

// Top Crashers' rows, and a signature's lists, while they fit `limits.max_bytes`; then
// `"truncated": true` and `"rows_omitted"` (or `"by_build_omitted"`, `"by_os_omitted"`,
// `"by_process_omitted"`): the number of rows left out.
std::string CrashesTopJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits = {});
std::string CrashesTimeseriesJson(const Snapshot& snap, const Query& q);
// q.filters[kSignature] is set.
std::string CrashSignatureJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits = {});

}  // namespace seismo
