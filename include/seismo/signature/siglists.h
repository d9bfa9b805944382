// SigLists: Socorro's four signature lists, loaded and compiled once.
//
//   signature_sentinels.txt            exact frame strings; the first one found
//                                      cuts the top of the stack
//   irrelevant_signature_re.txt        a matching frame is skipped
//   prefix_signature_re.txt            a matching frame is kept, the walk goes on
//   signatures_with_line_numbers_re.txt  a matching function gets ":<line>"
//
// File format (Socorro's siglists_utils): UTF-8, one entry per line, each line
// stripped, blank lines and lines starting with '#' ignored. Regex entries use
// Python `re` syntax and are matched like re.match (anchored at the start
// only); every entry must compile, else loading fails naming file and line.
//
// Ownership: created once at start-up, then shared read-only (usually owned by
// a SignatureGenerator). Threading: every const method is safe to call
// concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "seismo/core/status.h"

namespace seismo {

namespace signature_internal {
class PyRegexSet;
}

class SigLists {
 public:
  // The lists embedded in the binary at build time (config/siglists/).
  static Result<std::unique_ptr<SigLists>> LoadDefault();
  // The four files from `dir` at run time. Missing file -> NotFound; an entry
  // that does not compile -> InvalidArgument "<path>:<line>: ...".
  static Result<std::unique_ptr<SigLists>> LoadFromDir(const std::string& dir);
  // Entries given directly (tests, and Socorro's custom-list test cases).
  static Result<std::unique_ptr<SigLists>> FromEntries(const std::vector<std::string>& irrelevant,
                                                       const std::vector<std::string>& prefix,
                                                       const std::vector<std::string>& sentinels,
                                                       const std::vector<std::string>& line_numbers);

  ~SigLists();
  SigLists(const SigLists&) = delete;
  SigLists& operator=(const SigLists&) = delete;

  bool IsIrrelevant(std::string_view frame) const;
  bool IsPrefix(std::string_view frame) const;
  bool WantsLineNumber(std::string_view function) const;
  // Sentinels in file order.
  const std::vector<std::string>& sentinels() const { return sentinels_; }
  bool IsSentinel(std::string_view frame) const {
    // Most frames differ in length from every sentinel: skip the hash then.
    return frame.size() < sentinel_lengths_.size() && sentinel_lengths_[frame.size()] &&
           sentinel_set_.contains(frame);
  }

 private:
  SigLists();

  std::unique_ptr<signature_internal::PyRegexSet> irrelevant_;
  std::unique_ptr<signature_internal::PyRegexSet> prefix_;
  std::unique_ptr<signature_internal::PyRegexSet> line_numbers_;
  std::vector<std::string> sentinels_;
  std::unordered_set<std::string_view> sentinel_set_;  // views into sentinels_
  std::vector<bool> sentinel_lengths_;                  // [n]: some sentinel has length n

  void IndexSentinels();
};

}  // namespace seismo
