// ThreadOwner: a debug-build check that an object is used by one thread at a time, the
// one that owns it now (a shard's state: its shard thread while the shard runs, the
// owner's thread while it is stopped: aggregate/shard_state.h).
//
//   Assign()   the calling thread becomes the owner (the constructor assigns the
//              constructing thread); hand-overs happen at a thread's start or join
//   Check(w)   aborts with a message naming `w` when another thread calls
//
// Release builds (NDEBUG) neither record nor check: both are empty inline functions.
// The member is kept in every build so that the layout does not depend on NDEBUG.
#pragma once

#include <atomic>
#include <thread>

namespace seismo {

class ThreadOwner {
 public:
  ThreadOwner() { Assign(); }

  void Assign() {
#ifndef NDEBUG
    // relaxed: a hand-over is ordered by the thread start or join around it; the atomic
    // only keeps a wrong thread's Check() from being a data race of its own.
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
#endif
  }

  void Check([[maybe_unused]] const char* what) const {
#ifndef NDEBUG
    if (owner_.load(std::memory_order_relaxed) != std::this_thread::get_id()) Fail(what);
#endif
  }

 private:
  [[noreturn]] void Fail(const char* what) const;

  std::atomic<std::thread::id> owner_{};
};

}  // namespace seismo
