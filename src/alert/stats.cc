#include "seismo/alert/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace seismo {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// lgamma without touching the global `signgam` (lgamma is not thread-safe in glibc).
double LogGamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}

// The continued fraction of I_x(a, b) (without its prefactor), by the modified Lentz
// method:  1 / (1 + d1 / (1 + d2 / (1 + ...))) with
//   d(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)),   d(2m) = m(b-m) x / ((a+2m-1)(a+2m)).
// Converges fast for x < (a+1)/(a+b+2); the caller uses the symmetry otherwise.
double BetaContinuedFraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  constexpr int kMaxIterations = 1'000'000;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double f = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double mm = m;
    // Even step.
    double num = mm * (b - mm) * x / ((a + 2 * mm - 1) * (a + 2 * mm));
    d = 1.0 + num * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    f *= d * c;
    // Odd step.
    num = -(a + mm) * (a + b + mm) * x / ((a + 2 * mm) * (a + 2 * mm + 1));
    d = 1.0 + num * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + num / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    f *= delta;
    if (std::fabs(delta - 1.0) < kEps) break;
  }
  return f;
}

// log I_x(a, b) by the continued fraction, valid where it converges fast.
double LogBetaDirect(double x, double a, double b) {
  const double log_front = a * std::log(x) + b * std::log1p(-x) - std::log(a) -
                           (LogGamma(a) + LogGamma(b) - LogGamma(a + b));
  return log_front + std::log(BetaContinuedFraction(x, a, b));
}

}  // namespace

double LogRegularizedBeta(double x, double a, double b) {
  if (!(x > 0)) return kNegInf;
  if (!(x < 1)) return 0.0;
  if (x < (a + 1) / (a + b + 2)) return LogBetaDirect(x, a, b);
  // I_x(a, b) = 1 - I_{1-x}(b, a); here the result is at least about one half, so
  // log1p(-tail) keeps full precision.
  const double tail = std::exp(LogBetaDirect(1 - x, b, a));
  return std::log1p(-std::min(tail, 1.0));
}

double LogBinomialUpperTail(int64_t k, int64_t n, double p) {
  if (k <= 0) return 0.0;
  if (k > n) return kNegInf;
  if (!(p > 0)) return kNegInf;
  if (!(p < 1)) return 0.0;
  return LogRegularizedBeta(p, static_cast<double>(k), static_cast<double>(n - k + 1));
}

double PoissonRateTestLogP(int64_t count_new, double exposure_new, int64_t count_base,
                           double exposure_base) {
  if (!(exposure_new > 0) || !(exposure_base > 0) || count_new <= 0) return 0.0;
  const double p0 = exposure_new / (exposure_new + exposure_base);
  return LogBinomialUpperTail(count_new, count_new + std::max<int64_t>(count_base, 0), p0);
}

double PoissonRateTestP(int64_t count_new, double exposure_new, int64_t count_base,
                        double exposure_base) {
  return std::exp(PoissonRateTestLogP(count_new, exposure_new, count_base, exposure_base));
}

double DispersedRateTestLogP(int64_t count_new, double exposure_new, int64_t count_base,
                             const std::vector<double>& base_exposures, double sigma2, double null_ratio) {
  exposure_new *= std::max(1.0, null_ratio);
  double exposure_base = 0, squares = 0;
  for (double e : base_exposures) {
    exposure_base += e;
    squares += e * e;
  }
  if (!(sigma2 > 0)) return PoissonRateTestLogP(count_new, exposure_new, count_base, exposure_base);
  if (!(exposure_new > 0) || !(exposure_base > 0) || count_new <= 0) return 0.0;
  const auto x_new = static_cast<double>(count_new);
  const auto x_base = static_cast<double>(std::max<int64_t>(count_base, 0));
  const double rate = (x_new + x_base) / (exposure_new + exposure_base);
  const double phi_new = 1 + sigma2 * rate * exposure_new;
  const double phi_base = 1 + sigma2 * rate * squares / exposure_base;
  const double e_new = exposure_new / phi_new, e_base = exposure_base / phi_base;
  const double p0 = e_new / (e_new + e_base);
  // P(X ≥ x | n, p0) = I_p0(x, n − x + 1) with x = x_new / φ_new, n − x = x_base / φ_base.
  return LogRegularizedBeta(p0, x_new / phi_new, x_base / phi_base + 1);
}

