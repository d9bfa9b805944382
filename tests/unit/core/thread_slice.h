// Test helpers: a thread's turn (EEVDF's slice) and the process's threads, from /proc.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>

namespace seismo::testing {

// The se.slice of thread `tid` of this process, in ns; nullopt where the kernel shows none.
inline std::optional<uint64_t> ThreadSliceNs(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/sched");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("se.slice")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return std::nullopt;
    return std::stoull(line.substr(colon + 1));
  }
  return std::nullopt;
}

// The ids of this process's threads now.
inline std::set<int> ThreadIds() {
  std::set<int> ids;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(std::stoi(e.path().filename().string()));
  }
  return ids;
}

// The name (comm) of thread `tid` of this process.
inline std::string ThreadName(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace seismo::testing
