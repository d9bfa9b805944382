// DaemonProcess: the real `seismo run --config <dir>/seismo.toml --output
// <dir>/run.json` as a child process, logging to <dir>/run.log, for tests that
// signal it (SIGKILL, SIGTERM), read its /proc entries or talk to its HTTP
// port. Every wait is bounded: a daemon that does not exit in time is killed
// and the test fails.
// Threading: one test thread.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/wait_for.h"
#include "test_scale.h"

extern char** environ;

namespace seismo::testing {

inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

// For a child a test spawns itself: kills and reaps it when the test ends before it
// did (a failed ASSERT returns early), so no process outlives its test. Set the pid
// to 0 once it has been reaped.
class ChildGuard {
 public:
  explicit ChildGuard(pid_t& pid) : pid_(pid) {}
  ~ChildGuard() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;

 private:
  pid_t& pid_;
};

// How long the real binary takes, here and now, to start, do a small job and exit:
// `seismo replay` of 200 generated crashes (process start, signature lists, threads,
// output). The yardstick tests size their deadlines by, so that they hold on a loaded
// machine and under a sanitizer as they do on an idle one. The median of three runs.
inline std::chrono::milliseconds MeasureBinaryRoundTrip(const std::filesystem::path& scratch_dir) {
  const std::string corpus = (scratch_dir / "yardstick.ndjson").string();
  const std::string gen =
      std::string(SEISMO_BINARY) + " generate --kind crash --count 200 --seed 1 --output " + corpus;
  if (std::system(gen.c_str()) != 0) return std::chrono::seconds(1);
  const std::string replay = std::string(SEISMO_BINARY) + " replay --quiet --output " +
                             (scratch_dir / "yardstick.json").string() + " " + corpus;
  std::vector<std::chrono::milliseconds> runs;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (std::system(replay.c_str()) != 0) return std::chrono::seconds(1);
    runs.push_back(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start));
  }
  std::sort(runs.begin(), runs.end());
  return runs[1];
}

class DaemonProcess {
 public:
  // What Signal() returns when the daemon had to be killed after `limit`.
  static constexpr int kTimedOut = -1000;

  explicit DaemonProcess(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~DaemonProcess() {
    if (pid_ > 0) Signal(SIGKILL, std::chrono::seconds(10));
  }
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  std::filesystem::path config() const { return dir_ / "seismo.toml"; }
  std::filesystem::path output() const { return dir_ / "run.json"; }
  std::filesystem::path log_path() const { return dir_ / "run.log"; }
  std::string log() const { return Slurp(log_path()); }
  pid_t pid() const { return pid_; }

  // Spawns the daemon (with `extra_args` after the usual ones) and waits until it
  // says it runs: only then are its signals handled and its HTTP port known.
  void Start(const std::vector<std::string>& extra_args = {}) {
    ASSERT_LE(pid_, 0) << "already running";
    std::vector<std::string> args = {SEISMO_BINARY,     "run",      "--config",
                                     config().string(), "--output", output().string()};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log_file = log_path().string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const size_t runs_before = CountOf(log(), " running");
    ASSERT_EQ(posix_spawn(&pid_, SEISMO_BINARY, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    test::WaitFor([&] { return CountOf(log(), " running") > runs_before; }, std::chrono::seconds(20),
                  std::chrono::milliseconds(20));
    ASSERT_GT(CountOf(log(), " running"), runs_before) << log();
  }

  // Sends `sig` and waits up to `limit` for the exit. Returns the exit code, or
  // -signal when a signal ended it; kTimedOut (after a SIGKILL) when it was still
  // running at `limit`. `took` receives the time from the signal to the exit.
  int Signal(int sig, std::chrono::milliseconds limit, std::chrono::milliseconds* took = nullptr) {
    if (pid_ <= 0) {
      ADD_FAILURE() << "not running";
      return kTimedOut;
    }
    const auto sent = std::chrono::steady_clock::now();
    kill(pid_, sig);
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() - sent < limit) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (took != nullptr) {
      *took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent);
    }
    if (done == 0) {
      ADD_FAILURE() << "the daemon did not exit within " << limit.count() << " ms of signal " << sig << "\n"
                    << log();
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return kTimedOut;
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  // The HTTP port of the current run, from its "serving http://127.0.0.1:<port>" log line.
  int http_port() const {
    const std::string text = log();
    const std::string needle = "serving http://127.0.0.1:";
    const size_t at = text.rfind(needle);
    return at == std::string::npos ? 0 : std::stoi(text.substr(at + needle.size()));
  }

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

}  // namespace seismo::testing
