// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with the
// thread-safety annotations clang checks (core/thread_annotations.h). Members a mutex
// guards are declared GUARDED_BY(mu_); helpers that expect it held, REQUIRES(mu_).
//
//   {
//     MutexLock lock(mu_);
//     while (!ready_) cv_.Wait(mu_);   // a loop in the caller, not a predicate lambda:
//     ...                              // the analysis sees the guarded reads under the lock
//   }
//
// Condition waits take no predicate: clang analyses a lambda as a function of its own,
// which does not hold the lock, so the loop stays in the annotated caller.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "seismo/core/thread_annotations.h"

namespace seismo {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope. Unlock() and Lock() let a holder release it around
// slow work (a network call) and take it again; the destructor releases it only if held.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

class CondVar {
 public:
  // Releases `mu`, waits for a notification (or a spurious wake-up) and takes `mu` again.
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's
  }
  // The same until `deadline`; false when it has passed.
  bool WaitUntil(Mutex& mu, std::chrono::steady_clock::time_point deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace seismo
