// Scenario: a release timeline with known truth, for alert tests, `seismo generate
// --kind scenario` and the demo.
//
//   hour:  0 ........ 48 ........ 96 ....... 144 ....... 192 ........ end
//          B1 ─────────────────────────────────────────────────────────>
//                     B2 ──────────────────────────────────────────────>
//                                 B3 ──────────────────────────────────>
//                                             B4 ──────────────────────>
//                                                         N (new) ─────>  age new_build_age_hours
//
// Every build has the same users (usage hours per hour, split over Windows_NT / Darwin /
// Linux, sent as main and bhr pings of up to 20 usage hours each, at random minutes, from
// a population of installs), the same crash signatures (Zipf rates, a fixed class each) and
// the same bhr hang signatures. Builds are not alike: each (build, signature) rate carries
// a log-normal factor of sigma `build_noise` (0.10 by default: a healthy build's signature
// rate differs from the builds before it by up to about ±20 %, two standard deviations),
// counts are Poisson on top, and rates are higher during each build's first hours (early
// adopters). Plants (bit flags) then make N bad in a known way, so tests can check that
// exactly the planted alerts fire.
//
// Records are produced as ParsedDocuments (what the parser would have made), one per
// document, and can be turned into deltas (fast; for many seeds) or rendered as NDJSON
// documents (main pings, bhr pings, Socorro processed crashes) that the real parser and
// signature generator turn back into the same series.
//
// Threading: immutable after construction; deterministic for a seed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/options.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/parse/document.h"

namespace seismo {

// "Rate of N" below is relative to the mean rate of the (up to) three builds before N, the
// builds the rules compare N with at their defaults; N's own noise factor is replaced.
enum ScenarioPlant : uint32_t {
  kPlantSignatureSpike = 1 << 0,   // one crash signature's rate × spike_factor on N
  kPlantNewSignature = 1 << 1,     // a crash signature no earlier build has, on N
  kPlantBuildRegression = 1 << 2,  // every crash rate (and main pings' gpu counts) × regression_factor on N
  kPlantHangSpike = 1 << 3,        // one bhr hang signature's rate × hang_factor on N
  kPlantOsBurst = 1 << 4,          // one signature × burst_factor on Linux, last hour, all builds
  kPlantInstallStorm = 1 << 5,     // a new crash signature on N, hundreds of crashes from one install
  kPlantEarlyBuild = 1 << 6,       // a build one hour old with two crashes of a new signature
  kPlantHangStorm = 1 << 7,        // a new hang stack on N, hundreds of hangs from one install's pings
  kPlantGpuRegression = 1 << 8,    // main pings' SUBPROCESS_CRASHES_WITH_DUMP gpu × regression_factor on N
};

// Plant names as `seismo generate --plant` takes them, in flag order.
struct ScenarioPlantName {
  std::string_view name;
  ScenarioPlant plant;
  std::string_view what;
};
const std::vector<ScenarioPlantName>& ScenarioPlantNames();
std::optional<ScenarioPlant> ScenarioPlantByName(std::string_view name);

struct ScenarioOptions {
  uint64_t seed = 1;
  int64_t start_ms = 1'790'812'800'000;  // 2026-10-01T00:00:00Z (whole hour; in the past, so
                                         // Kafka input does not find it ahead of the clock)
  std::string channel = "release";
  int baseline_builds = 4;             // builds before N
  int64_t build_spacing_hours = 48;
  int64_t new_build_age_hours = 30;    // N's age at the end
  double usage_per_hour = 800;         // usage hours per build per hour (main and bhr each)
  double crashes_per_usage_hour = 0.05;
  int crash_signatures = 40;
  double hangs_per_usage_hour = 0.3;
  int hang_signatures = 20;
  double early_adopter_factor = 1.5;   // crash and hang rates during a build's first hours
  int64_t early_hours = 24;
  double build_noise = 0.10;                 // sigma of the log-normal per-build, per-signature factor
  int64_t installs = 20'000;                 // clientIds pings are sent from
  bool bhr_client_ids = true;                // Mozilla's bhr pings carry none; false renders them so
  bool crash_install_ids = true;             // false: processed crashes without install_time
  double subprocess_gpu_per_usage_hour = 0.01;  // main pings' SUBPROCESS_CRASHES_WITH_DUMP gpu
  uint32_t plants = 0;
  double spike_factor = 3.0;
  double regression_factor = 3.0;
  double hang_factor = 2.25;  // "doubles": clears min_ratio = 2 by 3.5 standard errors
  double burst_factor = 15.0;
  int storm_crashes = 200;  // kPlantInstallStorm and kPlantHangStorm (hangs)
};

// An alert the plants should fire at the default [alerts] settings (os "all": per_os off).
struct ScenarioExpectedAlert {
  std::string rule, build, signature, os, scope;  // as AlertKey and the alert JSON name them
  auto operator<=>(const ScenarioExpectedAlert&) const = default;
};

// What was planted, for assertions.
struct ScenarioTruth {
  std::string channel;
  std::string new_build_id, new_build_date, new_version;
  std::string spike_signature;  // crash signature × spike_factor on N
  std::string new_signature;    // brand-new crash signature on N
  std::string hang_signature;   // bhr hang signature × hang_factor on N
  std::string burst_signature, burst_os;
  std::string storm_signature;       // crash signature of the one-install storm
  std::string hang_storm_signature;  // hang signature of the one-install storm
  std::string early_build_id, early_signature;
  std::vector<std::string> baseline_build_ids;  // B1..B4, oldest first
  // Each plant's alerts, sorted; the guard plants (install_storm, hang_storm, early_build)
  // expect none. Plants combined can interact (a whole-build regression explains spikes).
  std::vector<ScenarioExpectedAlert> expected_alerts;
};

// The truth as one JSON object (`seismo generate --truth`).
std::string ScenarioTruthJson(const ScenarioOptions& options, const ScenarioTruth& truth);

// One document.
struct ScenarioRecord {
  EventTime time;
  ParsedDocument doc;
  std::vector<int64_t> hang_durations_us;  // bhr pings: one per hang, in doc.hangs order
};

class Scenario {
 public:
  explicit Scenario(ScenarioOptions options);

  const ScenarioOptions& options() const { return options_; }
  const ScenarioTruth& truth() const { return truth_; }
  int64_t end_ms() const { return end_ms_; }
  const std::vector<ScenarioRecord>& records() const { return records_; }  // time order

  // Crash signature `i` as the signature generator names it.
  static std::string CrashSignature(int i);
  static std::string HangSignature(int i);

  void ForEachDelta(Symbols& symbols, const std::function<void(Delta&&)>& emit) const;
  // NDJSON documents (no newline), in time order: main pings, bhr pings, processed crashes.
  void ForEachDocument(const std::function<void(std::string&&)>& emit) const;

  // The records aggregated by one ShardState into a merged Snapshot at end_ms().
  std::shared_ptr<const Snapshot> MakeSnapshot(const AggregateOptions& options = {}) const;

 private:
  void Generate();

  ScenarioOptions options_;
  ScenarioTruth truth_;
  int64_t end_ms_ = 0;
  std::vector<ScenarioRecord> records_;
};

}  // namespace seismo
