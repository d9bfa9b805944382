// The alert statistics against p-values computed independently: exact rational
// arithmetic (Python fractions, the sum of binomial terms, outside this code base)
// for the table below, and summation of the binomial terms in long double here.
#include "seismo/alert/stats.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seismo/sim/synth.h"

namespace seismo {
namespace {

struct TailCase {
  int64_t k, n;
  double p;
  double log_tail;  // log P(X >= k), exact
};

// Computed with Python's fractions.Fraction: sum(comb(n, i) p^i q^(n-i), i >= k) exactly,
// then log(numerator) - log(denominator).
constexpr TailCase kExact[] = {
    {8, 10, 1.0 / 2.0, -2.9061201148643034},        // 56/1024 by hand as well
    {30, 60, 1.0 / 4.0, -10.531061540887137},
    {15, 65, 1.0 / 11.0, -7.407736400402769},
    {5200, 10000, 1.0 / 2.0, -10.319985964502848},
    {300, 1000, 1.0 / 10.0, -156.9580209937385},
    {3000, 10000, 1.0 / 10.0, -1541.0797544672714},  // p = 1e-669: only the log survives
    {5, 100, 1.0 / 10.0, -0.0239967145136859},       // upper half: the symmetric branch
    {1, 1, 1.0 / 3.0, -1.0986122886681098},
    {12, 20, 3.0 / 10.0, -5.271059941489035},
};

TEST(AlertStats, BinomialTailMatchesExactRationalArithmetic) {
  for (const TailCase& c : kExact) {
    SCOPED_TRACE(testing::Message() << c.k << " of " << c.n << " at " << c.p);
    const double got = LogBinomialUpperTail(c.k, c.n, c.p);
    EXPECT_NEAR(got, c.log_tail, 1e-9 * std::max(1.0, std::fabs(c.log_tail)));
  }
}

TEST(AlertStats, HandDerivedSmallCases) {
  // P(X >= n) = p^n; P(X >= 1) = 1 - q^n; P(X >= 0) = 1; P(X > n) = 0.
  EXPECT_NEAR(std::exp(LogBinomialUpperTail(3, 3, 0.2)), 0.008, 1e-15);
  EXPECT_NEAR(std::exp(LogBinomialUpperTail(1, 2, 0.5)), 0.75, 1e-15);
  EXPECT_NEAR(std::exp(LogBinomialUpperTail(10, 10, 0.5)), 1.0 / 1024, 1e-17);
  EXPECT_EQ(LogBinomialUpperTail(0, 5, 0.3), 0.0);
  EXPECT_EQ(LogBinomialUpperTail(6, 5, 0.3), -INFINITY);
  // Two new crashes, one in the baseline, equal exposure: P(X >= 2 | n=3, 1/2) = 4/8.
  EXPECT_NEAR(PoissonRateTestP(2, 50.0, 1, 50.0), 0.5, 1e-15);
  // The baseline's exposure is three times the new build's: p0 = 1/4; 3 of 3 -> 1/64.
  EXPECT_NEAR(PoissonRateTestP(3, 10.0, 0, 30.0), 1.0 / 64, 1e-16);
  // Nothing to conclude without exposure on either side.
  EXPECT_EQ(PoissonRateTestP(50, 0.0, 1, 10.0), 1.0);
  EXPECT_EQ(PoissonRateTestP(50, 10.0, 1, 0.0), 1.0);
}

// Independent method: the sum of the binomial terms in long double, each term from
// lgammal (no continued fraction, no symmetry).
long double SummedTail(int64_t k, int64_t n, long double p) {
  long double sum = 0;
  for (int64_t i = k; i <= n; ++i) {
    long double log_term = lgammal(n + 1.0L) - lgammal(i + 1.0L) - lgammal(n - i + 1.0L) +
                           i * logl(p) + (n - i) * log1pl(-p);
    sum += expl(log_term);
  }
  return sum;
}

TEST(AlertStats, BinomialTailMatchesLongDoubleSummationOverRandomCases) {
  Rng r(20261118);
  for (int t = 0; t < 400; ++t) {
    const int64_t n = r.Between(1, t < 300 ? 300 : 20000);
    const int64_t k = r.Between(0, n);
    const double p = 0.001 + 0.998 * r.Uniform();
    const long double expected = SummedTail(k, n, p);
    if (expected < 1e-4000L) continue;  // below long double's range
    SCOPED_TRACE(testing::Message() << k << " of " << n << " at " << p);
    const double got = LogBinomialUpperTail(k, n, p);
    EXPECT_NEAR(got, static_cast<double>(logl(expected)), 1e-8 * std::max(1.0, std::fabs(got)));
  }
}

TEST(AlertStats, LargeCountsStayFiniteAndOrdered) {
  // A million crashes: the test must neither overflow nor round to 0 or 1 in log space.
  const double equal = PoissonRateTestLogP(1'000'000, 1e6, 1'000'000, 1e6);
  EXPECT_GT(equal, std::log(0.4));
  EXPECT_LT(equal, 0.0);
  const double higher = PoissonRateTestLogP(1'010'000, 1e6, 1'000'000, 1e6);
  EXPECT_TRUE(std::isfinite(higher));
  EXPECT_LT(higher, std::log(1e-6));
  const double much_higher = PoissonRateTestLogP(2'000'000, 1e6, 1'000'000, 1e6);
  EXPECT_TRUE(std::isfinite(much_higher));
  EXPECT_LT(much_higher, higher);
}

TEST(AlertStats, PValuesAreUniformishUnderTheNull) {
  // Under H0 the test is exact-conservative: P(p <= a) <= a for every a.
  Rng r(7);
  int below_1pct = 0, below_10pct = 0;
  constexpr int kTrials = 4000;
  for (int t = 0; t < kTrials; ++t) {
    // Poisson(20) and Poisson(60) by inversion; exposures 1 : 3.
    auto poisson = [&](double mean) {
      double l = std::exp(-mean), pr = 1;
      int64_t k = 0;
      do {
        ++k;
        pr *= r.Uniform();
      } while (pr > l);
      return k - 1;
    };
    double p = PoissonRateTestP(poisson(20), 1.0, poisson(60), 3.0);
    below_1pct += p <= 0.01;
    below_10pct += p <= 0.10;
  }
  EXPECT_LE(below_1pct, kTrials * 0.01 + 3 * std::sqrt(kTrials * 0.01));
  EXPECT_LE(below_10pct, kTrials * 0.10 + 3 * std::sqrt(kTrials * 0.1 * 0.9));
  EXPECT_GE(below_10pct, kTrials * 0.05);  // not absurdly conservative either
}

// log I_x(a, b) at real (non-integer) arguments, which the over-dispersed test uses:
// mpmath.betainc(a, b, 0, x, regularized=True) at 40 digits, outside this code base.
TEST(AlertStats, IncompleteBetaAtRealArgumentsMatchesMpmath) {
  struct Case {
    double x, a, b, log_i;
  };
  constexpr Case kCases[] = {
      {0.25, 38.1, 46.7, -10.186278061517903},   {0.1, 5.5, 60.25, -0.33251557151278484},
      {0.5, 200.3, 180.9, -1.8333059771816237},  {0.3, 0.7, 2.4, -0.35808807472068046},
      {0.05, 60.5, 300.25, -36.219071889681825},
  };
  for (const Case& c : kCases) {
    EXPECT_NEAR(LogRegularizedBeta(c.x, c.a, c.b), c.log_i, 1e-9 * std::max(1.0, std::fabs(c.log_i)))
        << c.x << " " << c.a << " " << c.b;
  }
}

// Counts with build-to-build variation: each build's rate is the common rate times a
// log-normal factor of sigma 0.2, Poisson on top.
struct Dispersed {
  explicit Dispersed(uint64_t seed) : r(seed) {}
  double Factor(double sigma) {
    const double z =
        std::sqrt(-2 * std::log(std::max(r.Uniform(), 1e-300))) * std::cos(2 * M_PI * r.Uniform());
    return std::exp(sigma * z - sigma * sigma / 2);  // mean 1
  }
  int64_t Poisson(double mean) {
    int64_t k = 0;
    while (mean > 30) {
      k += Poisson(30);
      mean -= 30;
    }
    const double l = std::exp(-mean);
    double pr = r.Uniform();
    while (pr > l) {
      ++k;
      pr *= r.Uniform();
    }
    return k;
  }
  Rng r;
};

TEST(AlertStats, DispersedTestWithoutDispersionIsThePoissonTest) {
  for (auto [x, y] : {std::pair<int64_t, int64_t>{12, 20}, {300, 400}, {5, 90}, {0, 3}}) {
    EXPECT_DOUBLE_EQ(DispersedRateTestLogP(x, 1.0, y, {1.0, 2.0}, 0.0), PoissonRateTestLogP(x, 1.0, y, 3.0));
  }
  // A null ratio ρ is the Poisson test with the new side's exposure times ρ.
  EXPECT_DOUBLE_EQ(DispersedRateTestLogP(300, 1.0, 400, {1.0, 2.0}, 0.0, 2.5),
                   PoissonRateTestLogP(300, 2.5, 400, 3.0));
  // More dispersion, less evidence.
  double previous = DispersedRateTestLogP(300, 1.0, 400, {1.0, 1.0, 1.0}, 0.0);
  for (double sigma2 : {0.001, 0.01, 0.05}) {
    const double lp = DispersedRateTestLogP(300, 1.0, 400, {1.0, 1.0, 1.0}, sigma2);
    EXPECT_GT(lp, previous) << sigma2;
    previous = lp;
  }
}

TEST(AlertStats, DispersedTestKeepsItsLevelWhereThePoissonTestDoesNot) {
  // A healthy new build and three baseline builds, each with its own rate factor; means
  // around 500 counts per build, where a factor of sigma 0.2 dwarfs Poisson noise.
  Dispersed d(11);
  constexpr int kTrials = 3000;
  constexpr double kSigma = 0.2;
  int poisson_below = 0, dispersed_below = 0;
  for (int t = 0; t < kTrials; ++t) {
    const int64_t x = d.Poisson(500 * d.Factor(kSigma));
    int64_t y = 0;
    for (int b = 0; b < 3; ++b) y += d.Poisson(500 * d.Factor(kSigma));
    poisson_below += PoissonRateTestP(x, 1.0, y, 3.0) <= 0.01;
    dispersed_below += std::exp(DispersedRateTestLogP(x, 1.0, y, {1.0, 1.0, 1.0}, kSigma * kSigma)) <= 0.01;
  }
  EXPECT_GT(poisson_below, kTrials / 10);  // the Poisson test calls a quarter of healthy builds bad
  EXPECT_LE(dispersed_below, kTrials * 0.01 + 3 * std::sqrt(kTrials * 0.01));
  EXPECT_GE(dispersed_below, kTrials * 0.002);  // and is not absurdly conservative
}

TEST(AlertStats, DispersionEstimateRecoversTheBuildToBuildVariation) {
  for (double sigma : {0.0, 0.1, 0.2}) {
    Dispersed d(static_cast<uint64_t>(sigma * 100) + 3);
    const std::vector<double> exposures = {1.0, 1.5, 0.8};
    std::vector<std::vector<int64_t>> counts;
    for (int s = 0; s < 60; ++s) {
      const double mean = 2000.0 / (s + 1);  // Zipf-like: a few large series, many small
      std::vector<int64_t> per_build;
      for (double e : exposures) per_build.push_back(d.Poisson(mean * e * d.Factor(sigma)));
      counts.push_back(per_build);
    }
    const double estimate = EstimateRateDispersion(exposures, counts);
    EXPECT_NEAR(std::sqrt(estimate), sigma, 0.05) << sigma;
  }
  EXPECT_EQ(EstimateRateDispersion({1.0}, {{100}, {200}}), 0.0);  // one build: nothing to compare
  EXPECT_EQ(EstimateRateDispersion({1.0, 1.0}, {}), 0.0);
  // Series missing a trailing build count it as 0.
  EXPECT_GT(EstimateRateDispersion({1.0, 1.0}, {{400}, {300, 300}}), 0.5);
}

TEST(AlertStats, BonferroniAndBenjaminiHochbergByHand) {
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  EXPECT_EQ(AdjustPValues(p, MultipleTesting::kNone), p);
  std::vector<double> bonf = AdjustPValues(p, MultipleTesting::kBonferroni);
  EXPECT_DOUBLE_EQ(bonf[0], 0.04);
  EXPECT_DOUBLE_EQ(bonf[1], 0.16);
  EXPECT_DOUBLE_EQ(bonf[2], 0.12);
  EXPECT_DOUBLE_EQ(bonf[3], 0.02);
  EXPECT_DOUBLE_EQ(AdjustPValues({0.5, 0.9}, MultipleTesting::kBonferroni)[1], 1.0);
  // BH: sorted 0.005, 0.01, 0.03, 0.04 -> 4/1*.005=.02, 4/2*.01=.02, 4/3*.03=.04, 4/4*.04=.04,
  // then the running minimum from the top.
  std::vector<double> bh = AdjustPValues(p, MultipleTesting::kBh);
  EXPECT_DOUBLE_EQ(bh[3], 0.02);
  EXPECT_DOUBLE_EQ(bh[0], 0.02);
  EXPECT_DOUBLE_EQ(bh[2], 0.04);
  EXPECT_DOUBLE_EQ(bh[1], 0.04);
  // Step-up: a larger p can pull a smaller one's adjusted value down.
  std::vector<double> step = AdjustPValues({0.02, 0.021}, MultipleTesting::kBh);
  EXPECT_DOUBLE_EQ(step[0], 0.021);
  EXPECT_DOUBLE_EQ(step[1], 0.021);
}

}  // namespace
}  // namespace seismo
