// IgnoreLeak: memory the process leaves allocated on purpose until it ends (a handle that
// cannot be destroyed safely), which LeakSanitizer must not report at exit. In builds with
// AddressSanitizer (which runs LeakSanitizer) it tells it so, and everything reachable from
// `p` is then not reported either; elsewhere it does nothing.
// Threading: any thread.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define SEISMO_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEISMO_LEAK_CHECKED 1
#endif
#endif

#ifdef SEISMO_LEAK_CHECKED
#include <sanitizer/lsan_interface.h>
#endif

namespace seismo {

inline void IgnoreLeak(const void* p) {
#ifdef SEISMO_LEAK_CHECKED
  if (p != nullptr) __lsan_ignore_object(p);
#else
  (void)p;
#endif
}

}  // namespace seismo
