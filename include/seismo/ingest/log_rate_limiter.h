// LogRateLimiter: keeps a flood of repeated log lines (a broker that stays down) to a few
// lines per interval, counting the rest. Used by the librdkafka clients' log and error
// callbacks (src/ingest/kafka_config.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "seismo/core/mutex.h"

namespace seismo {

// Lets through at most `burst` log lines per key in each `interval` and
// counts the rest, so a broker that stays down logs a few lines per interval
// rather than thousands. Threading: every method is safe from any thread
// (librdkafka calls log and error callbacks from its internal threads).
class LogRateLimiter {
 public:
  explicit LogRateLimiter(std::chrono::milliseconds interval = std::chrono::seconds(10),
                          int burst = 5)
      : interval_(interval), burst_(burst) {}

  // True when a line with this key may be logged now. When a new interval
  // starts, *suppressed receives how many lines of this key were dropped in
  // the previous one (0 otherwise) so the caller can say so.
  bool Allow(std::string_view key, uint64_t* suppressed);

 private:
  struct Window {
    std::chrono::steady_clock::time_point start;
    int logged = 0;
    uint64_t dropped = 0;
  };
  static constexpr size_t kMaxKeys = 256;  // keys are error codes/facilities: a small set

  const std::chrono::milliseconds interval_;
  const int burst_;
  Mutex mu_;
  std::unordered_map<std::string, Window> windows_ GUARDED_BY(mu_);
};

}  // namespace seismo
