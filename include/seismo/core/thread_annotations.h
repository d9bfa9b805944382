// Clang thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html).
// Under clang with -Wthread-safety (CMake option SEISMO_THREAD_SAFETY_ANALYSIS, on in the
// clang TSan build: docs/testing.md) the compiler checks that every member marked
// GUARDED_BY is touched only with its mutex held; under gcc the macros are empty.
//
//   GUARDED_BY(mu)      a member read or written only with `mu` held
//   PT_GUARDED_BY(mu)   what a pointer member points to, likewise
//   REQUIRES(mu)        a function its callers must call with `mu` held
//   EXCLUDES(mu)        a function that takes `mu` itself (callers must not hold it)
//   ACQUIRE(...) / RELEASE(...)  a function that takes or releases a capability
//   CAPABILITY(name)    a class that is a lock (core/mutex.h's Mutex)
//   SCOPED_CAPABILITY   a class holding a lock for its lifetime (MutexLock)
//   NO_THREAD_SAFETY_ANALYSIS  a function the analysis cannot follow (say why beside it)
#pragma once

#if defined(__clang__)
#define SEISMO_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SEISMO_THREAD_ANNOTATION(x)
#endif

// Abseil's absl/base/internal/thread_annotations.h (its containers include it) defines
// GUARDED_BY, PT_GUARDED_BY and NO_THREAD_SAFETY_ANALYSIS too, with the same attributes:
// whichever header comes first defines them.
#ifndef GUARDED_BY
#define GUARDED_BY(x) SEISMO_THREAD_ANNOTATION(guarded_by(x))
#endif
#ifndef PT_GUARDED_BY
#define PT_GUARDED_BY(x) SEISMO_THREAD_ANNOTATION(pt_guarded_by(x))
#endif
#define REQUIRES(...) SEISMO_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) SEISMO_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) SEISMO_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SEISMO_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define CAPABILITY(x) SEISMO_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY SEISMO_THREAD_ANNOTATION(scoped_lockable)
#ifndef NO_THREAD_SAFETY_ANALYSIS
#define NO_THREAD_SAFETY_ANALYSIS SEISMO_THREAD_ANNOTATION(no_thread_safety_analysis)
#endif
