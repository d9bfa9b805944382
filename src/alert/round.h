// One evaluation round of the alert rules: the candidates each rule adds, and the
// round's multiple-testing guard applied to every tested candidate together.
//
//   CrashRules, HangRules, BurstRule ──Add / AddTested──> Round ──Finish──> candidates
//                                                          (p adjusted, holds decided,
//                                                           sorted by key)
//
// Threading: one round, one thread.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "build_index.h"
#include "seismo/alert/engine.h"
#include "seismo/aggregate/hll.h"

namespace seismo::alert_detail {

class Round {
 public:
  Round(const Snapshot& snap, const AlertOptions& options) : snap_(snap), options_(options) {}

  const Snapshot& snap() const { return snap_; }
  const AlertOptions& options() const { return options_; }

  // A candidate whose condition holds without a test (new_crash_signature).
  void Add(AlertKey key, AlertNumbers numbers);
  // A tested candidate: it holds when `log_p` is significant after the round's guard and
  // its ratio reaches `min_ratio`.
  void AddTested(AlertKey key, AlertNumbers numbers, double log_p, double min_ratio);

  // Adjusts the p-values of the round's tests as one family, decides which candidates
  // hold, and returns every candidate sorted by key.
  std::vector<AlertCandidate> Finish() &&;

 private:
  struct Test {
    size_t candidate;
    double log_p;
    double min_ratio;
  };
  const Snapshot& snap_;
  const AlertOptions& options_;
  std::vector<AlertCandidate> candidates_;
  std::vector<Test> tests_;
};

// Rate ratio (count_new / exposure_new) / (count_base / exposure_base); none when the
// baseline is 0 or an exposure is not positive.
std::optional<double> RateRatio(double count_new, double exposure_new, double count_base,
                                double exposure_base);

// Build-to-build variation of signature rates (ADR 0006) from each signature's counts
// per baseline build, pooled over the signatures in text order (a floating-point sum),
// "(other)" left out; 0 unless options.overdispersion is kEstimate. Takes the counts.
double SignatureDispersion(const Snapshot& snap, const AlertOptions& options,
                           const std::vector<double>& exposures,
                           absl::flat_hash_map<Sym, std::vector<int64_t>>& counts_by_signature);

// The rules (crash_rules.cc, hang_rule.cc, burst_rule.cc) on the builds of `index`.
void CrashRules(Round& round, const BuildIndex& index);
void HangRules(Round& round, const BuildIndex& index);
void BurstRule(Round& round, const BuildIndex& index);

// Distinct installs behind a selection; nullopt when none of its documents carried an
// install id (clientId, install_time): the min_installs guard then cannot judge and is
// skipped (SPEC §5; ADR 0017).
inline std::optional<int64_t> KnownInstalls(const HyperLogLog& installs) {
  if (installs.empty()) return std::nullopt;
  return static_cast<int64_t>(std::llround(installs.Estimate()));
}

// The min_installs guard: passes when the installs are unknown.
inline bool EnoughInstalls(const std::optional<int64_t>& installs, const AlertOptions& options) {
  return !installs || *installs >= options.min_installs;
}

// Text of a symbol as a string (alert keys and numbers own their strings).
inline std::string TextOf(const Snapshot& snap, Sym id) {
  return id == kNoId ? std::string() : std::string(snap.Text(id));
}

}  // namespace seismo::alert_detail
