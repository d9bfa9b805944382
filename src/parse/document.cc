#include "seismo/parse/document.h"

#include <algorithm>
#include <array>
#include <cctype>

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
