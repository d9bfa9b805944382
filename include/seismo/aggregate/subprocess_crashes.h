// A build's gpu, plugin or GMP crash count (SPEC §3.3). Its crash reports and its main
// pings' SUBPROCESS_CRASHES_WITH_DUMP count the same crashes, so the count is the larger
// of the two, never their sum (ADR 0026). /api/v1/builds and crash_rate_regression's gpu
// class both count so.
#pragma once

#include <cstdint>

namespace seismo {

inline int64_t SubprocessCrashCount(int64_t reports, int64_t main_pings) {
  return reports > main_pings ? reports : main_pings;
}

}  // namespace seismo
