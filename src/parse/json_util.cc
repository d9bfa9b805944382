#include "json_util.h"

#include <charconv>
#include <cstdint>
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

Outcome ReadOptString(od::value v, std::optional<std::string_view>& out) {
  if (IsNull(v)) {
    out.reset();
    return std::nullopt;
  }
  std::string_view s;
  if (auto e = v.get_string().get(s)) return FromSimdjson(e);
  out.emplace(s);
  return std::nullopt;
}

std::optional<uint64_t> ParseUint(std::string_view text) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

}  // namespace seismo::parse_internal
