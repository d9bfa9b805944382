#include "seismo/query/alerts_json.h"

#include <cstdint>

namespace seismo {
namespace {

constexpr size_t kNpos = std::string_view::npos;
constexpr size_t kMaxDepth = 64;

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  return i;
}

// s[i] is '"': the index past the closing quote, or kNpos.
size_t SkipString(std::string_view s, size_t i) {
  for (size_t j = i + 1; j < s.size(); ++j) {
    const auto c = static_cast<unsigned char>(s[j]);
    if (c == '\\') {
      ++j;
    } else if (c == '"') {
      return j + 1;
    } else if (c < 0x20) {
      return kNpos;
    }
  }
  return kNpos;
}

bool IsScalarChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E';
}

// The index past the JSON value starting at s[i] (no leading space), or kNpos.
size_t SkipValue(std::string_view s, size_t i, size_t depth = 0) {
  if (i >= s.size() || depth > kMaxDepth) return kNpos;
  const char c = s[i];
  if (c == '"') return SkipString(s, i);
  if (c == '{' || c == '[') {
    const char close = c == '{' ? '}' : ']';
    i = SkipSpace(s, i + 1);
    if (i < s.size() && s[i] == close) return i + 1;
    while (i < s.size()) {
      if (c == '{') {
        if (s[i] != '"') return kNpos;
        i = SkipSpace(s, SkipString(s, i));
        if (i >= s.size() || s[i] != ':') return kNpos;
        i = SkipSpace(s, i + 1);
      }
      i = SkipValue(s, i, depth + 1);
      if (i == kNpos) return kNpos;
      i = SkipSpace(s, i);
      if (i < s.size() && s[i] == close) return i + 1;
      if (i >= s.size() || s[i] != ',') return kNpos;
      i = SkipSpace(s, i + 1);
    }
    return kNpos;
  }
  size_t j = i;
  while (j < s.size() && IsScalarChar(s[j])) ++j;
  return j == i ? kNpos : j;
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<uint32_t> Hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return std::nullopt;
  uint32_t v = 0;
  for (size_t k = 0; k < 4; ++k) {
    const int h = Hex(s[i + k]);
    if (h < 0) return std::nullopt;
    v = v * 16 + static_cast<uint32_t>(h);
  }
  return v;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The string value s[begin, end) (quotes included), unescaped.
std::optional<std::string> DecodeString(std::string_view s, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin + 1; i + 1 < end; ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    const char e = s[++i];
    switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        auto cp = Hex4(s, i + 1);
        if (!cp) return std::nullopt;
        i += 4;
        if (*cp >= 0xD800 && *cp < 0xDC00 && i + 6 < end && s[i + 1] == '\\' && s[i + 2] == 'u') {
          auto low = Hex4(s, i + 3);
          if (low && *low >= 0xDC00 && *low < 0xE000) {
            cp = 0x10000 + ((*cp - 0xD800) << 10) + (*low - 0xDC00);
            i += 6;
          }
        }
        AppendUtf8(out, *cp);
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return out;
}

// Whether `alert` passes a filter on `member` with `value`: the member is
// absent or null (not split by it), or equal.
bool Passes(Dim dim, const std::optional<std::string>& member, std::string_view value) {
  return !member || FilterMatches(dim, *member, value);
}

bool Matches(std::string_view alert, const Query& q) {
  for (size_t d = 0; d < kDimCount; ++d) {
    const std::optional<std::string>& want = q.filters.value[d];
    if (!want) continue;
    const Dim dim = static_cast<Dim>(d);
    if (dim == Dim::kBuildId || dim == Dim::kBuildDate) {
      // A build id names its date; a hang alert's build date matches its builds' ids.
      const auto build_id = TopLevelString(alert, "build_id");
      const auto build_date = TopLevelString(alert, "build_date");
      const std::string_view date_of_want = std::string_view(*want).substr(0, 8);
      if (dim == Dim::kBuildId) {
        if (build_id ? *build_id != *want : (build_date && *build_date != date_of_want)) return false;
      } else if (build_date ? *build_date != *want
                            : (build_id && std::string_view(*build_id).substr(0, 8) != *want)) {
        return false;
      }
      continue;
    }
    std::optional<std::string> member = TopLevelString(alert, DimName(dim));
    if (dim == Dim::kOs && member == "all") member.reset();
    if (!Passes(dim, member, *want)) return false;
  }
  if (q.alert_rule && TopLevelString(alert, "rule") != *q.alert_rule) return false;
  if (q.alert_state && TopLevelString(alert, "state") != *q.alert_state) return false;
  return true;
}

}  // namespace

std::optional<std::vector<std::string_view>> SplitJsonArray(std::string_view json) {
  size_t i = SkipSpace(json, 0);
  if (i >= json.size() || json[i] != '[') return std::nullopt;
  std::vector<std::string_view> out;
  i = SkipSpace(json, i + 1);
  if (i < json.size() && json[i] == ']')
    return SkipSpace(json, i + 1) == json.size() ? std::optional(out) : std::nullopt;
  while (i < json.size()) {
    const size_t end = SkipValue(json, i);
    if (end == kNpos) return std::nullopt;
    out.push_back(json.substr(i, end - i));
    i = SkipSpace(json, end);
    if (i < json.size() && json[i] == ']') {
      return SkipSpace(json, i + 1) == json.size() ? std::optional(out) : std::nullopt;
    }
    if (i >= json.size() || json[i] != ',') return std::nullopt;
    i = SkipSpace(json, i + 1);
  }
  return std::nullopt;
}

std::optional<std::string> TopLevelString(std::string_view object, std::string_view key) {
  size_t i = SkipSpace(object, 0);
  if (i >= object.size() || object[i] != '{') return std::nullopt;
  i = SkipSpace(object, i + 1);
  if (i < object.size() && object[i] == '}') return std::nullopt;
  while (i < object.size() && object[i] == '"') {
    const size_t key_end = SkipString(object, i);
    if (key_end == kNpos) return std::nullopt;
    const std::optional<std::string> name = DecodeString(object, i, key_end);
    i = SkipSpace(object, key_end);
    if (!name || i >= object.size() || object[i] != ':') return std::nullopt;
    i = SkipSpace(object, i + 1);
    const size_t value_end = SkipValue(object, i);
    if (value_end == kNpos) return std::nullopt;
    if (*name == key) return object[i] == '"' ? DecodeString(object, i, value_end) : std::nullopt;
    i = SkipSpace(object, value_end);
    if (i >= object.size() || object[i] != ',') return std::nullopt;
    i = SkipSpace(object, i + 1);
  }
  return std::nullopt;
}

std::string FilterAlertsJson(std::string_view alerts_json, const Query& q) {
  const auto alerts = SplitJsonArray(alerts_json);
  if (!alerts) return "[]";
  std::string out = "[";
  for (std::string_view a : *alerts) {
    if (!Matches(a, q)) continue;
    if (out.size() > 1) out += ',';
    out += a;
  }
  out += ']';
  return out;
}

}  // namespace seismo
