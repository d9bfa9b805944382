#include "seismo/signature/scrub.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "signature/embedded_siglists.h"

namespace seismo {
namespace {

constexpr uint32_t kCompileOptions = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
constexpr uint32_t kSubstituteOptions =
    PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_EXTENDED | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH;

std::string Pcre2Message(int code) {
  PCRE2_UCHAR buf[256];
  int n = pcre2_get_error_message(code, buf, sizeof(buf));
  if (n < 0) return fmt::format("PCRE2 error {}", code);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// How common a byte is in stack frames: letters and digits everywhere, C++ and
// JS punctuation often, the rest ('@', '/', '\') seldom.
int Commonness(unsigned char c) {
  if (std::isalnum(c)) return 2;
  return std::string_view(" _:.,()<>[]*&-").find(static_cast<char>(c)) != std::string_view::npos ? 1 : 0;
}

unsigned char RarestByte(std::string_view literal) {
  unsigned char best = static_cast<unsigned char>(literal.front());
  for (char c : literal) {
    if (Commonness(static_cast<unsigned char>(c)) < Commonness(best)) best = static_cast<unsigned char>(c);
  }
  return best;
}

// Whether `text` holds `lit`: memchr for its key byte (seldom in frames), then a compare,
// instead of std::string::find's memchr for its first byte (':' of "://" is in every "::").
bool Contains(std::string_view text, const Scrubber::Literal& lit) {
  const size_t before = lit.key_at, after = lit.text.size() - lit.key_at;
  for (size_t from = before; from < text.size();) {
    const void* hit = std::memchr(text.data() + from, lit.text[lit.key_at], text.size() - from);
    if (hit == nullptr) return false;
    const size_t at = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    if (at + after <= text.size() && text.compare(at - before, lit.text.size(), lit.text) == 0) return true;
    from = at + 1;
  }
  return false;
}

struct CodeDeleter {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};
// A compiled pattern of a rule or a guard, owned.
using Compiled = std::unique_ptr<pcre2_code, CodeDeleter>;

// `pattern` compiled (and JIT-compiled: an optimisation, the interpreter gives the same
// answers), or null with PCRE2's error code and offset.
Compiled Compile(std::string_view pattern, int& err, PCRE2_SIZE& offset) {
  Compiled code(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), kCompileOptions,
                              &err, &offset, nullptr));
  if (code != nullptr) (void)pcre2_jit_compile(code.get(), PCRE2_JIT_COMPLETE);
  return code;
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

// One match-data block per thread, for every rule (each has fewer than 16 groups).
pcre2_match_data* ThreadMatchData() {
  thread_local std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(pcre2_match_data_create(16, nullptr));
  return data.get();
}

}  // namespace

struct Scrubber::Rule {
  std::string name;
  std::vector<size_t> when;  // indices into literals_
  int guard = -1;            // index into guards_, or none
  std::string replace;
  Compiled code;
};

struct Scrubber::Guard {
  std::string pattern;
  Compiled code;
};

Scrubber::Scrubber() = default;
Scrubber::~Scrubber() = default;

size_t Scrubber::rule_count() const { return rules_.size(); }

const Scrubber& Scrubber::Default() {
  static const Scrubber* rules = [] {
    auto parsed = Parse(signature_internal::kEmbeddedScrubRules, "config/scrub/rules.txt");
    if (!parsed) {  // the embedded file is tested; this is a build that broke it
      fmt::print(stderr, "seismo: {}\n", parsed.error().message());
      std::abort();
    }
    return parsed->release();  // lives for the process
  }();
  return *rules;
}

Result<std::unique_ptr<Scrubber>> Scrubber::Parse(std::string_view text, std::string_view file_name) {
  std::unique_ptr<Scrubber> s(new Scrubber());
  std::string pattern;
  size_t rule_line = 0;
  auto fail = [&](size_t line, std::string_view problem) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", file_name, line, problem));
  };
  // Compiles the rule being read (if any) once its last line is known.
  auto finish = [&]() -> Status {
    if (s->rules_.empty() || s->rules_.back().code != nullptr) return Status::Ok();
    Rule& r = s->rules_.back();
    if (r.when.empty() || pattern.empty()) {
      return fail(rule_line, fmt::format("rule {} needs `when` and `match` lines", r.name));
    }
    int err = 0;
    PCRE2_SIZE offset = 0;
    r.code = Compile(pattern, err, offset);
    if (r.code == nullptr) {
      return fail(rule_line, fmt::format("rule {}: the pattern does not compile: {} at offset {}", r.name,
                                         Pcre2Message(err), offset));
    }
    uint32_t groups = 0;
    pcre2_pattern_info(r.code.get(), PCRE2_INFO_CAPTURECOUNT, &groups);
    if (groups >= 16) return fail(rule_line, fmt::format("rule {}: more than 15 groups", r.name));
    pattern.clear();
    return Status::Ok();
  };
  bool has_replace = false;
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = Trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const size_t space = line.find_first_of(" \t");
    const std::string_view keyword = line.substr(0, space);
    const std::string_view value = space == std::string_view::npos ? "" : Trim(line.substr(space));
    if (keyword == "rule") {
      if (!s->rules_.empty() && !has_replace) {
        return fail(rule_line, fmt::format("rule {} needs a `replace` line", s->rules_.back().name));
      }
      if (Status st = finish(); !st.ok()) return st;
      if (value.empty()) return fail(line_no, "a rule needs a name");
      if (std::any_of(s->rules_.begin(), s->rules_.end(),
                      [&value](const Rule& o) { return o.name == value; })) {
        return fail(line_no, fmt::format("a second rule named {}", value));
      }
      s->rules_.emplace_back();
      s->rules_.back().name = std::string(value);
      rule_line = line_no;
      has_replace = false;
      continue;
    }
    if (s->rules_.empty()) return fail(line_no, fmt::format("`{}` before the first `rule`", keyword));
    Rule& r = s->rules_.back();
    if (keyword == "when" && !value.empty()) {
      const unsigned char key = RarestByte(value);
      if (Commonness(key) > 0) {
        return fail(line_no,
                    fmt::format("`when {}`: a literal needs a byte seldom in frames (such as / @ \\): "
                                "every frame holding its commonest byte would be searched",
                                value));
      }
      auto known = std::find_if(s->literals_.begin(), s->literals_.end(),
                                [&](const Literal& l) { return l.text == value; });
      if (known == s->literals_.end()) {
        if (s->literals_.size() == kMaxLiterals) return fail(line_no, "too many distinct `when` literals");
        s->literals_.push_back({std::string(value), value.find(static_cast<char>(key))});
        known = s->literals_.end() - 1;
      }
      r.when.push_back(static_cast<size_t>(known - s->literals_.begin()));
      if (!s->key_bytes_[key]) s->key_words_.push_back(0x0101010101010101 * key);
      s->key_bytes_[key] = true;
    } else if (keyword == "guard" && !value.empty() && r.guard < 0) {
      auto known = std::find_if(s->guards_.begin(), s->guards_.end(),
                                [&](const Guard& g) { return g.pattern == value; });
      if (known == s->guards_.end()) {
        if (s->guards_.size() == kMaxGuards) return fail(line_no, "too many distinct `guard` patterns");
        int err = 0;
        PCRE2_SIZE offset = 0;
        Guard g{std::string(value), Compile(value, err, offset)};
        if (g.code == nullptr) {
          return fail(line_no, fmt::format("rule {}: the guard does not compile: {} at offset {}", r.name,
                                           Pcre2Message(err), offset));
        }
        s->guards_.push_back(std::move(g));
        known = s->guards_.end() - 1;
      }
      r.guard = static_cast<int>(known - s->guards_.begin());
    } else if (keyword == "guard-like" && !value.empty() && r.guard < 0) {
      const auto earlier = s->rules_.end() - 1;
      const auto named =
          std::find_if(s->rules_.begin(), earlier, [&value](const Rule& o) { return o.name == value; });
      if (named == earlier || named->guard < 0) {
        return fail(line_no, fmt::format("rule {}: `guard-like {}` names no earlier rule with a guard",
                                         r.name, value));
      }
      r.guard = named->guard;
    } else if (keyword == "match" && !value.empty() && pattern.empty()) {
      pattern = std::string(value);
    } else if (keyword == "replace" && !has_replace) {
      r.replace = std::string(value);
      has_replace = true;
    } else {
      return fail(line_no,
                  fmt::format("expected `when <literal>`, one `guard <pattern>` or `guard-like <rule>`, "
                              "one `match <pattern>` or one `replace <text>`, not '{}'",
                              line));
    }
  }
  if (!s->rules_.empty() && !has_replace) {
    return fail(rule_line, fmt::format("rule {} needs a `replace` line", s->rules_.back().name));
  }
  if (Status st = finish(); !st.ok()) return st;
  // What pads a text shorter than a word: a byte no rule looks for (at most 32 of 256 are).
  for (unsigned b = 0; b < 256; ++b) {
    if (!s->key_bytes_[b]) {
      s->filler_word_ = 0x0101010101010101 * b;
      break;
    }
  }
  return s;
}

