// HugePageAllocator: a std allocator whose large blocks are mapped on their own and advised
// to the kernel for transparent huge pages (MADV_HUGEPAGE), for the arrays an answer at 10⁶
// series makes fresh and reads out of order: a flame graph's stacks and its sort keys.
//
// Why: on these machines (KVM guests, THP "madvise") glibc's large blocks are 4 KiB pages.
// A fresh block costs a page fault per 4 KiB on first touch, and a walk in random order a TLB
// miss per read; with 2 MiB pages both are 512 times rarer. ADR 0033 has the numbers.
//
// Blocks under kHugePageBlockFrom bytes come from operator new, as with std::allocator;
// larger ones from mmap, rounded up to whole huge pages (the last one may be partly unused:
// at most 2 MiB a block, and only blocks of kHugePageBlockFrom or more take this path).
// Where the kernel has no THP, or it is "never", the advice is ignored and the block is
// plain anonymous memory.
//
// Throws std::bad_alloc as std::allocator does. Threading: stateless.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace seismo {

// Blocks of this many bytes or more are mapped on their own, in whole huge pages of this size.
inline constexpr std::size_t kHugePageBlockFrom = std::size_t{4} << 20;  // 4 MiB
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

namespace huge_pages_internal {
void* Map(std::size_t bytes);  // throws std::bad_alloc
void Unmap(void* p, std::size_t bytes) noexcept;
}  // namespace huge_pages_internal

// `n` (bytes, or an address) rounded up to a whole number of huge pages.
constexpr std::size_t WholeHugePages(std::size_t n) {
  return (n + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

// The memory a block of `bytes` takes from HugePageAllocator (a large one is whole huge
// pages), for budgets that reserve it ahead.
constexpr std::size_t HugePageBlockBytes(std::size_t bytes) {
  return bytes < kHugePageBlockFrom ? bytes : WholeHugePages(bytes);
}

template <typename T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() noexcept = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBlockFrom) return std::allocator<T>().allocate(n);
    return static_cast<T*>(huge_pages_internal::Map(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBlockFrom) {
      std::allocator<T>().deallocate(p, n);
      return;
    }
    huge_pages_internal::Unmap(p, bytes);
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace seismo
