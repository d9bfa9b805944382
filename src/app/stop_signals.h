// SIGINT and SIGTERM for the long-running commands (run, demo, broker): received
// synchronously by the command's main thread, then a watchdog on the shutdown.
#pragma once

#include <signal.h>

#include <chrono>
#include <optional>

namespace seismo {

// Blocks SIGINT/SIGTERM in this thread and every thread it starts later (threads inherit
// the mask: call it before any thread starts, librdkafka's included), so that only
// WaitForStopSignal() receives them. Returns the set to wait on.
sigset_t BlockStopSignals();

// Waits for one of `signals`, up to `timeout` (none: for ever). The signal number, or 0
// when the timeout passed first or the wait failed.
int WaitForStopSignal(const sigset_t& signals,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt);

// "SIGTERM" for SIGTERM, else "SIGINT".
const char* StopSignalName(int signal_number);

// Ends the process with exit status 1 once `timeout` has passed (a detached thread): a
// stuck shutdown must not keep it alive past shutdown_timeout (SPEC §7).
void StartShutdownWatchdog(std::chrono::milliseconds timeout);

}  // namespace seismo
