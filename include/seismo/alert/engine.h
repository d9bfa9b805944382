// AlertEngine: SPEC §5 evaluated on published snapshots.
//
//   Snapshot ──EvaluateRules──> candidates (key, numbers, condition holds?)
//                                   │  one round: p-values adjusted together
//                                   v  (Bonferroni / BH / none)
//   life cycle per AlertKey:   (none) ─true─> pending ─true × `for`─> firing
//                                 ^            │ false                 │ false × resolve_after
//                                 └─inactive───┘                       v
//                              pending <───────────true─────────── resolved
//
// Every transition is returned once by Evaluate() (and only then), for the sinks.
//
// Rules (see docs/adr/0006-alerts.md for the choices behind them):
//   crash_signature_spike  new build vs its baseline builds, per signature, beyond the rise
//                          of the rest of its class; build-to-build variation allowed for
//   new_crash_signature    a signature absent from every baseline build
//   crash_rate_regression  per class: parent, content, content_shutdown, gpu (with main pings'
//                          sub-process counts), startup
//   hang_spike             per hang signature and source (bhr / main), builds = build dates;
//                          installs guard when the pings carried client ids
//   burst                  per (channel, OS, signature) over all builds: burst_window against
//                          the burst_baseline before it
// Builds with fewer than min_baseline_builds baseline builds are not evaluated.
//
// Where it lives (src/alert/, docs/adr/0022-alert-engine-layout.md):
//   build_index   the snapshot's series by build (no series copied); baseline builds
//   crash_rules   crash_signature_spike, new_crash_signature, crash_rate_regression
//   hang_rule     hang_spike            burst_rule   burst
//   round         one round's candidates and its multiple-testing guard; rules.cc runs them
//   alert_json    names, AlertJson, DashboardPath
//   alert_state   Serialize/Restore bytes (core/bytes.h; format 4 with the outbox, 2 and 3 still read)
//   engine        the life cycle
//
// Ownership: owns its alert state. Threading: Evaluate() and Delivered() from the alert
// thread; Restore() while no round runs (before Start(), or while a cluster's rounds are
// off); Serialize(), Outbox(), Alerts()/AlertsJson()/stats() from any thread (a mutex
// guards the state; evaluation of the rules runs outside it).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/aggregate/snapshot.h"
#include "seismo/alert/options.h"
#include "seismo/core/mutex.h"
#include "seismo/core/status.h"

