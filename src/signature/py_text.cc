#include "signature/py_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace seismo::signature_internal {
namespace {

struct Range {
  uint32_t lo, hi;
};

// Unicode category Nd (what Python's re calls \d), generated with Python 3.11's
// unicodedata. Every range starts at a digit zero, so value = (cp - lo) % 10.
constexpr Range kDecimalRanges[] = {
    {0x30, 0x39},
    {0x660, 0x669},
    {0x6F0, 0x6F9},
    {0x7C0, 0x7C9},
    {0x966, 0x96F},
    {0x9E6, 0x9EF},
    {0xA66, 0xA6F},
    {0xAE6, 0xAEF},
    {0xB66, 0xB6F},
    {0xBE6, 0xBEF},
    {0xC66, 0xC6F},
    {0xCE6, 0xCEF},
    {0xD66, 0xD6F},
    {0xDE6, 0xDEF},
    {0xE50, 0xE59},
    {0xED0, 0xED9},
    {0xF20, 0xF29},
    {0x1040, 0x1049},
    {0x1090, 0x1099},
    {0x17E0, 0x17E9},
    {0x1810, 0x1819},
    {0x1946, 0x194F},
    {0x19D0, 0x19D9},
    {0x1A80, 0x1A89},
    {0x1A90, 0x1A99},
    {0x1B50, 0x1B59},
    {0x1BB0, 0x1BB9},
    {0x1C40, 0x1C49},
    {0x1C50, 0x1C59},
    {0xA620, 0xA629},
    {0xA8D0, 0xA8D9},
    {0xA900, 0xA909},
    {0xA9D0, 0xA9D9},
    {0xA9F0, 0xA9F9},
    {0xAA50, 0xAA59},
    {0xABF0, 0xABF9},
    {0xFF10, 0xFF19},
    {0x104A0, 0x104A9},
    {0x10D30, 0x10D39},
    {0x11066, 0x1106F},
    {0x110F0, 0x110F9},
    {0x11136, 0x1113F},
    {0x111D0, 0x111D9},
    {0x112F0, 0x112F9},
    {0x11450, 0x11459},
    {0x114D0, 0x114D9},
    {0x11650, 0x11659},
    {0x116C0, 0x116C9},
    {0x11730, 0x11739},
    {0x118E0, 0x118E9},
    {0x11950, 0x11959},
    {0x11C50, 0x11C59},
    {0x11D50, 0x11D59},
    {0x11DA0, 0x11DA9},
    {0x16A60, 0x16A69},
    {0x16AC0, 0x16AC9},
    {0x16B50, 0x16B59},
    {0x1D7CE, 0x1D7FF},
    {0x1E140, 0x1E149},
    {0x1E2F0, 0x1E2F9},
    {0x1E950, 0x1E959},
    {0x1FBF0, 0x1FBF9}
};

// str.lower() as runs {first, last, stride, delta}: every stride-th code point
// from first to last maps to cp + delta. Generated with Python 3.11; U+0130
// (the only one-to-many mapping) is handled separately.
struct LowerRun {
  uint32_t first, last, stride;
  int32_t delta;
};
constexpr LowerRun kLowerRuns[] = {
    {0xC0, 0xD6, 1, 32},
    {0xD8, 0xDE, 1, 32},
    {0x100, 0x12E, 2, 1},
    {0x132, 0x136, 2, 1},
    {0x139, 0x147, 2, 1},
    {0x14A, 0x176, 2, 1},
    {0x178, 0x178, 1, -121},
    {0x179, 0x17D, 2, 1},
    {0x181, 0x181, 1, 210},
    {0x182, 0x184, 2, 1},
    {0x186, 0x186, 1, 206},
    {0x187, 0x187, 1, 1},
    {0x189, 0x18A, 1, 205},
    {0x18B, 0x18B, 1, 1},
    {0x18E, 0x18E, 1, 79},
    {0x18F, 0x18F, 1, 202},
    {0x190, 0x190, 1, 203},
    {0x191, 0x191, 1, 1},
    {0x193, 0x193, 1, 205},
    {0x194, 0x194, 1, 207},
    {0x196, 0x196, 1, 211},
    {0x197, 0x197, 1, 209},
    {0x198, 0x198, 1, 1},
    {0x19C, 0x19C, 1, 211},
    {0x19D, 0x19D, 1, 213},
    {0x19F, 0x19F, 1, 214},
    {0x1A0, 0x1A4, 2, 1},
    {0x1A6, 0x1A6, 1, 218},
    {0x1A7, 0x1A7, 1, 1},
    {0x1A9, 0x1A9, 1, 218},
    {0x1AC, 0x1AC, 1, 1},
    {0x1AE, 0x1AE, 1, 218},
    {0x1AF, 0x1AF, 1, 1},
    {0x1B1, 0x1B2, 1, 217},
    {0x1B3, 0x1B5, 2, 1},
    {0x1B7, 0x1B7, 1, 219},
    {0x1B8, 0x1B8, 1, 1},
    {0x1BC, 0x1BC, 1, 1},
    {0x1C4, 0x1C4, 1, 2},
    {0x1C5, 0x1C5, 1, 1},
    {0x1C7, 0x1C7, 1, 2},
    {0x1C8, 0x1C8, 1, 1},
    {0x1CA, 0x1CA, 1, 2},
    {0x1CB, 0x1DB, 2, 1},
    {0x1DE, 0x1EE, 2, 1},
    {0x1F1, 0x1F1, 1, 2},
    {0x1F2, 0x1F4, 2, 1},
    {0x1F6, 0x1F6, 1, -97},
    {0x1F7, 0x1F7, 1, -56},
    {0x1F8, 0x21E, 2, 1},
    {0x220, 0x220, 1, -130},
    {0x222, 0x232, 2, 1},
    {0x23A, 0x23A, 1, 10795},
    {0x23B, 0x23B, 1, 1},
    {0x23D, 0x23D, 1, -163},
    {0x23E, 0x23E, 1, 10792},
    {0x241, 0x241, 1, 1},
    {0x243, 0x243, 1, -195},
    {0x244, 0x244, 1, 69},
    {0x245, 0x245, 1, 71},
    {0x246, 0x24E, 2, 1},
    {0x370, 0x372, 2, 1},
    {0x376, 0x376, 1, 1},
    {0x37F, 0x37F, 1, 116},
    {0x386, 0x386, 1, 38},
    {0x388, 0x38A, 1, 37},
    {0x38C, 0x38C, 1, 64},
    {0x38E, 0x38F, 1, 63},
    {0x391, 0x3A1, 1, 32},
    {0x3A3, 0x3AB, 1, 32},
    {0x3CF, 0x3CF, 1, 8},
    {0x3D8, 0x3EE, 2, 1},
    {0x3F4, 0x3F4, 1, -60},
    {0x3F7, 0x3F7, 1, 1},
    {0x3F9, 0x3F9, 1, -7},
    {0x3FA, 0x3FA, 1, 1},
    {0x3FD, 0x3FF, 1, -130},
    {0x400, 0x40F, 1, 80},
    {0x410, 0x42F, 1, 32},
    {0x460, 0x480, 2, 1},
    {0x48A, 0x4BE, 2, 1},
    {0x4C0, 0x4C0, 1, 15},
    {0x4C1, 0x4CD, 2, 1},
    {0x4D0, 0x52E, 2, 1},
    {0x531, 0x556, 1, 48},
    {0x10A0, 0x10C5, 1, 7264},
    {0x10C7, 0x10C7, 1, 7264},
    {0x10CD, 0x10CD, 1, 7264},
    {0x13A0, 0x13EF, 1, 38864},
    {0x13F0, 0x13F5, 1, 8},
    {0x1C90, 0x1CBA, 1, -3008},
    {0x1CBD, 0x1CBF, 1, -3008},
    {0x1E00, 0x1E94, 2, 1},
    {0x1E9E, 0x1E9E, 1, -7615},
    {0x1EA0, 0x1EFE, 2, 1},
    {0x1F08, 0x1F0F, 1, -8},
    {0x1F18, 0x1F1D, 1, -8},
    {0x1F28, 0x1F2F, 1, -8},
    {0x1F38, 0x1F3F, 1, -8},
    {0x1F48, 0x1F4D, 1, -8},
    {0x1F59, 0x1F5F, 2, -8},
    {0x1F68, 0x1F6F, 1, -8},
    {0x1F88, 0x1F8F, 1, -8},
    {0x1F98, 0x1F9F, 1, -8},
    {0x1FA8, 0x1FAF, 1, -8},
    {0x1FB8, 0x1FB9, 1, -8},
    {0x1FBA, 0x1FBB, 1, -74},
    {0x1FBC, 0x1FBC, 1, -9},
    {0x1FC8, 0x1FCB, 1, -86},
    {0x1FCC, 0x1FCC, 1, -9},
    {0x1FD8, 0x1FD9, 1, -8},
    {0x1FDA, 0x1FDB, 1, -100},
    {0x1FE8, 0x1FE9, 1, -8},
    {0x1FEA, 0x1FEB, 1, -112},
    {0x1FEC, 0x1FEC, 1, -7},
    {0x1FF8, 0x1FF9, 1, -128},
    {0x1FFA, 0x1FFB, 1, -126},
    {0x1FFC, 0x1FFC, 1, -9},
    {0x2126, 0x2126, 1, -7517},
    {0x212A, 0x212A, 1, -8383},
    {0x212B, 0x212B, 1, -8262},
    {0x2132, 0x2132, 1, 28},
    {0x2160, 0x216F, 1, 16},
    {0x2183, 0x2183, 1, 1},
    {0x24B6, 0x24CF, 1, 26},
    {0x2C00, 0x2C2F, 1, 48},
    {0x2C60, 0x2C60, 1, 1},
    {0x2C62, 0x2C62, 1, -10743},
    {0x2C63, 0x2C63, 1, -3814},
    {0x2C64, 0x2C64, 1, -10727},
    {0x2C67, 0x2C6B, 2, 1},
    {0x2C6D, 0x2C6D, 1, -10780},
    {0x2C6E, 0x2C6E, 1, -10749},
    {0x2C6F, 0x2C6F, 1, -10783},
    {0x2C70, 0x2C70, 1, -10782},
    {0x2C72, 0x2C72, 1, 1},
    {0x2C75, 0x2C75, 1, 1},
    {0x2C7E, 0x2C7F, 1, -10815},
    {0x2C80, 0x2CE2, 2, 1},
    {0x2CEB, 0x2CED, 2, 1},
    {0x2CF2, 0x2CF2, 1, 1},
    {0xA640, 0xA66C, 2, 1},
    {0xA680, 0xA69A, 2, 1},
    {0xA722, 0xA72E, 2, 1},
    {0xA732, 0xA76E, 2, 1},
    {0xA779, 0xA77B, 2, 1},
    {0xA77D, 0xA77D, 1, -35332},
    {0xA77E, 0xA786, 2, 1},
    {0xA78B, 0xA78B, 1, 1},
    {0xA78D, 0xA78D, 1, -42280},
    {0xA790, 0xA792, 2, 1},
    {0xA796, 0xA7A8, 2, 1},
    {0xA7AA, 0xA7AA, 1, -42308},
    {0xA7AB, 0xA7AB, 1, -42319},
    {0xA7AC, 0xA7AC, 1, -42315},
    {0xA7AD, 0xA7AD, 1, -42305},
    {0xA7AE, 0xA7AE, 1, -42308},
    {0xA7B0, 0xA7B0, 1, -42258},
    {0xA7B1, 0xA7B1, 1, -42282},
    {0xA7B2, 0xA7B2, 1, -42261},
    {0xA7B3, 0xA7B3, 1, 928},
    {0xA7B4, 0xA7C2, 2, 1},
    {0xA7C4, 0xA7C4, 1, -48},
    {0xA7C5, 0xA7C5, 1, -42307},
    {0xA7C6, 0xA7C6, 1, -35384},
    {0xA7C7, 0xA7C9, 2, 1},
    {0xA7D0, 0xA7D0, 1, 1},
    {0xA7D6, 0xA7D8, 2, 1},
    {0xA7F5, 0xA7F5, 1, 1},
    {0xFF21, 0xFF3A, 1, 32},
    {0x10400, 0x10427, 1, 40},
    {0x104B0, 0x104D3, 1, 40},
    {0x10570, 0x1057A, 1, 39},
    {0x1057C, 0x1058A, 1, 39},
    {0x1058C, 0x10592, 1, 39},
    {0x10594, 0x10595, 1, 39},
    {0x10C80, 0x10CB2, 1, 64},
    {0x118A0, 0x118BF, 1, 32},
    {0x16E40, 0x16E5F, 1, 32},
    {0x1E900, 0x1E921, 1, 34}};

const Range* FindDecimalRange(uint32_t cp) {
  for (const Range& r : kDecimalRanges) {
    if (cp < r.lo) return nullptr;
    if (cp <= r.hi) return &r;
  }
  return nullptr;
}

// Digit value of an ASCII or Nd digit, or -1.
int DecimalValue(uint32_t cp) {
  if (cp >= '0' && cp <= '9') return static_cast<int>(cp - '0');
  if (cp < 0x80) return -1;
  const Range* r = FindDecimalRange(cp);
  return r ? static_cast<int>((cp - r->lo) % 10) : -1;
}

uint32_t LowerCodePoint(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  for (const LowerRun& r : kLowerRuns) {
    if (cp < r.first) return cp;
    if (cp <= r.last) {
      return (cp - r.first) % r.stride == 0 ? static_cast<uint32_t>(static_cast<int64_t>(cp) + r.delta) : cp;
    }
  }
  return cp;
}

}  // namespace