bool Scrubber::ScrubMatches(std::string& text) const {
  bool changed = false;
  pcre2_match_data* md = ThreadMatchData();
  // Whether `text` holds literal i: 0 not known yet, 1 yes, -1 no (several rules share one).
  // A replacement never brings in a literal its text did not hold (rules.txt keeps it so), so
  // a "no" stays true after later rules ran; a "yes" that went stale only costs one match.
  std::array<int8_t, kMaxLiterals> holds{};
  auto has = [&](size_t i) {
    if (holds[i] == 0) holds[i] = Contains(text, literals_[i]) ? 1 : -1;
    return holds[i] > 0;
  };
  // Whether guard i matches the text as it is now: 0 not known yet, 1 yes, -1 no; forgotten
  // when a rule changes the text.
  std::array<int8_t, kMaxGuards> guarded{};
  auto passes = [&](int i) {
    if (guarded[i] == 0) {
      const int rc = pcre2_match(guards_[i].code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()),
                                 text.size(), 0, 0, md, nullptr);
      // A guard that cannot say (a match limit) lets its rules look.
      guarded[i] = rc == PCRE2_ERROR_NOMATCH ? -1 : 1;
    }
    return guarded[i] > 0;
  };
  for (const Rule& r : rules_) {
    if (std::none_of(r.when.begin(), r.when.end(), has)) continue;
    if (r.guard >= 0 && !passes(r.guard)) continue;
    // Most text a rule looks at holds nothing to replace (chrome:// frames, addresses without
    // a domain): one match, no copy.
    int rc =
        pcre2_match(r.code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) continue;
    PCRE2_SIZE size = text.size() + 64;
    std::string out;
    for (int attempt = 0; rc >= 0 && attempt < 2; ++attempt) {
      out.resize(size);
      rc = pcre2_substitute(r.code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0,
                            kSubstituteOptions, md, nullptr, reinterpret_cast<PCRE2_SPTR>(r.replace.data()),
                            r.replace.size(), reinterpret_cast<PCRE2_UCHAR*>(out.data()), &size);
      if (rc != PCRE2_ERROR_NOMEMORY || attempt > 0) break;
      rc = 0;  // `size` is now what it needs: again
    }
    if (rc < 0) {
      // Not checked (a match limit, say): nothing of it may leave the process.
      text = "<" + r.name + " unchecked>";
      return true;
    }
    out.resize(size);
    if (out != text) {  // a placeholder may be matched again, and replaced by itself
      text.swap(out);
      changed = true;
      guarded.fill(0);
    }
  }
  return changed;
}

}  // namespace seismo
