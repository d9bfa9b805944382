// DeferredRelease: frees shared objects on a thread of its own, so that the thread that
// drops an object's last hold pays for a queue push, not for the free (issue 19).
//
//   publisher:   snap = release->Wrap(MergeSnapshots(...))       a hold like any other
//   HTTP worker: answers from snap, drops it — the last hold ──> queue ──> release thread
//                                                                          frees the snapshot
//
// Freeing a published snapshot of 10⁶ series (the pages and series it alone held, its row
// lists and indexes) took 50-90 ms of a niced thread under full ingest (seismo_bench api).
// Whoever held it last paid: the publisher or the warm-up mostly, but in 4 of 69 frees of a
// 20 s run an HTTP request in flight when both let go of it, and that request's latency is
// what the dashboard sees.
//
// Lifetime: every wrapped object not freed yet keeps the DeferredRelease alive (its hold's
// deleter holds a shared_ptr to it, let go of when the object is handed over; weak_ptrs to
// the hold do not keep it). Stop(), or the destructor, frees what is queued and joins the thread;
// after it a last hold frees its object on the spot. A wrapped object must hold no wrapped
// hold itself: the release thread would then drop a hold, and could run the destructor
// that joins it.
//
// Threading: Wrap and the holds' release from any thread; Stop() from one thread at a time.
// What the release thread frees is what the object alone held: an object sharing its parts
// with holds elsewhere (a cluster's published view is a copy of the global view's row lists,
// sharing its series) leaves those parts to their last holder.
#pragma once

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "seismo/core/mutex.h"

namespace seismo {

class DeferredRelease : public std::enable_shared_from_this<DeferredRelease> {
 public:
  // The thread runs `nice_steps` below the process (core/thread_priority.h): freeing is
  // background work.
  static std::shared_ptr<DeferredRelease> Start(int nice_steps = 0);
  ~DeferredRelease();
  DeferredRelease(const DeferredRelease&) = delete;
  DeferredRelease& operator=(const DeferredRelease&) = delete;

  // A hold on `object` (shared with no other hold): when its last copy goes away, `object`
  // is queued and freed on the release thread (or on the spot after Stop()).
  template <typename T>
  std::shared_ptr<T> Wrap(std::shared_ptr<T> object) {
    T* raw = object.get();
    if (raw == nullptr) return object;
    return std::shared_ptr<T>(raw, [self = shared_from_this(), held = std::move(object)](T*) mutable {
      // Moved out first: the deleter itself lives on while weak_ptrs to the hold do.
      const std::shared_ptr<DeferredRelease> release = std::move(self);
      release->Take(std::move(held));
    });
  }

  void Stop();
  // Objects handed over and freed on the release thread so far.
  uint64_t released() const;

 private:
  explicit DeferredRelease(int nice_steps);
  void Take(std::shared_ptr<const void> object) noexcept;
  void Run(int nice_steps);

  mutable Mutex mu_;
  CondVar cv_;
  std::vector<std::shared_ptr<const void>> queued_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t released_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace seismo