uint32_t NextCodePoint(std::string_view s, size_t* i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  size_t p = *i;
  uint8_t b0 = byte(p);
  if (b0 < 0x80) {
    *i = p + 1;
    return b0;
  }
  size_t len = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
  if (len == 0 || p + len > s.size()) {
    *i = p + 1;
    return b0;
  }
  uint32_t cp = b0 & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    uint8_t b = byte(p + k);
    if ((b & 0xC0) != 0x80) {
      *i = p + 1;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  *i = p + len;
  return cp;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsPyWhitespace(uint32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool IsPyDecimal(uint32_t cp) { return DecimalValue(cp) >= 0; }

std::string_view PyRstrip(std::string_view s) {
  // Walk forward remembering where the last non-whitespace code point ended
  // (UTF-8 cannot be decoded backwards safely when it may be invalid).
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = NextCodePoint(s, &i);
    if (!IsPyWhitespace(cp)) end = i;
  }
  return s.substr(0, end);
}

std::string_view PyStrip(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t next = i;
    if (!IsPyWhitespace(NextCodePoint(s, &next))) break;
    i = next;
  }
  return PyRstrip(s.substr(i));
}

std::string PyLower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    uint32_t cp = NextCodePoint(s, &i);
    if (cp < 0x80) {
      out.push_back(static_cast<char>(LowerCodePoint(cp)));
    } else if (cp == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE -> "i" + U+0307
      out.push_back('i');
      AppendUtf8(out, 0x307);
    } else if (i - start == 1) {  // an invalid byte: keep it
      out.push_back(s[start]);
    } else {
      AppendUtf8(out, LowerCodePoint(cp));
    }
  }
  return out;
}

