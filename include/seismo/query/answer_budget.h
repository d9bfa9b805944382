// AnswerBudget: the memory every API answer in flight may hold together ([http]
// answer_memory, a part of aggregate.memory_limit's fixed reserve; SPEC §7, ADR 0025).
// A request reserves what building and sending its answer may take before it starts and
// gives it back once the answer is sent; a request that does not fit within a short
// patience is refused (the API answers 503), never queued for long, so a burst of large
// requests cannot take the memory or the workers that /healthz and small answers need.
//
//   AnswerBudget budget(64 << 20);
//   if (auto hold = budget.TryReserve(bytes)) { ... build and send ... }  // released with `hold`
//   else { ... 503 ... }
//
// A reservation larger than the whole budget is let in only when nothing else is in
// flight: a state too large for the budget is still answered, one request at a time.
//
// Threading: every method from any thread (one mutex; held for a few instructions).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "seismo/core/mutex.h"

namespace seismo {

class AnswerBudget {
 public:
  explicit AnswerBudget(uint64_t capacity) : capacity_(capacity) {}

  // Gives its bytes back when the last copy goes.
  class Hold {
   public:
    Hold(AnswerBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    ~Hold() { budget_->Release(bytes_); }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    uint64_t bytes() const { return bytes_; }

   private:
    AnswerBudget* budget_;
    uint64_t bytes_;
  };

  // Null when `bytes` do not fit beside what is in flight within `patience` (answers in
  // flight are released as soon as they are sent: a short wait lets a burst through).
  std::shared_ptr<const Hold> TryReserve(uint64_t bytes,
                                         std::chrono::milliseconds patience = std::chrono::milliseconds(0));

  uint64_t capacity() const { return capacity_; }
  uint64_t in_use() const;
  uint64_t peak() const;     // the most held at once
  uint64_t refused() const;  // reservations refused

 private:
  void Release(uint64_t bytes);

  bool Fits(uint64_t bytes) const REQUIRES(mu_);

  const uint64_t capacity_;
  mutable Mutex mu_;
  CondVar released_;
  uint64_t in_use_ GUARDED_BY(mu_) = 0;
  uint64_t peak_ GUARDED_BY(mu_) = 0;
  uint64_t refused_ GUARDED_BY(mu_) = 0;
};

}  // namespace seismo