namespace seismo {

enum class AlertRule : uint8_t {
  kCrashSignatureSpike,
  kNewCrashSignature,
  kCrashRateRegression,
  kHangSpike,
  kBurst,
};
inline constexpr size_t kAlertRuleCount = 5;
std::string_view AlertRuleName(AlertRule r);

enum class AlertState : uint8_t {
  kPending,   // condition true, not yet for `for` rounds
  kFiring,    // condition held for `for` rounds
  kResolved,  // was firing, then false for `resolve_after` rounds
  kInactive,  // was pending, condition went false: forgotten (a transition, never a state kept)
};
std::string_view AlertStateName(AlertState s);

// (rule, channel, os, build, signature) of SPEC §5, plus `scope`: the crash class of
// crash_rate_regression ("parent", ..., "startup") or the source of hang_spike ("bhr",
// "main"); "" otherwise. `os` is "all" unless per_os (burst is always per OS); `build` is
// the build id (crash rules), the build date (hang_spike) or "" (burst).
inline constexpr std::string_view kAllOs = "all";  // AlertKey::os of an alert over every OS

struct AlertKey {
  AlertRule rule = AlertRule::kCrashSignatureSpike;
  std::string channel;
  std::string os;
  std::string build;
  std::string signature;
  std::string scope;
  auto operator<=>(const AlertKey&) const = default;
};

// The numbers that justify an alert. Only aggregates, never a document.
struct AlertNumbers {
  int64_t count_new = 0;         // crashes / hangs of the new build (or the burst window)
  int64_t count_base = 0;        // ... of the baseline builds (age-matched) or trailing window
  double exposure_new = 0;       // usage hours (or crashes, in crash_share mode)
  double exposure_base = 0;
  ExposureMode exposure = ExposureMode::kUsageHours;
  std::optional<double> ratio;   // rate ratio new / baseline; none when the baseline is 0
  std::optional<double> p_value;     // one-sided conditional binomial test
  std::optional<double> p_adjusted;  // after the round's multiple-testing guard
  std::optional<int64_t> installs;   // distinct installs behind count_new (HLL); none when the
                                     // documents carried no install id (Mozilla's bhr pings; crash
                                     // reports without clientId or install_time): the min_installs
                                     // guard was then skipped, and the alert says so
                                     // (kInstallsUnknownNote)
  double dispersion = 0;             // spike / hang_spike: build-to-build variance of rates
                                     // estimated from the baseline (0: plain Poisson test)
  std::vector<std::string> baseline_builds;
  std::string version;           // of the new build, when known
  double age_hours = 0;          // of the new build (burst: the window)
  int64_t hang_ms_new = 0;       // hang_spike: hang milliseconds behind the ratio
  int64_t hang_ms_base = 0;
};

struct Alert {
  AlertKey key;
  AlertState state = AlertState::kPending;
  AlertNumbers numbers;      // of the latest round in which the condition held
  int64_t first_seen_ms = 0;  // stream time the condition first held (this cycle)
  int64_t last_seen_ms = 0;   // stream time it last held
  int64_t since_ms = 0;       // stream time of the last transition
  int true_streak = 0;
  int false_streak = 0;
};

// One transition, for the sinks.
struct AlertEvent {
  Alert alert;  // state = the new state
  AlertState from = AlertState::kInactive;  // kInactive when the key was new
};

// One rule outcome in one round.
struct AlertCandidate {
  AlertKey key;
  AlertNumbers numbers;
  bool holds = false;
};

// Evaluates every rule on `snap` (stream time = snap.stream_time_ms), p-values adjusted
// across the round. Pure: no life cycle. Candidates that failed a gate before testing
// (counts, installs, no baseline) are not returned.
std::vector<AlertCandidate> EvaluateRules(const Snapshot& snap, const AlertOptions& options);

// The alert as the API, file, webhook and Kafka sinks carry it (one JSON object).
std::string AlertJson(const Alert& alert);

// The "note" of an alert whose installs are unknown ("installs": null).
inline constexpr std::string_view kInstallsUnknownNote =
    "installs unknown: no document behind this alert carries clientId or install_time, so the "
    "min_installs guard was skipped";
// The dashboard view of the alert's signature (or build), e.g.
// "/#/crashes/signature?signature=...&build_id=...&channel=...".
std::string DashboardPath(const AlertKey& key);

struct AlertEngineStats {
  uint64_t rounds = 0;
  uint64_t tested = 0;       // candidates in the last round
  uint64_t transitions = 0;  // over the engine's life
  // Candidates tested without the min_installs guard because their installs were unknown,
  // over the engine's life (a candidate counts once per round).
  uint64_t installs_unknown = 0;
  std::array<uint64_t, 3> by_state{};  // current pending, firing, resolved
  uint64_t outbox_dropped = 0;         // undelivered transitions dropped (kMaxOutbox)
};

class AlertEngine {
 public:
  explicit AlertEngine(AlertOptions options);

  // Evaluates the rules on `snap` and advances every key's life cycle; returns the
  // transitions of this round (sorted by key), which are also appended to the outbox.
  // Keys not produced this round count as false. Resolved alerts are forgotten
  // new_build_days after resolving.
  std::vector<AlertEvent> Evaluate(const Snapshot& snap);

  // The outbox: transitions decided and not yet delivered to the sinks, oldest first. It is
  // part of the serialized state, so whoever restores the state delivers what was decided
  // and not delivered (ADR 0024, "Alerts": commit, then send).
  std::vector<AlertEvent> Outbox() const;
  // The first `n` events of the outbox were delivered.
  void Delivered(size_t n);
  // Events the outbox keeps at most: past it (commits failing for a long time) the oldest
  // are dropped, logged and counted (stats().outbox_dropped), so the state stays small
  // enough to commit.
  static constexpr size_t kMaxOutbox = 1000;
  void SetMaxOutboxForTesting(size_t n) { max_outbox_ = n; }  // before the first round

  std::vector<Alert> Alerts() const;  // sorted: firing, pending, resolved; then by key
  std::string AlertsJson() const;     // JSON array of AlertJson objects, same order
  AlertEngineStats stats() const;

  // The whole life-cycle state as bytes (versioned, checksummed), for checkpoints.
  std::string Serialize() const;
  // Replaces the state with a serialized one; kCorrupt when it does not parse (the
  // state is then unchanged).
  [[nodiscard]] Status Restore(std::string_view bytes);

  const AlertOptions& options() const { return options_; }

 private:
  void RenderLocked() REQUIRES(mu_);

  const AlertOptions options_;
  mutable Mutex mu_;
  std::map<AlertKey, Alert> alerts_ GUARDED_BY(mu_);
  std::vector<AlertEvent> outbox_ GUARDED_BY(mu_);
  size_t max_outbox_ = kMaxOutbox;
  std::string json_ GUARDED_BY(mu_) = "[]";  // rendered after each change
  AlertEngineStats stats_ GUARDED_BY(mu_);
};

}  // namespace seismo