std::vector<std::string_view> PySplitLines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t line_start = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t cp_start = i;
    uint32_t cp = NextCodePoint(s, &i);
    bool is_break = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x1C ||
                    cp == 0x1D || cp == 0x1E || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!is_break) continue;
    lines.push_back(s.substr(line_start, cp_start - line_start));
    if (cp == '\r' && i < s.size() && s[i] == '\n') ++i;
    line_start = i;
  }
  if (line_start < s.size()) lines.push_back(s.substr(line_start));
  return lines;
}

size_t CodePointCount(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) NextCodePoint(s, &i);
  return n;
}

std::string_view CodePointPrefix(std::string_view s, size_t n) {
  size_t i = 0;
  for (size_t k = 0; k < n && i < s.size(); ++k) NextCodePoint(s, &i);
  return s.substr(0, i);
}

std::string KeepPrintableAscii(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c >= 0x20 && c <= 0x7E) out.push_back(c);
  }
  return out;
}

namespace {

// Shared by int(x) and int(x, 16): strips, reads the sign and an optional
// 0x prefix, then digits with single underscores between them. Calls
// digit(value) for each digit; returns false when Python would raise.
template <typename OnDigit>
bool ScanPyInt(std::string_view text, int base, bool* negative, OnDigit on_digit) {
  std::string_view s = PyStrip(text);
  size_t i = 0;
  *negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    *negative = s[i] == '-';
    ++i;
  }
  bool prefixed = false;
  if (base == 16 && i + 1 < s.size() && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    i += 2;
    prefixed = true;
  }
  bool any = false;
  bool last_underscore = false;
  bool can_underscore = prefixed;  // "0x_1f" is valid, "_1f" and "1__0" are not
  while (i < s.size()) {
    if (s[i] == '_') {
      if (!can_underscore) return false;
      can_underscore = false;
      last_underscore = true;
      ++i;
      continue;
    }
    uint32_t cp = NextCodePoint(s, &i);
    int v = DecimalValue(cp);
    if (v < 0 && base == 16) {
      if (cp >= 'a' && cp <= 'f') v = static_cast<int>(cp - 'a' + 10);
      if (cp >= 'A' && cp <= 'F') v = static_cast<int>(cp - 'A' + 10);
    }
    if (v < 0) return false;
    on_digit(v);
    any = true;
    last_underscore = false;
    can_underscore = true;
  }
  return any && !last_underscore;
}

}  // namespace

