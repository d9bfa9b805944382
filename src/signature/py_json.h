// A small JSON reader with Python's json.loads behaviour, for the one place
// the signature generator parses JSON itself: the AsyncShutdownTimeout
// annotation (JSON text inside a string). It accepts what json.loads accepts
// (NaN/Infinity, big integers, duplicate keys with the last value winning) and
// renders values with Python's str(). simdjson stays in the parse stage.
// Internal. Threading: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seismo::signature_internal {

struct PyJson {
  enum class Kind { kNull, kBool, kInt, kFloat, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;  // kString: the value; kInt/kFloat: Python str() of the number
  std::vector<PyJson> items;
  // Object members in insertion order, keys unique (parallel vectors: a
  // std::pair would need PyJson complete here).
  std::vector<std::string> keys;
  std::vector<PyJson> values;

  const PyJson* Find(std::string_view key) const;
};

enum class PyJsonError { kNone, kSyntax, kTooDeep };

// json.loads(text): the value, or why it failed (kSyntax = ValueError,
// kTooDeep = RecursionError).
std::optional<PyJson> PyJsonLoads(std::string_view text, PyJsonError* error);

// str(value) as Python prints the decoded value ("True", "None", "[1, 'a']").
std::string PyJsonStr(const PyJson& v);

}  // namespace seismo::signature_internal
