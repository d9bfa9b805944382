// SpscRing<T>: a bounded, lock-free, single-producer single-consumer queue.
//
// Contract:
//   - Exactly one thread (the producer) calls TryPush; exactly one thread (the
//     consumer) calls TryPop and Front. Which threads those are may not change while
//     both are running. SizeApprox() may be called from any thread.
//   - Capacity is fixed at construction (rounded up to a power of two); a full
//     ring refuses TryPush (the caller decides: back off, or pause the source).
//     Nothing is ever dropped by the ring itself.
//   - An element pushed happens-before the pop that returns it (release store
//     of tail_ pairs with the consumer's acquire load; release store of head_
//     pairs with the producer's acquire load when it reuses the slot).
//
//        head_ (consumer)            tail_ (producer)
//          v                           v
//   [ . . x x x x x x x . . . . . . . ]   slots_, index = counter & mask_
//
// Counters only grow; tail_ - head_ is the fill level.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace seismo {

template <typename T>
class SpscRing {
 public:
  explicit SpscRing(size_t capacity)
      : mask_(std::bit_ceil(capacity < 2 ? size_t{2} : capacity) - 1), slots_(mask_ + 1) {}

  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // Producer only. Returns false (and leaves `value` untouched) when full.
  [[nodiscard]] bool TryPush(T& value) {
    const size_t tail = tail_.load(std::memory_order_relaxed);  // own counter
    if (tail - cached_head_ > mask_) {
      cached_head_ = head_.load(std::memory_order_acquire);  // pairs with TryPop's release
      if (tail - cached_head_ > mask_) return false;
    }
    slots_[tail & mask_] = std::move(value);
    tail_.store(tail + 1, std::memory_order_release);  // pairs with TryPop's acquire
    return true;
  }

  // Consumer only: the element TryPop would return next, left in place; null when empty.
  T* Front() {
    const size_t head = head_.load(std::memory_order_relaxed);  // own counter
    if (head == cached_tail_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);  // pairs with TryPush's release
      if (head == cached_tail_) return nullptr;
    }
    return &slots_[head & mask_];
  }

  // Consumer only.
  std::optional<T> TryPop() {
    const size_t head = head_.load(std::memory_order_relaxed);  // own counter
    if (head == cached_tail_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);  // pairs with TryPush's release
      if (head == cached_tail_) return std::nullopt;
    }
    std::optional<T> out(std::move(slots_[head & mask_]));
    slots_[head & mask_] = T();
    head_.store(head + 1, std::memory_order_release);  // pairs with TryPush's acquire
    return out;
  }

  // Any thread; exact only when both sides are quiet.
  size_t SizeApprox() const {
    // relaxed: a monitoring estimate, no data is read through it
    return tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed);
  }
  size_t capacity() const { return mask_ + 1; }

 private:
  const size_t mask_;
  std::vector<T> slots_;
  alignas(64) std::atomic<size_t> head_{0};
  alignas(64) size_t cached_tail_ = 0;  // consumer's copy of tail_
  alignas(64) std::atomic<size_t> tail_{0};
  alignas(64) size_t cached_head_ = 0;  // producer's copy of head_
};

}  // namespace seismo
