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
//   when <literal>      the rule looks only at text holding this literal (one or more lines)
//   match <pattern>     PCRE2, unanchored; every match is replaced
//   replace <text>      PCRE2 extended substitution: $1, ${1:+a:b} (group set ? a : b)
//
// Keywords may be indented; the value is the rest of the line, trimmed; blank
// lines and lines starting with '#' are ignored. Text holding none of the
// rules' literals is passed over by one scan for their key bytes, so frames
// with nothing to scrub (nearly all) cost little.
//
// Ownership: Default() lives for the process; Parse() returns the owner.
// Threading: Scrub() is const and may run on any number of threads at once.
#pragma once

#include <array>
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
  bool Scrub(std::string& text) const;

  size_t rule_count() const;

 private:
  struct Rule;
  Scrubber();

  std::vector<Rule> rules_;
  std::array<bool, 256> key_bytes_{};  // one byte of each `when` literal (its rarest)
};

}  // namespace seismo
