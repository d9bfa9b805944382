#include "seismo/query/answer_budget.h"

#include <algorithm>

namespace seismo {

bool AnswerBudget::Fits(uint64_t bytes) const {
  return in_use_ == 0 || bytes <= capacity_ - std::min(in_use_, capacity_);
}

std::shared_ptr<const AnswerBudget::Hold> AnswerBudget::TryReserve(uint64_t bytes,
                                                                   std::chrono::milliseconds patience) {
  {
    MutexLock lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (!Fits(bytes)) {
      if (!released_.WaitUntil(mu_, deadline) && !Fits(bytes)) {
        ++refused_;
        return nullptr;
      }
    }
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
  }
  return std::make_shared<const Hold>(this, bytes);
}

void AnswerBudget::Release(uint64_t bytes) {
  {
    MutexLock lock(mu_);
    in_use_ -= bytes;
  }
  released_.NotifyAll();
}

uint64_t AnswerBudget::in_use() const {
  MutexLock lock(mu_);
  return in_use_;
}

uint64_t AnswerBudget::peak() const {
  MutexLock lock(mu_);
  return peak_;
}

uint64_t AnswerBudget::refused() const {
  MutexLock lock(mu_);
  return refused_;
}

}  // namespace seismo
