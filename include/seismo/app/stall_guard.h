// Whether this instance may still be a member of its consumer group after the process stood
// still (ADR 0024, "Zombies").
//
// A process that did not run for longer than the group's session (suspended, frozen, or
// starved of CPU) may have lost its partitions without its consumer knowing yet: the
// coordinator moved them on when the session ran out, and the consumer learns it only at a
// later poll. A publish made in between would write partitions another member owns with this
// instance's stale state; a real broker refuses it (KIP-447), the mock's coordinator does not.
//
// A watch thread reads the clock every tick. A gap between two readings longer than the
// session means the process stood still; so does a reader that finds the last reading that
// old (the watch has not run since it resumed). Either starts a hold: the daemon's barriers
// (publish, checkpoint, commit) wait until the consumer has been through a rebalance callback
// (it then knows what it owns), or until one more session has passed (librdkafka reports a
// session it lost by itself once no heartbeat succeeded for a session). Time the source loop
// spends in its own work (a barrier, backpressure) is not a stall: librdkafka heartbeats from
// its own threads meanwhile.
//
// Threading: Check() and MembershipKnown() from any thread; the watch is one thread of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>

#include "seismo/core/mutex.h"

namespace seismo {

class StallGuard {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kTick{100};

  explicit StallGuard(std::chrono::milliseconds session)
      : session_(session), session_ticks_(std::chrono::duration_cast<Clock::duration>(session).count()) {}
  ~StallGuard() { StopWatch(); }
  StallGuard(const StallGuard&) = delete;
  StallGuard& operator=(const StallGuard&) = delete;

  // Starts the watch thread (once); it logs each stall it finds.
  void StartWatch();
  void StopWatch();

  // One reading of the watch (tests call it with made-up times). True when the gap since the
  // previous reading was longer than the session: a hold starts.
  bool Tick(Clock::time_point now);
  // True while barriers are held. Finds a stall the watch has not seen yet by itself.
  bool Check(Clock::time_point now);
  // A rebalance callback ran: the consumer knows what it owns.
  void MembershipKnown() { hold_until_.store(0, std::memory_order_release); }
  // The length of the last stall that started a hold (zero before any).
  std::chrono::milliseconds last_stall() const {
    return std::chrono::milliseconds(last_stall_ms_.load(std::memory_order_relaxed));
  }

 private:
  static int64_t Ticks(Clock::time_point t) { return t.time_since_epoch().count(); }
  // Starts a hold when the last reading is older than the session; true when it did.
  bool HoldIfLate(Clock::time_point now);

  const std::chrono::milliseconds session_;
  const int64_t session_ticks_;
  // Clock ticks (0 = none). The watch stores a hold before the reading that found it, so a
  // reader that sees the new reading sees the hold too.
  std::atomic<int64_t> last_reading_{0};
  std::atomic<int64_t> hold_until_{0};
  std::atomic<int64_t> last_stall_ms_{0};

  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread watch_;
};

// The group's session timeout of a consumer configured with `properties` (librdkafka's
// "session.timeout.ms", 45 s when unset or not a positive number).
std::chrono::milliseconds SessionTimeoutOf(const std::map<std::string, std::string>& properties);

}  // namespace seismo
