// The simulated world of `seismo demo` (docs/adr/0007-demo.md).
//
// DemoPopulation: three channels, each a Scenario (sim/scenario.h) of builds released
// 24 h apart, with the same users, crash signatures and hang stacks on every build. All
// three end at the same instant; only the release channel's newest build is bad (a
// planted crash signature spike and a planted hang regression). Times are laid out
// backwards from `now`, so history exists when the demo starts and no document is ever
// later than the wall clock:
//
//   sim time ──>  start                                 bad           caught_up        end
//                  │                                    release        (≈ now)
//   beta           B1 ──── B2 ──── B3 ──── N (healthy) ──────────────────────────────────>
//   nightly              B1 ──── B2 ──── B3 ──── N (healthy) ─────────────────────────────>
//   release                 B1 ──── B2 ──── B3 ──────── N (bad) ─────────────────────────>
//                 │<── compressed: speed × wall time ──────────────────>│<── real time ──>│
//
// SimClock maps wall time to simulated time: start + speed × elapsed, capped at the wall
// clock (from `caught_up` on, simulated time is real time). DemoSimulator produces each
// channel's documents to Kafka when the simulated clock reaches their event time, one
// thread per channel, so the traffic is steady and in time order per channel.
//
// Threading: DemoPopulation and SimClock are immutable after construction (SimClock::Now
// may be called from any thread). DemoSimulator: Start/Stop from the owning thread;
// produced() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "seismo/sim/scenario.h"
#include "seismo/core/time.h"

namespace seismo {

class KafkaProducer;

struct DemoOptions {
  uint64_t seed = 1;
  int64_t now_ms = 0;                   // wall clock when the demo starts
  int64_t compressed_after_hours = 24;  // simulated hours from the bad release to `now`
  int64_t live_hours = 48;              // simulated (= real) hours after `now`
};

// What the demo planted, for the log and for tests.
struct DemoTruth {
  std::string channel;  // "release"
  std::string bad_build_id, bad_build_date, bad_version;
  std::string spike_signature;  // crash_signature_spike on bad_build_id
  std::string hang_signature;   // hang_spike on bad_build_date (source bhr)
};

class DemoPopulation {
 public:
  explicit DemoPopulation(const DemoOptions& options);

  // One scenario per channel: beta, nightly, release (the bad one) in this order.
  const std::vector<std::unique_ptr<Scenario>>& channels() const { return channels_; }
  const DemoTruth& truth() const { return truth_; }

  int64_t start_ms() const { return start_ms_; }              // first build's first hour
  int64_t bad_release_ms() const { return bad_release_ms_; }  // first hour of the bad build
  int64_t end_ms() const { return end_ms_; }                  // last simulated event time

 private:
  std::vector<std::unique_ptr<Scenario>> channels_;
  DemoTruth truth_;
  int64_t start_ms_ = 0;
  int64_t bad_release_ms_ = 0;
  int64_t end_ms_ = 0;
};

// Simulated time: min(sim_start + speed × (wall - wall_start), wall). Borrows `wall`.
class SimClock {
 public:
  SimClock(int64_t sim_start_ms, double speed, const Clock* wall);

  int64_t Now() const;
  // Wall milliseconds until the simulated clock reaches `sim_ms` (0 if it has).
  int64_t WallMsUntil(int64_t sim_ms) const;
  double speed() const { return speed_; }

 private:
  int64_t sim_start_ms_;
  double speed_;
  const Clock* wall_;
  int64_t wall_start_ms_;
};

// Kafka topics by document kind.
struct DemoTopics {
  std::string main = "telemetry.main";
  std::string bhr = "telemetry.bhr";
  std::string crash = "socorro.processed";
};

// Produces the population's documents as the simulated clock passes their event times.
// Borrows population, clock and producer; all must outlive Stop().
class DemoSimulator {
 public:
  DemoSimulator(const DemoPopulation& population, const SimClock& clock, KafkaProducer& producer,
                DemoTopics topics);
  ~DemoSimulator();
  DemoSimulator(const DemoSimulator&) = delete;
  DemoSimulator& operator=(const DemoSimulator&) = delete;

  void Start();
  // Stops the channel threads (within about 100 ms). Idempotent.
  void Stop();

  uint64_t produced() const { return produced_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  void RunChannel(const Scenario& scenario);
  // Sleeps until the simulated clock reaches `sim_ms`; false when stopping.
  bool WaitFor(int64_t sim_ms);

  const DemoPopulation& population_;
  const SimClock& clock_;
  KafkaProducer& producer_;
  const DemoTopics topics_;
  std::atomic<bool> stop_{false};
  // Relaxed: counters only, nothing is published with them.
  std::atomic<uint64_t> produced_{0};
  std::atomic<uint64_t> failed_{0};
  std::vector<std::thread> threads_;
};

// The event time of a scenario document ("submission_timestamp" of a ping,
// "submitted_timestamp" of a crash); nullopt when it has none.
std::optional<EventTime> DemoDocumentTime(std::string_view doc);

}  // namespace seismo
