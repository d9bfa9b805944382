#include "seismo/query/answer_budget.h"

#include <algorithm>

namespace seismo {

std::shared_ptr<const AnswerBudget::Hold> AnswerBudget::TryReserve(uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (in_use_ > 0 && bytes > capacity_ - std::min(in_use_, capacity_)) {
      ++refused_;
      return nullptr;
    }
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
  }
  return std::make_shared<const Hold>(this, bytes);
}

void AnswerBudget::Release(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  in_use_ -= bytes;
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
