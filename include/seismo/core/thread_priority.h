// Thread priority: the daemon's background threads (parse workers, shard threads, and the
// HTTP server's warm-up thread, which builds the default answers of each published
// snapshot) run a few nice steps below the rest of the process, so that when the cores are
// short the HTTP workers, the publisher and the source thread are scheduled first: an API
// answer or a publish waits for a core for less than a scheduler slice, while the
// background loses only the little CPU they take (ADR 0025, [ingest] nice).
//
// Threading: acts on the calling thread only.
#pragma once

namespace seismo {

// Adds `nice_steps` (0..19) to the calling thread's nice value, capped at 19. Raising
// nice needs no privilege. False when the kernel refused (the thread runs on unchanged).
bool LowerThisThreadPriority(int nice_steps);

// The calling thread's nice value.
int ThisThreadNice();

}  // namespace seismo
