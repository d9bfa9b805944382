// Synthetic telemetry: realistic main, bhr and crash documents for tests,
// benchmarks and the demo. Deterministic for a given seed (own PRNG and
// distributions, so output does not depend on the standard library).
//
// Threading: a Synth is used by one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seismo/core/time.h"

namespace seismo {

// SplitMix64-seeded xoshiro256** generator.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t Next();
  double Uniform();                          // [0, 1)
  uint64_t Below(uint64_t n);                // [0, n)
  int64_t Between(int64_t lo, int64_t hi);   // [lo, hi]
  bool Chance(double p) { return Uniform() < p; }
  size_t Zipf(size_t n, double s = 1.1);     // rank in [0, n), rank 0 most likely
  double LogNormal(double mu, double sigma);
  std::string Uuid();

 private:
  uint64_t s_[4];
};

// One simulated build of the population.
struct SynthBuild {
  std::string channel;
  std::string version;
  std::string build_id;  // YYYYMMDDhhmmss
  double weight = 1.0;   // share of the population
};

// The shape of the documents.
//   kDefault: a few hundred distinct hang stacks and ~150 crash signatures (tests, demo).
//   kDense:   ordinary-sized documents with a long tail of distinct stacks, as in
//             production (issue 15's bench corpus): main pings of ~3 KB whose hang stacks
//             are new in about a third of the hangs (≥ 50 000 distinct stacks per 100 000
//             pings), bhr pings of a few KB with native frames at fresh offsets, crashes
//             over a few thousand signatures.
enum class SynthProfile { kDefault, kDense };

struct SynthOptions {
  uint64_t seed = 1;
  SynthProfile profile = SynthProfile::kDefault;
  EventTime start{1'795'000'000'000};  // 2026-11-18T…Z
  int64_t spacing_ms = 1000;           // event-time step between documents
  size_t pad_bytes = 0;                // extra realistic histograms per main ping
  std::vector<SynthBuild> builds;      // empty = a default population
};

class Synth {
 public:
  explicit Synth(SynthOptions options);

  // Document number i of each kind, one JSON object without newline.
  std::string Main(uint64_t i);
  std::string Bhr(uint64_t i);
  std::string ProcessedCrash(uint64_t i);
  std::string CrashPing(uint64_t i);

  const std::vector<SynthBuild>& builds() const { return options_.builds; }
  Rng& rng() { return rng_; }

 private:
  bool dense() const { return options_.profile == SynthProfile::kDense; }
  const SynthBuild& PickBuild();
  std::string PickOs();
  EventTime TimeOf(uint64_t i) const;

  SynthOptions options_;
  Rng rng_;
};

}  // namespace seismo
