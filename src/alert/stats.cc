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

std::string_view ExposureModeName(ExposureMode m) {
  return m == ExposureMode::kCrashShare ? "crash_share" : "usage_hours";
}

std::string_view MultipleTestingName(MultipleTesting m) {
  switch (m) {
    case MultipleTesting::kBonferroni: return "bonferroni";
    case MultipleTesting::kBh: return "bh";
    case MultipleTesting::kNone: return "none";
  }
  return "none";
}

}  // namespace seismo
