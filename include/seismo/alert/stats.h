// Statistics of the alert rules (SPEC §5).
//
// Two Poisson counts, X_new ~ Poisson(λ_new · e_new) and X_base ~ Poisson(λ_base · e_base),
// are compared by conditioning on their sum n = x_new + x_base: under H0 (λ_new ≤ λ_base)
// X_new | n is at most Binomial(n, p0) with p0 = e_new / (e_new + e_base), so the exact
// one-sided p-value is the binomial upper tail
//
//     p = P(X ≥ x_new | n, p0) = I_{p0}(x_new, n - x_new + 1)
//
// (regularized incomplete beta). It is computed in log space with a continued fraction
// (modified Lentz), so counts in the millions and p-values far below 1e-300 neither
// overflow nor lose their exponent.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "seismo/alert/options.h"

namespace seismo {

// log of the regularized incomplete beta function I_x(a, b), a > 0, b > 0, x in [0, 1].
double LogRegularizedBeta(double x, double a, double b);

// log P(X ≥ k) for X ~ Binomial(n, p). k ≤ 0 gives 0 (probability 1); k > n gives -inf.
double LogBinomialUpperTail(int64_t k, int64_t n, double p);

// The one-sided conditional test above. Exposures must be > 0 (else 1.0 is returned:
// nothing can be concluded). Returns the p-value (may underflow to 0 for huge effects;
// use the log form to rank such cases).
double PoissonRateTestP(int64_t count_new, double exposure_new, int64_t count_base,
                        double exposure_base);
double PoissonRateTestLogP(int64_t count_new, double exposure_new, int64_t count_base,
                           double exposure_base);

// Over-dispersed counts. Healthy builds are not alike: a signature's rate on build b is
// the common rate times a factor u_b with mean 1 and variance sigma2, so a count with mean
// μ has variance μ + sigma2·μ² rather than μ. Each side of the test is then replaced by
// its effective counts, count / φ and exposure / φ with φ = variance / mean under H0
// (one pooled rate r):
//
//     φ_new  = 1 + sigma2 · r · e_new
//     φ_base = 1 + sigma2 · r · Σ e_b² / Σ e_b      (k baseline builds average their factors)
//
// and the conditional test above is applied to them (real-valued, through I_x). With
// sigma2 = 0 it is exactly PoissonRateTestLogP. `base_exposures` are the baseline builds'
// exposures (their sum is exposure_base). `null_ratio` ρ ≥ 1 tests H0: rate ratio ≤ ρ
// instead of ≤ 1 (the new side's exposure counts ρ times).
double DispersedRateTestLogP(int64_t count_new, double exposure_new, int64_t count_base,
                             const std::vector<double>& base_exposures, double sigma2,
                             double null_ratio = 1.0);

// Method-of-moments estimate of sigma2 from k ≥ 2 builds with exposures e_b and, for each
// series s, counts[s][b] (a missing trailing entry is 0). Pooled over the series:
//
//     sigma2 = Σ_s Σ_b [(c_sb − m_sb)² − a_b·m_sb] / Σ_s Σ_b a_b·m_sb²
//
// with m_sb = w_b·Σ_b c_sb, w_b = e_b / Σ e, a_b = 1 − 2·w_b + Σ w² (the Poisson part of
// E(c − m)² is a_b·μ, the extra part sigma2·a_b·μ²). Clamped at 0; 0 when k < 2.
double EstimateRateDispersion(const std::vector<double>& exposures,
                              const std::vector<std::vector<int64_t>>& counts);

// Adjusted p-values for one family of tests (same order as the input): Bonferroni
// min(1, p·m); Benjamini–Hochberg step-up min_{j ≥ i} (m/j)·p_(j); kNone as is.
// Rejecting where adjusted < alpha keeps the family-wise error (Bonferroni) or the
// false discovery rate (BH) at alpha.
std::vector<double> AdjustPValues(const std::vector<double>& p, MultipleTesting method);

}  // namespace seismo
