// PyRegexSet: a list of Python regular expressions matched like Socorro does,
// `re.match("|".join(entries), s)`: true when some entry matches at the start
// of s (not anchored at the end). Case-sensitive; \d, \w, \s are Unicode as in
// Python 3.
//
// Entries that are plain literals (after escapes such as `\.`) are checked by
// a first-byte bucketed prefix test; the others are translated to PCRE2 syntax
// (\Z -> \z, \uXXXX -> \x{XXXX}, {,n} -> {0,n}) and compiled once into one
// anchored, JIT-compiled alternation.
//
// Ownership: move-only, owns the PCRE2 code. Threading: Matches() is safe to
// call concurrently (match data is per thread); construction is not.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/core/status.h"

namespace seismo::signature_internal {

// One list entry and where it came from (for error messages).
struct RegexEntry {
  std::string pattern;
  std::string file;
  int line = 0;
};

class PyRegexSet {
 public:
  // Fails (InvalidArgument naming file and line) when an entry does not compile.
  static Result<PyRegexSet> Compile(const std::vector<RegexEntry>& entries);

  PyRegexSet(PyRegexSet&&) noexcept;
  PyRegexSet& operator=(PyRegexSet&&) noexcept;
  ~PyRegexSet();

  bool Matches(std::string_view s) const;
  bool empty() const { return literal_count_ == 0 && code_ == nullptr; }

 private:
  struct Code;
  PyRegexSet();

  // Literal entries, bucketed by their first byte.
  std::array<std::vector<std::string>, 256> literals_;
  size_t literal_count_ = 0;
  std::unique_ptr<Code> code_;  // the non-literal entries, or null
};

// Translates Python `re` syntax to PCRE2 syntax (exposed for tests).
std::string TranslatePythonRegex(std::string_view pattern);

// The literal text of a pattern without metacharacters (`a\.b` -> "a.b"), or
// nullopt when it needs a regex engine (exposed for tests).
std::optional<std::string> LiteralOf(std::string_view pattern);

}  // namespace seismo::signature_internal
