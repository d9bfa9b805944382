#include "seismo/core/time.h"

#include <fmt/format.h>

#include <cctype>

namespace seismo {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Civil {
  int64_t y;
  unsigned m, d;
};

Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

// Reads exactly n digits at s[pos]; advances pos.
bool Digits(std::string_view s, size_t& pos, size_t n, int64_t& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  pos += n;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos < s.size() && s[pos] == c) {
    ++pos;
    return true;
  }
  return false;
}

}  // namespace

std::optional<EventTime> ParseTimestamp(std::string_view s) {
  size_t pos = 0;
  int64_t y, mo, d, h = 0, mi = 0, sec = 0, ms = 0;
  if (!Digits(s, pos, 4, y) || !Expect(s, pos, '-') || !Digits(s, pos, 2, mo) ||
      !Expect(s, pos, '-') || !Digits(s, pos, 2, d)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return std::nullopt;
  int64_t offset_min = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return std::nullopt;
    ++pos;
    if (!Digits(s, pos, 2, h) || !Expect(s, pos, ':') || !Digits(s, pos, 2, mi)) {
      return std::nullopt;
    }
    if (Expect(s, pos, ':') && !Digits(s, pos, 2, sec)) return std::nullopt;
    if (h > 23 || mi > 59 || sec > 60) return std::nullopt;
    if (Expect(s, pos, '.')) {
      size_t start = pos;
      int64_t frac = 0;
      size_t n = 0;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
        if (n < 3) frac = frac * 10 + (s[pos] - '0');
        ++n;
        ++pos;
      }
      if (pos == start) return std::nullopt;
      while (n < 3) {
        frac *= 10;
        ++n;
      }
      ms = frac;
    }
    if (pos < s.size()) {
      char c = s[pos];
      if (c == 'Z' || c == 'z') {
        ++pos;
      } else if (c == '+' || c == '-') {
        ++pos;
        int64_t oh, om = 0;
        if (!Digits(s, pos, 2, oh)) return std::nullopt;
        Expect(s, pos, ':');
        if (pos < s.size() && !Digits(s, pos, 2, om)) return std::nullopt;
        offset_min = (oh * 60 + om) * (c == '-' ? -1 : 1);
      }
    }
    if (pos != s.size()) return std::nullopt;
  }
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  int64_t total = ((days * 24 + h) * 60 + mi - offset_min) * 60 + sec;
  return EventTime{total * 1000 + ms};
}

std::string FormatTimestamp(EventTime t) {
  int64_t ms = t.ms;
  int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
  int64_t rem = ms - days * 86400000;
  Civil c = CivilFromDays(days);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", c.y, c.m, c.d, rem / 3600000,
                     rem / 60000 % 60, rem / 1000 % 60, rem % 1000);
}

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view s) {
  size_t pos = 0;
  int64_t value = 0;
  size_t digits = 0;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
    if (value > (int64_t{1} << 40)) return std::nullopt;
    value = value * 10 + (s[pos] - '0');
    ++pos;
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  std::string_view unit = s.substr(pos);
  int64_t mult;
  if (unit == "ms") {
    mult = 1;
  } else if (unit == "s") {
    mult = 1000;
  } else if (unit == "m") {
    mult = kMinuteMs;
  } else if (unit == "h") {
    mult = kHourMs;
  } else if (unit == "d") {
    mult = kDayMs;
  } else {
    return std::nullopt;
  }
  return std::chrono::milliseconds(value * mult);
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms != 0 && ms % kDayMs == 0) return fmt::format("{}d", ms / kDayMs);
  if (ms != 0 && ms % kHourMs == 0) return fmt::format("{}h", ms / kHourMs);
  if (ms != 0 && ms % kMinuteMs == 0) return fmt::format("{}m", ms / kMinuteMs);
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

EventTime SystemClock::Now() const {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return EventTime{std::chrono::duration_cast<std::chrono::milliseconds>(now).count()};
}

}  // namespace seismo
