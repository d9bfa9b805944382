// Backoff for idle loops: spin briefly, then yield, then sleep up to 1 ms.
// Threading: one instance per thread.
#pragma once

#include <chrono>
#include <thread>

namespace seismo {

class Backoff {
 public:
  void Idle() {
    if (++idle_ < 64) return;
    if (idle_ < 128) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(idle_ < 1024 ? 50 : 1000));
  }
  void Reset() { idle_ = 0; }

 private:
  unsigned idle_ = 0;
};

}  // namespace seismo
