#include "round.h"

namespace seismo {

std::vector<AlertCandidate> EvaluateRules(const Snapshot& snap, const AlertOptions& options) {
  alert_detail::Round round(snap, options);
  const alert_detail::BuildIndex& index = snap.Builds();
  alert_detail::CrashRules(round, index);
  alert_detail::HangRules(round, index);
  alert_detail::BurstRule(round, index);
  return std::move(round).Finish();
}

}  // namespace seismo
