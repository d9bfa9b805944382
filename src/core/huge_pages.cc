#include "seismo/core/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace seismo::huge_pages_internal {

// Mapped with a huge page of slack, then trimmed to start on a huge page's boundary: the
// kernel backs only whole aligned 2 MiB ranges with huge pages.
void* Map(std::size_t bytes) {
  const std::size_t length = HugePageBlockBytes(bytes);
  if (length < bytes || length + kHugePageBytes < length) throw std::bad_alloc();
  void* raw =
      mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = WholeHugePages(start);
  if (aligned > start) munmap(raw, aligned - start);
  const std::size_t tail = kHugePageBytes - (aligned - start);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
  void* block = reinterpret_cast<void*>(aligned);
  (void)madvise(block, length, MADV_HUGEPAGE);  // advice: refused where there is no THP
  return block;
}

void Unmap(void* p, std::size_t bytes) noexcept { munmap(p, HugePageBlockBytes(bytes)); }

}  // namespace seismo::huge_pages_internal
