// How much data the heavy randomised tests push. An optimised build runs them at
// full scale (that run checks scale: a million stacks, fifty seeds); under a
// sanitizer, 10-50x slower, the same code paths run on a fraction of the data
// (that run checks memory and thread safety), so CI fits its time budget.
// And how long a wait on a condition may last before the test gives up (Patience).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace seismo::test {

// g++ says which sanitizer builds the code with __SANITIZE_*__, clang with __has_feature.
#if defined(__SANITIZE_THREAD__)
#define SEISMO_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SEISMO_TEST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SEISMO_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEISMO_TEST_ASAN 1
#endif
#endif

#if defined(SEISMO_TEST_ASAN) || defined(SEISMO_TEST_TSAN)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#if defined(SEISMO_TEST_TSAN)
inline constexpr bool kThreadSanitized = true;
#else
inline constexpr bool kThreadSanitized = false;
#endif

// `n` in an optimised build, n / divisor (at least `floor`) under a sanitizer.
constexpr size_t Scaled(size_t n, size_t divisor = 10, size_t floor = 1) {
  return kSanitized ? std::max(floor, n / divisor) : n;
}

// Every seed in an optimised build, the first one under a sanitizer.
inline std::vector<uint64_t> Seeds(std::initializer_list<uint64_t> seeds) {
  if (kSanitized) return {*seeds.begin()};
  return seeds;
}

// The deadline of a wait on a condition, `d` as an optimised build needs it: four times
// that under TSan, twice under ASan. A sanitized build runs the code 2-15x slower, and CI
// runs its suites side by side on two cores (TSan at load 20-50). Only for a deadline by
// which something must have happened, which a passing test never waits for to the end:
// never for what a test measures or for how long it lets a thing run.
inline constexpr int kPatience = kThreadSanitized ? 4 : kSanitized ? 2 : 1;
template <typename Rep, typename Period>
constexpr std::chrono::duration<Rep, Period> Patience(std::chrono::duration<Rep, Period> d) {
  return d * kPatience;
}

}  // namespace seismo::test
