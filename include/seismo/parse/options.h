// Options that change how documents become records (config sections [ingest],
// [hangs], [crashes]). Plain values, copied into each Parser.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seismo {

// How a legacy hang histogram bucket with inclusive upper bound K is weighted.
enum class HangWeighting : uint8_t {
  kUpper,  // K ms (Mozilla's 2017 job)
  kLower,  // (K + 1) / 2 ms
  kMid,    // 0.75 K ms
};

// Which main-ping childPayloads are read (they repeat across subsessions).
enum class ChildPayloads : uint8_t {
  kShutdownOnly,  // only reason == "shutdown" or type == "saved-session"
  kAll,
  kNone,
};

// How the signature (top frame) of a hang stack is chosen.
enum class HangSignatureMode : uint8_t {
  kInnermost,       // the last stack element
  kInnermostLabel,  // the last element that is not a "(marker)" nor a native frame
};

struct HangOptions {
  int64_t min_ms = 128;        // legacy and bhr: hangs shorter than this are ignored
  int64_t max_ms = 16000;      // legacy histogram keys K must be < max_ms
  int64_t bhr_max_ms = 65536;  // bhr durations must be < bhr_max_ms
  HangWeighting weighting = HangWeighting::kUpper;
  ChildPayloads child_payloads = ChildPayloads::kShutdownOnly;
  HangSignatureMode signature = HangSignatureMode::kInnermost;
  // Optional filters; empty = keep everything. Documents whose channel/os do
  // not match are rejected as `filtered`; threads/processes filter hangs only.
  std::vector<std::string> channels;
  std::vector<std::string> os_names;
  std::vector<std::string> threads;
  std::vector<std::string> processes;
};

struct ParseOptions {
  size_t max_document_bytes = 8 * 1024 * 1024;
  size_t max_depth = 256;  // deeper nesting is rejected as too_deep
  HangOptions hangs;
};

}  // namespace seismo
