#include "seismo/ingest/log_rate_limiter.h"

namespace seismo {

bool LogRateLimiter::Allow(std::string_view key, uint64_t* suppressed) {
  *suppressed = 0;
  const auto now = std::chrono::steady_clock::now();
  MutexLock lock(mu_);
  auto it = windows_.find(std::string(key));
  if (it == windows_.end()) {
    if (windows_.size() >= kMaxKeys) windows_.clear();  // keeps memory bounded; loses counts only
    it = windows_.emplace(std::string(key), Window{now, 0, 0}).first;
  }
  Window& w = it->second;
  if (now - w.start >= interval_) {
    *suppressed = w.dropped;
    w = Window{now, 0, 0};
  }
  if (w.logged < burst_) {
    ++w.logged;
    return true;
  }
  ++w.dropped;
  return false;
}

}  // namespace seismo
