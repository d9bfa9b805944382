#include "seismo/core/deferred_release.h"

#include <new>
#include <utility>

#include "seismo/core/thread_priority.h"

namespace seismo {

std::shared_ptr<DeferredRelease> DeferredRelease::Start(int nice_steps) {
  return std::shared_ptr<DeferredRelease>(new DeferredRelease(nice_steps));
}

DeferredRelease::DeferredRelease(int nice_steps) : thread_([this, nice_steps] { Run(nice_steps); }) {}

DeferredRelease::~DeferredRelease() { Stop(); }

void DeferredRelease::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

uint64_t DeferredRelease::released() const {
  MutexLock lock(mu_);
  return released_;
}

void DeferredRelease::Take(std::shared_ptr<const void> object) noexcept {
  {
    MutexLock lock(mu_);
    if (!stopping_) {
      try {
        queued_.push_back(std::move(object));
        cv_.NotifyOne();
        return;
      } catch (const std::bad_alloc&) {
        // No room in the queue: freed here (a deleter must not throw).
      }
    }
  }
  object.reset();  // stopped, or no room: freed here, outside the lock
}

void DeferredRelease::Run(int nice_steps) {
  if (nice_steps > 0) LowerThisThreadPriority(nice_steps);
  std::vector<std::shared_ptr<const void>> batch;
  for (;;) {
    bool last = false;
    {
      MutexLock lock(mu_);
      while (!stopping_ && queued_.empty()) cv_.Wait(mu_);
      batch.swap(queued_);
      last = stopping_;
    }
    const uint64_t n = batch.size();
    batch.clear();  // the frees, outside the lock
    {
      MutexLock lock(mu_);
      released_ += n;
    }
    if (last) return;
  }
}

}  // namespace seismo
