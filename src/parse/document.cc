#include "seismo/parse/document.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace seismo {

std::string_view DocKindName(DocKind k) {
  switch (k) {
    case DocKind::kMain:
      return "main";
    case DocKind::kBhr:
      return "bhr";
    case DocKind::kCrash:
      return "crash";
  }
  return "unknown";
}

std::string_view CrashClassName(CrashClass c) {
  static constexpr std::array<std::string_view, 10> kNames = {
      "parent", "content", "content_shutdown", "gpu",    "rdd",
      "socket", "utility", "gmplugin",         "plugin", "other"};
  return kNames[static_cast<size_t>(c)];
}

// ---------------------------------------------------------------- TextArena

char* TextArena::Allocate(size_t n) {
  constexpr size_t kBlock = 16 * 1024;
  while (block_ < blocks_.size() && blocks_[block_].size - used_ < n) {
    ++block_;
    used_ = 0;
  }
  if (block_ == blocks_.size()) {
    const size_t size = std::max(kBlock, n);
    blocks_.push_back(Block{std::make_unique<char[]>(size), size});
    used_ = 0;
  }
  char* p = blocks_[block_].bytes.get() + used_;
  used_ += n;
  return p;
}

std::string_view TextArena::Copy(std::string_view s) {
  if (s.empty()) return {};
  char* p = Allocate(s.size());
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

void TextArena::Clear() {
  block_ = 0;
  used_ = 0;
}

// ---------------------------------------------------------------- ParsedDocument

HangRecord& ParsedDocument::AddHang(std::string_view process, std::string_view thread,
                                    std::span<const std::string_view> stack, std::string_view signature,
                                    int64_t hang_us, uint64_t hang_count) {
  HangRecord& h = hangs.emplace_back();
  h.process = text.Copy(process);
  h.thread = text.Copy(thread);
  h.signature = text.Copy(signature);
  h.frames_begin = static_cast<uint32_t>(frames.size());
  for (std::string_view f : stack) frames.push_back(text.Copy(f));
  h.frames_end = static_cast<uint32_t>(frames.size());
  h.hang_us = hang_us;
  h.hang_count = hang_count;
  return h;
}

void ParsedDocument::Clear() {
  kind = DocKind::kMain;
  dims = Dimensions{};
  doc_id.clear();
  install_id.clear();
  primary_time.reset();
  fallback_time.reset();
  usage_ms = 0;
  hangs.clear();
  frames.clear();
  subprocess_crashes = {};
  crash.reset();
  text.Clear();
}

std::optional<EventTime> ResolveEventTime(const ParsedDocument& doc,
                                          std::optional<EventTime> transport_time) {
  if (doc.primary_time) return doc.primary_time;
  if (transport_time) return transport_time;
  return doc.fallback_time;
}

std::string NormalizeProcess(std::string_view raw) {
  std::string p(raw);
  std::transform(p.begin(), p.end(), p.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (p.empty() || p == "main" || p == "default" || p == "null" || p == "parent" || p == "browser") {
    return "parent";
  }
  if (p == "tab" || p.find("content") != std::string::npos) return "content";
  return p;
}

std::string NormalizeOs(std::string_view raw) {
  if (raw == "Windows NT") return "Windows_NT";
  if (raw == "Mac OS X") return "Darwin";
  return std::string(raw);
}

}  // namespace seismo
