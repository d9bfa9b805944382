#include "stop_signals.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <ctime>
#include <thread>

namespace seismo {

sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int WaitForStopSignal(const sigset_t& signals, std::optional<std::chrono::milliseconds> timeout) {
  if (!timeout) {
    int sig = 0;
    return sigwait(&signals, &sig) == 0 ? sig : 0;
  }
  const auto ms = timeout->count();
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1'000'000)};
  const int sig = sigtimedwait(&signals, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

const char* StopSignalName(int signal_number) { return signal_number == SIGTERM ? "SIGTERM" : "SIGINT"; }

void StartShutdownWatchdog(std::chrono::milliseconds timeout) {
  std::thread([timeout] {
    std::this_thread::sleep_for(timeout);
    spdlog::error("shutdown took longer than {} ms; exiting", timeout.count());
    _exit(1);
  }).detach();
}

}  // namespace seismo
