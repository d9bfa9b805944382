// A wall clock that tests set by hand (the Clock of core/time.h).
// Threading: Now() from any thread; Set/AdvanceTo from the test's (atomic, relaxed: a value,
// nothing is published with it).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "seismo/core/time.h"

namespace seismo::test {

class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t ms = 0) : now_(ms) {}
  EventTime Now() const override { return EventTime{now_.load(std::memory_order_relaxed)}; }
  void Set(int64_t ms) { now_.store(ms, std::memory_order_relaxed); }
  // Never back.
  void AdvanceTo(int64_t ms) { Set(std::max(ms, now_.load(std::memory_order_relaxed))); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace seismo::test
