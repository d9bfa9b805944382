// Backoff for idle loops: spin briefly, then yield a few times, then sleep up to 1 ms.
// Few yields: with more busy threads than cores (a replay's reader, parse worker, shard and
// output writer on 2 cores) each yield hands the core to another thread and back. 64 of them
// per idle spell made 8 700 switches in a 0.2 s padded replay; 4 make 1 000, and the process
// takes 5-7 % less CPU (docs/benchmarks.md, 2026-12-03 night).
// Threading: one instance per thread.
#pragma once

#include <chrono>
#include <thread>

namespace seismo {

class Backoff {
 public:
  void Idle() {
    if (++idle_ < 64) return;
    if (idle_ < 64 + kYields) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(idle_ < 1024 ? 50 : 1000));
  }
  void Reset() { idle_ = 0; }

 private:
  static constexpr unsigned kYields = 4;
  unsigned idle_ = 0;
};

}  // namespace seismo
