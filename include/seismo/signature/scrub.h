// Scrubber: what must never reach an answer (SPEC §6.3, §7) taken out of the
// frames and signatures of documents before anything is aggregated — URLs (the
// scheme and a class of host are kept, the rest dropped), e-mail addresses and
// the user names in home-directory paths — each replaced in place by a
// placeholder, so the frame keeps its shape:
//
//   f (https://bank.example.com/account?session=SECRET123:42)  ->  f (https://<host>/<path>:42)
//   alice@example.com                                           ->  <email>
//   C:\Users\alice\AppData\Local\foo.dll                        ->  C:\Users\<user>\AppData\Local\foo.dll
//
// The rules are data: config/scrub/rules.txt, embedded in the binary at build
// time (cmake/EmbedSiglists.cmake); tests/data/scrub/cases.txt holds their cases.
// Rules file format, one rule after the other, run in file order, each on the
// result of the ones before it:
//
//   rule <name>
//   when <literal>      the rule looks only at text holding this literal (one or more lines);
//                       it must hold a byte seldom in frames (not a letter, digit, space or
//                       one of _:.,()<>[]*&-), such as '/', '@' or a backslash
//   guard <pattern>     optional, PCRE2: the rule looks only at text this matches too. A
//                       guard must match every text the rule's pattern matches (a necessary
//                       condition, cheaper to test: tests/unit/signature/scrub_test.cc checks
//                       the rules give the same answers without their guards); rules with
//                       the same guard share one search of each text
//   guard-like <rule>   optional, instead of `guard`: the guard of the earlier rule named
//   match <pattern>     PCRE2, unanchored; every match is replaced
//   replace <text>      PCRE2 extended substitution: $1, ${1:+a:b} (group set ? a : b)
//
// Keywords may be indented; the value is the rest of the line, trimmed; blank
// lines and lines starting with '#' are ignored. Text holding none of the
// literals' seldom bytes is passed over after one scan, so frames with nothing
// to scrub (nearly all) cost little.
//
// Ownership: Default() lives for the process; Parse() returns the owner.
// Threading: Scrub() is const and may run on any number of threads at once.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/core/status.h"

namespace seismo {

class Scrubber {
 public:
  // The rules embedded at build time, compiled on first use.
  static const Scrubber& Default();
  // Rules from `text`; kInvalidArgument "<file_name>:<line>: <problem>" for a line
  // that is not a keyword, a rule without `when`, `match` or `replace`, or a
  // pattern that does not compile.
  static Result<std::unique_ptr<Scrubber>> Parse(std::string_view text, std::string_view file_name);

  ~Scrubber();
  Scrubber(const Scrubber&) = delete;
  Scrubber& operator=(const Scrubber&) = delete;

  // Replaces whatever the rules match in `text`; true when something changed.
  bool Scrub(std::string& text) const { return HoldsKeyByte(text) && ScrubMatches(text); }
  // False when Scrub() would certainly leave `text` as it is (it holds no byte any rule looks
  // for: nearly every frame), without copying it.
  bool MayChange(std::string_view text) const { return HoldsKeyByte(text); }
  // The bytes MayChange looks for (one of each `when` literal, its rarest), each repeated
  // eight times: for a check of its own over wider vectors (parse/scrub_document.h).
  const std::vector<uint64_t>& key_words() const { return key_words_; }

  size_t rule_count() const;

  // A `when` literal and where in it its key byte is.
  struct Literal {
    std::string text;
    size_t key_at = 0;
  };
  static constexpr size_t kMaxLiterals = 32;  // distinct `when` literals
  static constexpr size_t kMaxGuards = 8;     // distinct `guard` patterns

 private:
  struct Rule;
  struct Guard;
  Scrubber();

  // Whether `text` holds one of key_bytes_: the pre-check every frame goes through (inline:
  // most frames hold none), eight bytes at a time — a byte of `v` equals k's exactly where
  // `v ^ k` has a zero byte. The last word overlaps the one before it, and a text shorter
  // than a word is padded with filler_word_'s byte (no key byte): no byte-wise tail.
  bool HoldsKeyByte(std::string_view text) const {
    const size_t n = text.size();
    if (n < 8) {
      if (n == 0) return false;
      uint64_t v = filler_word_;
      std::memcpy(&v, text.data(), n);
      return WordHoldsKeyByte(v);
    }
    uint64_t v;
    for (size_t i = 0; i + 8 <= n; i += 8) {
      std::memcpy(&v, text.data() + i, 8);
      if (WordHoldsKeyByte(v)) return true;
    }
    if (n % 8 == 0) return false;
    std::memcpy(&v, text.data() + n - 8, 8);
    return WordHoldsKeyByte(v);
  }
  bool WordHoldsKeyByte(uint64_t v) const {
    constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
    for (uint64_t k : key_words_) {
      if ((((v ^ k) - kOnes) & ~(v ^ k) & kHighs) != 0) return true;
    }
    return false;
  }
  // The rules, one after the other, on text that holds a key byte.
  bool ScrubMatches(std::string& text) const;

  std::vector<Rule> rules_;
  std::vector<Literal> literals_;      // every distinct `when` literal
  std::vector<Guard> guards_;          // every distinct `guard` pattern
  std::array<bool, 256> key_bytes_{};  // one byte of each `when` literal (its rarest)
  std::vector<uint64_t> key_words_;    // each key byte repeated eight times
  uint64_t filler_word_ = 0;           // a byte of no key, repeated eight times
};

}  // namespace seismo
