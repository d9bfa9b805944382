// Time types. Event time (when the telemetry happened, from the document or the
// Kafka timestamp) and wall time (this machine's clock) are different
// quantities and have different types, so they cannot be mixed by accident.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace seismo {

// Milliseconds since the Unix epoch, in event time.
struct EventTime {
  int64_t ms = 0;
  auto operator<=>(const EventTime&) const = default;
};

inline constexpr int64_t kMinuteMs = 60'000;
inline constexpr int64_t kHourMs = 3'600'000;
inline constexpr int64_t kDayMs = 86'400'000;

// value / divisor rounded down (toward negative infinity), for times before the epoch.
constexpr int64_t FloorDiv(int64_t value, int64_t divisor) {
  return value / divisor - ((value % divisor != 0) && ((value < 0) != (divisor < 0)));
}

// Parses an ISO-8601 / RFC-3339 timestamp ("2026-11-20T12:34:56.789Z",
// "2026-09-18T12:34:56.123456+00:00", "2026-11-20 12:34:56", "2026-11-20").
// Returns nullopt when the text is not such a timestamp.
std::optional<EventTime> ParseTimestamp(std::string_view text);

// "2026-11-20T12:34:56.789Z".
std::string FormatTimestamp(EventTime t);

// Parses a duration such as "60s", "10m", "1h", "7d", "14d", "500ms".
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);
std::string FormatDuration(std::chrono::milliseconds d);

// The outside world's clock, behind an interface so tests can drive time.
// Threading: implementations must be safe to call from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual EventTime Now() const = 0;  // wall clock expressed on the event-time axis
};

class SystemClock final : public Clock {
 public:
  EventTime Now() const override;
};

}  // namespace seismo
