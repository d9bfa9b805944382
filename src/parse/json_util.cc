#include "json_util.h"

#include <charconv>
#include <cstring>

namespace seismo::parse_internal {

RejectReason FromSimdjson(simdjson::error_code e, RejectReason type_reason) {
  switch (e) {
    case simdjson::UTF8_ERROR: return RejectReason::kInvalidUtf8;
    case simdjson::DEPTH_ERROR: return RejectReason::kTooDeep;
    case simdjson::INCORRECT_TYPE:
    case simdjson::NUMBER_OUT_OF_RANGE:
      return type_reason;
    case simdjson::CAPACITY: return RejectReason::kTooLarge;
    default: return RejectReason::kMalformedJson;
  }
}

bool IsNull(od::value& v) {
  bool is_null = false;
  return !v.is_null().get(is_null) && is_null;
}

Outcome ReadOptString(od::value v, std::optional<std::string>& out) {
  if (IsNull(v)) {
    out.reset();
    return std::nullopt;
  }
  std::string_view s;
  if (auto e = v.get_string().get(s)) return FromSimdjson(e);
  out.emplace(s);
  return std::nullopt;
}

bool NestsDeeperThan(std::string_view json, size_t max_depth) {
  // Cheap bound first: fewer openers than the limit cannot nest deeper.
  size_t openers = 0;
  for (char c : json) openers += (c == '{') | (c == '[');
  if (openers <= max_depth) return false;
  size_t depth = 0;
  const char* p = json.data();
  const char* end = p + json.size();
  while (p < end) {
    char c = *p++;
    if (c == '"') {
      // Skip the string: find the closing quote not preceded by a backslash.
      while (p < end) {
        const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
        if (q == nullptr) return false;  // unterminated: the parser reports it
        size_t backslashes = 0;
        for (const char* b = q; b > p && b[-1] == '\\'; --b) ++backslashes;
        p = q + 1;
        if (backslashes % 2 == 0) break;
      }
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

std::optional<uint64_t> ParseUint(std::string_view text) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

}  // namespace seismo::parse_internal
