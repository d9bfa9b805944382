#include "seismo/query/answer_budget.h"

#include <algorithm>

namespace seismo {

bool AnswerBudget::Fits(uint64_t bytes) const {
  return in_use_ == 0 || bytes <= capacity_ - std::min(in_use_, capacity_);
}

std::shared_ptr<const AnswerBudget::Hold> AnswerBudget::TryReserve(uint64_t bytes,
                                                                   std::chrono::milliseconds patience) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!released_.wait_for(lock, patience, [&] { return Fits(bytes); })) {
      ++refused_;
      return nullptr;
    }
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
  }
  return std::make_shared<const Hold>(this, bytes);
}

void AnswerBudget::Release(uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= bytes;
  }
  released_.notify_all();
}

uint64_t AnswerBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_use_;
}

uint64_t AnswerBudget::peak() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}

uint64_t AnswerBudget::refused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

}  // namespace seismo
