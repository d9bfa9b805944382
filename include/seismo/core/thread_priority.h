// Thread priority: the daemon's background threads (parse workers, shard threads, and the
// HTTP server's warm-up thread, which builds the default answers of each published
// snapshot) run a few nice steps below the rest of the process, so that when the cores are
// short the HTTP workers, the publisher and the source thread are scheduled first: an API
// answer or a publish waits for a core for less than a scheduler slice, while the
// background loses only the little CPU they take (ADR 0025, [ingest] nice).
//
// The threads that answer clients (the HTTP server's, the health listener) ask for short
// turns instead (RequestShortSlice, ADR 0038): with every core busy, a request's thread that
// wakes then runs at once rather than after the running thread's turn.
//
// Threading: acts on the calling thread only.
#pragma once

#include <chrono>

namespace seismo {

// The turn a client-facing thread asks for: the kernel's shortest (EEVDF clamps a custom
// slice to 0.1–100 ms).
inline constexpr std::chrono::microseconds kClientThreadSlice{100};

// Adds `nice_steps` (0..19) to the calling thread's nice value, capped at 19. Raising
// nice needs no privilege. False when the kernel refused (the thread runs on unchanged).
bool LowerThisThreadPriority(int nice_steps);

// The calling thread's nice value.
int ThisThreadNice();

// Asks the kernel to run the calling thread in turns of `slice` (EEVDF's custom slice:
// sched_setattr's sched_runtime for a SCHED_OTHER thread, Linux 6.12 and later). A thread
// with a short turn that wakes preempts one with a longer turn at once, instead of waiting
// for the end of the running thread's turn (about 1.4 ms on these 2-core machines, several
// turns queued behind each other under full ingest). Its share of the CPU does not change:
// that is its nice value's, which is kept. Needs no privilege. False when the kernel
// refused; a kernel before 6.12 accepts it and keeps its own turn.
bool RequestShortSlice(std::chrono::microseconds slice);

}  // namespace seismo
