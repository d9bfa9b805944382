// /api/v1/releases: a build beside its baseline builds at equal age, as Mission Control
// draws release lines and as the alert rules compare them (ADR 0029): for one channel,
// the build asked for (by build_id or build_date; else the newest), the comparison at its
// age (aggregate/releases.h: life to date against each baseline's first as many hours),
// and each build's crash rates and hang rates hour by hour of its age, cumulative.
// /api/v1/builds rows carry the same comparison (`at_equal_age`, BuildComparisonJson).
//
// Threading: pure functions on an immutable Snapshot.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <string>
#include <utility>

#include "seismo/aggregate/releases.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/core/json_writer.h"
#include "seismo/query/params.h"

namespace seismo {

std::string ReleasesJson(const Snapshot& snap, const Query& q, const BaselinePolicy& policy);

// The comparisons of a snapshot's builds, for /builds rows (over the snapshot's Builds()).
class BuildComparisons {
 public:
  BuildComparisons(const Snapshot& snap, const BaselinePolicy& policy);
  // Writes a row's `at_equal_age`: {"crashes": the build's crash rate per 1000 usage hours
  // over its life, its baselines' over as many hours of theirs, their ratio, the age and
  // the baseline builds; "hangs": the same for the hang ms per usage hour of its date (bhr
  // pings when it has them, else main)}; each null without a baseline.
  void Write(JsonWriter& w, Sym channel, Sym build_id) const;

 private:
  const Snapshot& snap_;
  const BaselinePolicy& policy_;
  const BuildIndex& index_;                                           // the snapshot's (Snapshot::Builds)
  absl::flat_hash_map<std::pair<Sym, Sym>, size_t> crash_at_;         // (channel, build id)
  absl::flat_hash_map<std::pair<Sym, std::string>, size_t> hang_at_;  // (channel, build date)
};

}  // namespace seismo
