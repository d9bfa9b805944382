#include "seismo/app/stall_guard.h"

#include <charconv>
#include <cstdint>

namespace seismo {

bool StallGuard::Turn(Clock::time_point now) {
  const Clock::time_point last = last_turn_;
  last_turn_ = now;
  if (last == Clock::time_point{} || now - last <= session_) return false;
  last_stall_ = std::chrono::duration_cast<std::chrono::milliseconds>(now - last);
  hold_until_ = now + session_;
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
