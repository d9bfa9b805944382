// Python 3 string semantics that Socorro's signature code relies on, for UTF-8
// text: str.strip/rstrip/isspace, str.lower, str.splitlines, re's \d, int(),
// int(x, 16), float repr, and code-point lengths. Internal to the signature
// stage. Invalid UTF-8 bytes count as one code point each and are kept as is.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seismo::signature_internal {

// Decodes the code point starting at s[*i] and advances *i (invalid byte -> that byte).
uint32_t NextCodePoint(std::string_view s, size_t* i);
void AppendUtf8(std::string& out, uint32_t cp);

bool IsPyWhitespace(uint32_t cp);  // str.isspace()
bool IsPyDecimal(uint32_t cp);     // re's \d on str patterns (category Nd)

std::string_view PyStrip(std::string_view s);
std::string_view PyRstrip(std::string_view s);
std::string PyLower(std::string_view s);
std::vector<std::string_view> PySplitLines(std::string_view s);

size_t CodePointCount(std::string_view s);
// The first n code points of s (all of s when it has fewer).
std::string_view CodePointPrefix(std::string_view s, size_t n);

// Keeps only the characters U+0020..U+007E (Socorro's drop_bad_characters).
std::string KeepPrintableAscii(std::string_view s);

// Python int(text): surrounding whitespace, sign, decimal digits (any Nd
// digits), single underscores between digits. Values beyond int64 saturate.
std::optional<int64_t> PyIntFromText(std::string_view text);

// hex(int(text, 16)) — "0x" prefix optional — or nullopt when int() would
// raise. Arbitrary length: the digits are never converted to a machine integer.
std::optional<std::string> PyHexNormalize(std::string_view text);

// Python repr()/str() of a float: "1.0", "0.1", "1e+16", "inf", "nan".
std::string PyFloatRepr(double v);

// Appends Python's repr() of a str: single quotes unless the text has ' and no ";
// \\, \n, \r, \t and \xNN escapes for the quote, backslash and non-printable code points.
void AppendPyStrRepr(std::string& out, std::string_view s);

// Python str.endswith / startswith / in, spelled out for readability.
inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
inline bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
inline bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace seismo::signature_internal
