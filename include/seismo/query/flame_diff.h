// /api/v1/hangs/flamegraph/diff: the differential flame graph (issue 20, ADR 0030). A hang
// build (channel, build date) against its baseline builds at equal age — the same
// builds and hours the hang alerts and /api/v1/releases compare (aggregate/releases.h) —
// as one call tree over the stacks of either side:
//
//   (root)  build 170 ms/h  baseline 150 ms/h  delta +20 ─┬─ Tick   120 | 90  +30
//                                                         └─ Paint   50 | 60  −10
//
// Each side's hang time is divided by its own usage (the source's usage of every OS, the
// pooled baselines' over their hours), so the sides compare per usage hour whatever their
// sizes. Narrowed by process, thread or signature like /hangs; never by OS or window.
// Bounded as the plain flame graph is (ADR 0025), each node weighing both sides' ms per
// usage hour, so a path that vanished in the new build keeps its place.
//
// Threading: pure function on an immutable Snapshot.
#pragma once

#include <string>

#include "seismo/aggregate/releases.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/query/answer_bound.h"
#include "seismo/query/params.h"

namespace seismo {

std::string FlamegraphDiffJson(const Snapshot& snap, const Query& q, const BaselinePolicy& policy,
                               const AnswerLimits& limits = {});

}  // namespace seismo
