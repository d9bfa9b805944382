// Whether this instance may still be a member of its consumer group after its source loop
// stalled (ADR 0024, "Zombies").
//
// A turn of the source loop that took longer than the group's session (the process was
// suspended, or starved of CPU) may have cost the instance its partitions without its
// consumer knowing yet: the coordinator moved them on when the session ran out, and the
// consumer learns it only at a later poll. A publish made in between would write partitions
// another member owns with this instance's stale state; a real broker refuses it (KIP-447),
// the mock's coordinator does not. So after such a turn the guard holds publishing until
// the consumer has been through a rebalance callback (it then knows what it owns), or until
// one more session has passed with the loop turning (librdkafka by then reports a session it
// lost on its own: it does so once no heartbeat succeeded for a session).
//
// Threading: the source thread only (rebalance callbacks run inside Poll() on it).
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace seismo {

class StallGuard {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StallGuard(std::chrono::milliseconds session) : session_(session) {}

  // A turn of the source loop ended at `now`. True when that turn ended a stall longer than
  // the session (publishing is held from then on).
  bool Turn(Clock::time_point now);
  // A rebalance callback ran: the consumer knows what it owns.
  void MembershipKnown() { hold_until_ = Clock::time_point{}; }
  bool Holding(Clock::time_point now) const { return now < hold_until_; }
  // The length of the last stall that started a hold (zero before any).
  std::chrono::milliseconds last_stall() const { return last_stall_; }

 private:
  std::chrono::milliseconds session_;
  Clock::time_point last_turn_{};
  Clock::time_point hold_until_{};
  std::chrono::milliseconds last_stall_{0};
};

// The group's session timeout of a consumer configured with `properties` (librdkafka's
// "session.timeout.ms", 45 s when unset or not a positive number).
std::chrono::milliseconds SessionTimeoutOf(const std::map<std::string, std::string>& properties);

}  // namespace seismo
