/* An allocation counter for profiles (docs/benchmarks.md): preloaded into a
 * process, it counts every malloc, calloc, realloc, aligned allocation (and so
 * every operator new) with the bytes asked for, and forwards to glibc. seismo
 * finds `seismo_alloc_counter` with dlsym, and `seismo replay --timings` then
 * reports allocations per phase.
 *
 *   LD_PRELOAD=build-bench/bench/libseismo_alloc_counter.so seismo replay --timings ...
 *
 * Counters are relaxed atomics: totals are exact, their cost is not representative
 * of an unprofiled run. Never linked into seismo itself. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t n, size_t size);
extern void* __libc_realloc(void* p, size_t size);
extern void* __libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void* p);

static _Atomic uint64_t count;
static _Atomic uint64_t bytes;

static void Count(size_t size) {
  atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
}

void seismo_alloc_counter(uint64_t* out_count, uint64_t* out_bytes) {
  *out_count = atomic_load_explicit(&count, memory_order_relaxed);
  *out_bytes = atomic_load_explicit(&bytes, memory_order_relaxed);
}

void* malloc(size_t size) {
  Count(size);
  return __libc_malloc(size);
}

void* calloc(size_t n, size_t size) {
  Count(n * size);
  return __libc_calloc(n, size);
}

void* realloc(void* p, size_t size) {
  Count(size);
  return __libc_realloc(p, size);
}

void free(void* p) { __libc_free(p); }

void* memalign(size_t alignment, size_t size) {
  Count(size);
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

int posix_memalign(void** out, size_t alignment, size_t size) {
  void* p = memalign(alignment, size);
  if (p == NULL) return 12; /* ENOMEM */
  *out = p;
  return 0;
}
