// WaitFor: a bounded wait on a condition, for tests that poll what a daemon, a server or a
// broker does on its own threads. Polls `done` every `every` until it holds or
// test::Patience(limit) has passed (a deadline by which it must have happened: longer under
// a sanitizer, and a passing test never waits it out), and returns its last value.
// Threading: the calling thread; `done` is called on it.
#pragma once

#include <chrono>
#include <thread>

#include "test_scale.h"

namespace seismo::test {

template <typename Condition, typename Rep, typename Period>
bool WaitFor(Condition done, std::chrono::duration<Rep, Period> limit,
             std::chrono::milliseconds every = std::chrono::milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + Patience(limit);
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(every);
  return done();
}

}  // namespace seismo::test
