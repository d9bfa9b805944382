#include "seismo/core/ordered_parts.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

#include "seismo/core/mutex.h"

namespace seismo {
namespace {

// What the threads share: part i is made into slot i % window, once every part up to
// i - window has been taken out of it.
class Parts {
 public:
  Parts(size_t parts, size_t window) : parts_(parts), window_(window), texts_(window), made_(window, false) {}

  // The next part to make, once one may begin (false: none is left, or an error stopped
  // them): a helper's turn.
  bool Claim(size_t& part) {
    MutexLock lock(mu_);
    while (!stopped_ && next_ < parts_ && next_ >= taken_ + window_) cv_.Wait(mu_);
    if (stopped_ || next_ >= parts_) return false;
    part = next_++;
    return true;
  }

  void Make(size_t part, const std::function<void(size_t, std::string&)>& make) {
    std::string& text = texts_[part % window_];  // this part's alone until it is taken
    text.clear();
    try {
      make(part, text);
    } catch (...) {
      Stop(std::current_exception());
      return;
    }
    {
      MutexLock lock(mu_);
      made_[part % window_] = true;
    }
    cv_.NotifyAll();
  }

  // The caller's turn: takes every part made in order, else makes the next part itself, else
  // waits. False once every part is taken or an error stopped them.
  bool Step(const std::function<void(size_t, std::string&)>& make,
            const std::function<void(std::string&)>& take) {
    size_t part = 0;
    bool ready = false;
    {
      MutexLock lock(mu_);
      for (;;) {
        if (stopped_ || taken_ == parts_) return false;
        if (made_[taken_ % window_]) {
          ready = true;
          part = taken_;
          break;
        }
        if (next_ < parts_ && next_ < taken_ + window_) {
          part = next_++;
          break;
        }
        cv_.Wait(mu_);
      }
    }
    if (!ready) {
      Make(part, make);
      return true;
    }
    try {
      take(texts_[part % window_]);
    } catch (...) {
      Stop(std::current_exception());
      return false;
    }
    {
      MutexLock lock(mu_);
      made_[part % window_] = false;
      ++taken_;
    }
    cv_.NotifyAll();
    return true;
  }

  void Stop(std::exception_ptr error) {
    {
      MutexLock lock(mu_);
      if (!error_) error_ = error;
      stopped_ = true;
    }
    cv_.NotifyAll();
  }

  std::exception_ptr error() {
    MutexLock lock(mu_);
    return error_;
  }

 private:
  const size_t parts_;
  const size_t window_;
  std::vector<std::string> texts_;  // a slot's text: its maker's, then (once made) the caller's
  Mutex mu_;
  CondVar cv_;
  std::vector<bool> made_ GUARDED_BY(mu_);
  size_t next_ GUARDED_BY(mu_) = 0;   // the next part to make
  size_t taken_ GUARDED_BY(mu_) = 0;  // parts handed to take
  bool stopped_ GUARDED_BY(mu_) = false;
  std::exception_ptr error_ GUARDED_BY(mu_);
};

}  // namespace

void MakeInOrder(size_t parts, int threads, size_t window,
                 const std::function<void(size_t, std::string&)>& make,
                 const std::function<void(std::string&)>& take) {
  if (threads <= 1 || parts <= 1) {
    std::string text;
    for (size_t i = 0; i < parts; ++i) {
      text.clear();
      make(i, text);
      take(text);
    }
    return;
  }
  const size_t helpers = std::min<size_t>(static_cast<size_t>(threads) - 1, parts - 1);
  Parts shared(parts, std::max<size_t>(window, helpers + 1));
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (size_t t = 0; t < helpers; ++t) {
    pool.emplace_back([&shared, &make] {
      for (size_t part = 0; shared.Claim(part);) shared.Make(part, make);
    });
  }
  while (shared.Step(make, take)) {
  }
  shared.Stop(nullptr);  // helpers waiting for room: none will come
  for (std::thread& t : pool) t.join();
  if (std::exception_ptr error = shared.error()) std::rethrow_exception(error);
}

}  // namespace seismo
