#include "round.h"

#include <algorithm>
#include <cmath>

#include "seismo/alert/stats.h"

namespace seismo::alert_detail {

void Round::Add(AlertKey key, AlertNumbers numbers) {
  candidates_.push_back({std::move(key), std::move(numbers), true});
}

void Round::AddTested(AlertKey key, AlertNumbers numbers, double log_p, double min_ratio) {
  tests_.push_back({candidates_.size(), log_p, min_ratio});
  candidates_.push_back({std::move(key), std::move(numbers), false});
}

std::vector<AlertCandidate> Round::Finish() && {
  // One family per round: every tested candidate.
  std::vector<double> p_values(tests_.size());
  for (size_t test = 0; test < tests_.size(); ++test) p_values[test] = std::exp(tests_[test].log_p);
  const std::vector<double> adjusted = AdjustPValues(p_values, options_.multiple_testing);
  const double family = static_cast<double>(tests_.size());
  for (size_t test = 0; test < tests_.size(); ++test) {
    AlertCandidate& candidate = candidates_[tests_[test].candidate];
    candidate.numbers.p_value = p_values[test];
    candidate.numbers.p_adjusted = adjusted[test];
    // Bonferroni in log space too, so p-values that underflow to 0 still compare.
    bool significant = adjusted[test] < options_.alpha;
    if (options_.multiple_testing == MultipleTesting::kBonferroni) {
      significant = tests_[test].log_p + std::log(family) < std::log(options_.alpha);
    } else if (options_.multiple_testing == MultipleTesting::kNone) {
      significant = tests_[test].log_p < std::log(options_.alpha);
    }
    const bool ratio_ok = !candidate.numbers.ratio || *candidate.numbers.ratio >= tests_[test].min_ratio;
    candidate.holds = significant && ratio_ok;
  }
  std::sort(candidates_.begin(), candidates_.end(),
            [](const AlertCandidate& lhs, const AlertCandidate& rhs) { return lhs.key < rhs.key; });
  return std::move(candidates_);
}

std::optional<double> RateRatio(double count_new, double exposure_new, double count_base,
                                double exposure_base) {
  if (count_base <= 0 || exposure_new <= 0 || exposure_base <= 0) return std::nullopt;
  return (count_new / exposure_new) / (count_base / exposure_base);
}

double SignatureDispersion(const Snapshot& snap, const AlertOptions& options,
                           const std::vector<double>& exposures,
                           absl::flat_hash_map<Sym, std::vector<int64_t>>& counts_by_signature) {
  if (options.overdispersion != Overdispersion::kEstimate) return 0;
  std::vector<std::pair<std::string_view, std::vector<int64_t>*>> ordered;
  for (auto& [signature, counts] : counts_by_signature) {
    if (signature != snap.symbols->other()) ordered.emplace_back(snap.Text(signature), &counts);
  }
  std::sort(ordered.begin(), ordered.end());
  std::vector<std::vector<int64_t>> counts;
  counts.reserve(ordered.size());
  for (auto& [text, per_base] : ordered) counts.push_back(std::move(*per_base));
  return EstimateRateDispersion(exposures, counts);
}

}  // namespace seismo::alert_detail
