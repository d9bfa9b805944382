#include "seismo/app/stall_guard.h"

#include <spdlog/spdlog.h>

#include <charconv>

namespace seismo {

void StallGuard::StartWatch() {
  if (watch_.joinable()) return;
  {
    MutexLock lock(mu_);
    stop_ = false;
  }
  Tick(Clock::now());
  watch_ = std::thread([this] {
    MutexLock lock(mu_);
    while (!stop_) {
      cv_.WaitUntil(mu_, Clock::now() + kTick);
      if (stop_) break;
      if (Tick(Clock::now())) {
        spdlog::warn(
            "cluster: this process did not run for {} ms, longer than the group's session: nothing is "
            "published until the consumer knows which partitions it still owns",
            last_stall().count());
      }
    }
  });
}

void StallGuard::StopWatch() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (watch_.joinable()) watch_.join();
  last_reading_.store(0, std::memory_order_release);  // no watch, no reading to be late
}

bool StallGuard::Tick(Clock::time_point now) {
  const bool stalled = HoldIfLate(now);
  last_reading_.store(Ticks(now), std::memory_order_release);
  return stalled;
}

bool StallGuard::Check(Clock::time_point now) {
  HoldIfLate(now);
  return Ticks(now) < hold_until_.load(std::memory_order_acquire);
}

bool StallGuard::HoldIfLate(Clock::time_point now) {
  const int64_t last = last_reading_.load(std::memory_order_acquire);
  const int64_t gap = Ticks(now) - last;
  if (last == 0 || gap <= session_ticks_) return false;
  last_stall_ms_.store(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::duration(gap)).count(),
                       std::memory_order_relaxed);
  hold_until_.store(Ticks(now + session_), std::memory_order_release);
  return true;
}

std::chrono::milliseconds SessionTimeoutOf(const std::map<std::string, std::string>& properties) {
  constexpr std::chrono::milliseconds kDefault{45000};  // librdkafka's default
  auto it = properties.find("session.timeout.ms");
  if (it == properties.end()) return kDefault;
  int64_t ms = 0;
  const char* end = it->second.data() + it->second.size();
  auto [p, ec] = std::from_chars(it->second.data(), end, ms);
  if (ec != std::errc() || p != end || ms <= 0) return kDefault;
  return std::chrono::milliseconds(ms);
}

}  // namespace seismo