std::optional<int64_t> PyIntFromText(std::string_view text) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t value = 0;
  bool saturated = false;
  bool negative = false;
  bool ok = ScanPyInt(text, 10, &negative, [&](int d) {
    if (saturated) return;
    if (value > (kMax - static_cast<uint64_t>(d)) / 10) {
      saturated = true;
      return;
    }
    value = value * 10 + static_cast<uint64_t>(d);
  });
  if (!ok) return std::nullopt;
  if (saturated) return negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  return negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
}

std::optional<std::string> PyHexNormalize(std::string_view text) {
  std::string digits;
  bool negative = false;
  bool ok = ScanPyInt(text, 16, &negative, [&](int d) {
    if (digits.empty() && d == 0) return;  // leading zero
    digits.push_back("0123456789abcdef"[d]);
  });
  if (!ok) return std::nullopt;
  if (digits.empty()) return std::string("0x0");
  return (negative ? "-0x" : "0x") + digits;
}

std::string PyFloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  bool negative = !sci.empty() && sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();

  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exponent - 1), '0');
      out += digits;
    } else {
      size_t int_len = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out += digits.substr(0, int_len);
        out += '.';
        out += digits.substr(int_len);
      }
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exponent < 0 ? "e-" : "e+";
    int a = exponent < 0 ? -exponent : exponent;
    if (a < 10) out += '0';
    out += std::to_string(a);
  }
  return out;
}

void AppendPyStrRepr(std::string& out, std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  out.push_back(quote);
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    uint32_t cp = NextCodePoint(s, &i);
    char buf[16];
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", cp);
      out += buf;
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  out.push_back(quote);
}

}  // namespace seismo::signature_internal