double EstimateRateDispersion(const std::vector<double>& exposures,
                              const std::vector<std::vector<int64_t>>& counts) {
  const size_t k = exposures.size();
  if (k < 2) return 0.0;
  double total = 0;
  for (double e : exposures) total += e;
  if (!(total > 0)) return 0.0;
  std::vector<double> w(k), a(k);
  double w2 = 0;
  for (size_t b = 0; b < k; ++b) {
    w[b] = exposures[b] / total;
    w2 += w[b] * w[b];
  }
  for (size_t b = 0; b < k; ++b) a[b] = 1 - 2 * w[b] + w2;
  // Per series: numerator, denominator and mean count per build.
  struct Term {
    double num = 0, den = 0, mean = 0;
  };
  std::vector<Term> terms;
  double num = 0, den = 0;
  for (const std::vector<int64_t>& c : counts) {
    double sum = 0;
    for (size_t b = 0; b < k && b < c.size(); ++b) sum += static_cast<double>(c[b]);
    if (!(sum > 0)) continue;
    Term t;
    t.mean = sum / static_cast<double>(k);
    for (size_t b = 0; b < k; ++b) {
      const double m = w[b] * sum;
      const double d = (b < c.size() ? static_cast<double>(c[b]) : 0.0) - m;
      t.num += d * d - a[b] * m;
      t.den += a[b] * m * m;
    }
    num += t.num;
    den += t.den;
    terms.push_back(t);
  }
  if (!(den > 0)) return 0.0;
  // The pooled ratio weighs series by their squared means, so the two or three largest
  // decide it alone. Re-weigh each series' own estimate num/den by its inverse variance,
  // about 1 / (sigma2 + 1/mean)² (every large series counts alike, small ones by their
  // Poisson noise), starting from the pooled value; two rounds settle it.
  double sigma2 = std::clamp(num / den, 1e-3, 1.0);
  for (int round = 0; round < 2; ++round) {
    double weighted = 0, weights = 0;
    for (const Term& t : terms) {
      if (!(t.den > 0)) continue;
      const double spread = sigma2 + 1 / t.mean;
      const double weight = 1 / (spread * spread);
      weighted += weight * t.num / t.den;
      weights += weight;
    }
    sigma2 = std::clamp(weighted / weights, 1e-3, 1.0);
  }
  // Clamped only while weighing: the estimate itself may be 0.
  double weighted = 0, weights = 0;
  for (const Term& t : terms) {
    if (!(t.den > 0)) continue;
    const double spread = sigma2 + 1 / t.mean;
    weighted += t.num / t.den / (spread * spread);
    weights += 1 / (spread * spread);
  }
  return std::max(0.0, weighted / weights);
}

std::vector<double> AdjustPValues(const std::vector<double>& p, MultipleTesting method) {
  const size_t m = p.size();
  std::vector<double> out(p);
  if (m == 0 || method == MultipleTesting::kNone) return out;
  if (method == MultipleTesting::kBonferroni) {
    for (double& v : out) v = std::min(1.0, v * static_cast<double>(m));
    return out;
  }
  // Benjamini–Hochberg step-up: walk from the largest p down, keeping the running minimum.
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  double running = 1.0;
  for (size_t r = m; r-- > 0;) {
    const size_t i = order[r];
    running = std::min(running, p[i] * static_cast<double>(m) / static_cast<double>(r + 1));
    out[i] = std::min(1.0, running);
  }
  return out;
}

}  // namespace seismo
