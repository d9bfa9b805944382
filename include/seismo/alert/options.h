// How the alert engine decides and where it reports (config section [alerts],
// SPEC §5). Every field has the default config/seismo.toml documents.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "seismo/aggregate/releases.h"

namespace seismo {

// What a build's counts are divided by.
enum class ExposureMode : uint8_t {
  kUsageHours,  // usage hours from main pings (bhr pings for bhr hangs); falls back to
                // crash share for a channel that has crash reports but no main pings
  kCrashShare,  // the build's total crash count (deployments without main pings)
};

// How the per-signature tests (crash_signature_spike, hang_spike) treat counts.
enum class Overdispersion : uint8_t {
  kEstimate,  // estimate the build-to-build variation of signature rates from the baseline
              // builds and test on the effective counts it leaves (ADR 0006)
  kNone,      // plain Poisson counts: the conditional binomial test as SPEC §5 writes it
};

// The multiple-testing guard across the tests of one evaluation round.
enum class MultipleTesting : uint8_t {
  kBonferroni,  // family-wise error: p × m < alpha
  kBh,          // Benjamini–Hochberg false discovery rate at alpha
  kNone,        // each test at alpha on its own
};

struct AlertOptions {
  std::chrono::milliseconds interval{60'000};  // between evaluations (daemon)
  int new_build_days = 7;                      // a build is new this long after its first ping
  int baseline_builds = 3;                     // earlier builds compared against
  int min_baseline_builds = 2;                 // fewer qualifying earlier builds: no build rule
  double min_baseline_usage_hours = 100;       // a baseline build must have reached this
  bool per_os = false;                         // baselines and alerts per OS
  ExposureMode exposure = ExposureMode::kUsageHours;
  bool age_matched = true;                     // compare with the same age of each baseline
  int64_t min_count = 10;                      // new-build count needed by the tested rules
  double min_ratio = 2.0;                      // rate ratio new / baseline needed
  double alpha = 0.001;                        // significance after the multiple-testing guard
  int64_t min_new_count = 20;                  // new_crash_signature count needed
  int64_t min_installs = 5;                    // distinct installs needed by every rule (hang_spike:
                                               // when its pings carry a client id)
  int for_evaluations = 2;                     // `for`: true this many rounds -> firing
  int resolve_after = 2;                       // false this many rounds -> resolved
  std::chrono::milliseconds burst_window{3'600'000};     // burst: the recent window ...
  std::chrono::milliseconds burst_baseline{86'400'000};  // ... against this trailing window
  MultipleTesting multiple_testing = MultipleTesting::kBonferroni;
  Overdispersion overdispersion = Overdispersion::kEstimate;

  // Sinks ("" = off).
  std::string log_file;                            // JSON lines, one per transition
  std::string webhook_url;                         // HTTP POST of each transition
  std::chrono::milliseconds webhook_timeout{5'000};  // per attempt
  int webhook_retries = 3;                         // attempts after the first
  std::string kafka_topic;                         // one message per transition
};

std::string_view ExposureModeName(ExposureMode m);

// The keys that choose a build's baselines, for the rules and for the API's comparisons
// (aggregate/releases.h).
BaselinePolicy BaselinePolicyOf(const AlertOptions& options);

}  // namespace seismo
