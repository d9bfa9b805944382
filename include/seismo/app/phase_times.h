// Where the wall time of one command goes, phase by phase: `seismo replay
// --timings` prints it to stderr as one JSON line (docs/benchmarks.md), and the
// summary line's time is its total.
//
// A phase is the time between two marks: Mark("ingest") closes the phase that
// began at the previous mark (or at construction). Each phase has its wall time and
// the CPU time the whole process (every thread) spent in it: on a machine shared with
// other work the CPU time is the steadier figure. When a bench allocation
// counter is preloaded (bench/alloc_counter.c exports `seismo_alloc_counter`),
// each phase also records how many allocations and bytes it made.
//
// Threading: one thread marks; the clock is steady_clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seismo {

class PhaseTimes {
 public:
  struct Phase {
    std::string name;
    double seconds = 0;
    double cpu_seconds = 0;    // user + system, all threads
    uint64_t allocations = 0;  // 0 unless an allocation counter is preloaded
    uint64_t allocated_bytes = 0;
  };

  PhaseTimes();

  // Closes the current phase under `name` and starts the next one.
  void Mark(std::string_view name);
  // Seconds since construction (the phases so far plus the open one).
  double TotalSeconds() const;
  const std::vector<Phase>& phases() const { return phases_; }
  bool counts_allocations() const { return counter_ != nullptr; }

  // {"phases":{"load":0.012,...},"total_s":...,"cpu":{"load":0.011,...},"total_cpu_s":...,
  // "allocations":{"load":n,...},"allocated_bytes":{...}}; the allocation fields only with a
  // preloaded counter. `extra` (already JSON
  // members, e.g. "\"documents\":3") is appended when not empty.
  std::string Json(std::string_view extra = {}) const;

 private:
  using Counter = void (*)(uint64_t* count, uint64_t* bytes);

  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  double start_cpu_ = 0;
  double last_cpu_ = 0;
  Counter counter_ = nullptr;
  uint64_t last_count_ = 0;
  uint64_t last_bytes_ = 0;
  std::vector<Phase> phases_;
};

}  // namespace seismo
