#include "signature/py_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cctype>

namespace seismo::signature_internal {
namespace {

constexpr uint32_t kCompileOptions =
    PCRE2_ANCHORED | PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;

std::string Pcre2Message(int code) {
  PCRE2_UCHAR buf[256];
  int n = pcre2_get_error_message(code, buf, sizeof(buf));
  if (n < 0) return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

// One match-data block per thread, shared by every pattern (only the overall
// match is ever asked for, so one ovector pair is enough).
pcre2_match_data* ThreadMatchData() {
  thread_local std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(
      pcre2_match_data_create(1, nullptr));
  return data.get();
}

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

struct PyRegexSet::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

std::string TranslatePythonRegex(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 8);
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char n = p[i + 1];
      if (n == 'Z') {  // Python \Z is the very end: PCRE2 \z
        out += "\\z";
        ++i;
        continue;
      }
      size_t width = n == 'u' ? 4 : n == 'U' ? 8 : 0;
      if (width > 0 && i + 1 + width < p.size() + 1 && i + 2 + width <= p.size()) {
        std::string_view hex = p.substr(i + 2, width);
        bool ok = true;
        for (char h : hex) ok = ok && IsHex(h);
        if (ok) {
          out += "\\x{";
          out += hex;
          out += '}';
          i += 1 + width;
          continue;
        }
      }
      out += c;
      out += n;
      ++i;
      continue;
    }
    if (c == '{' && i + 1 < p.size() && p[i + 1] == ',') {
      // Python reads {,n} as {0,n}; PCRE2 10.42 reads it as literal text.
      size_t j = i + 2;
      while (j < p.size() && std::isdigit(static_cast<unsigned char>(p[j]))) ++j;
      if (j > i + 2 && j < p.size() && p[j] == '}') {
        out += "{0";
        continue;  // the ',' and digits follow unchanged
      }
    }
    out += c;
  }
  return out;
}

std::optional<std::string> LiteralOf(std::string_view p) {
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return std::nullopt;
      char n = p[i + 1];
      if (std::isalnum(static_cast<unsigned char>(n)) || static_cast<unsigned char>(n) >= 0x80) {
        return std::nullopt;
      }
      out += n;
      ++i;
      continue;
    }
    if (std::string_view(".^$*+?{}[]|()").find(c) != std::string_view::npos) return std::nullopt;
    out += c;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

PyRegexSet::PyRegexSet() = default;
PyRegexSet::PyRegexSet(PyRegexSet&&) noexcept = default;
PyRegexSet& PyRegexSet::operator=(PyRegexSet&&) noexcept = default;
PyRegexSet::~PyRegexSet() = default;

Result<PyRegexSet> PyRegexSet::Compile(const std::vector<RegexEntry>& entries) {
  PyRegexSet set;
  std::string joined;
  for (const RegexEntry& e : entries) {
    // Every entry must compile on its own, as Socorro's loader checks.
    std::string translated = TranslatePythonRegex(e.pattern);
    int err = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* one = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                    kCompileOptions, &err, &offset, nullptr);
    if (one == nullptr) {
      return Status::InvalidArgument(e.file + ":" + std::to_string(e.line) + ": regex '" + e.pattern +
                                     "' does not compile: " + Pcre2Message(err) + " at offset " +
                                     std::to_string(offset));
    }
    pcre2_code_free(one);
    if (std::optional<std::string> lit = LiteralOf(e.pattern)) {
      set.literals_[static_cast<unsigned char>((*lit)[0])].push_back(std::move(*lit));
      ++set.literal_count_;
      continue;
    }
    if (!joined.empty()) joined += '|';
    joined += "(?:";
    joined += translated;
    joined += ')';
  }
  if (joined.empty()) return set;
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(joined.data()), joined.size(),
                                   kCompileOptions, &err, &offset, nullptr);
  if (code == nullptr) {
    std::string where = entries.empty() ? std::string("(list)") : entries.front().file;
    return Status::InvalidArgument(where + ": the joined list does not compile: " + Pcre2Message(err));
  }
  // JIT is an optimisation: without it (unsupported CPU, no memory) the
  // interpreter gives the same answers.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  set.code_ = std::make_unique<Code>();
  set.code_->code = code;
  return set;
}

bool PyRegexSet::Matches(std::string_view s) const {
  if (!s.empty() && literal_count_ > 0) {
    for (const std::string& lit : literals_[static_cast<unsigned char>(s[0])]) {
      if (s.size() >= lit.size() && s.compare(0, lit.size(), lit) == 0) return true;
    }
  }
  if (code_ == nullptr) return false;
  pcre2_match_data* md = ThreadMatchData();
  auto subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  int rc = pcre2_match(code_->code, subject, s.size(), 0, 0, md, nullptr);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    rc = pcre2_match(code_->code, subject, s.size(), 0, PCRE2_NO_JIT, md, nullptr);
  }
  return rc >= 0;
}

}  // namespace seismo::signature_internal
