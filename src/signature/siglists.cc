#include "seismo/signature/siglists.h"

#include <fstream>
#include <sstream>

#include "signature/embedded_siglists.h"
#include "signature/py_regex.h"
#include "signature/py_text.h"

namespace seismo {

using signature_internal::PyRegexSet;
using signature_internal::RegexEntry;

namespace {

constexpr std::string_view kIrrelevantFile = "irrelevant_signature_re.txt";
constexpr std::string_view kPrefixFile = "prefix_signature_re.txt";
constexpr std::string_view kSentinelsFile = "signature_sentinels.txt";
constexpr std::string_view kLineNumbersFile = "signatures_with_line_numbers_re.txt";

// Socorro's list format: strip each line, drop blanks and '#' comments.
std::vector<RegexEntry> ParseList(std::string_view text, const std::string& file) {
  std::vector<RegexEntry> entries;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    ++line_no;
    std::string_view line = signature_internal::PyStrip(text.substr(pos, nl - pos));
    if (!line.empty() && line[0] != '#') entries.push_back({std::string(line), file, line_no});
    pos = nl + 1;
  }
  return entries;
}

std::vector<RegexEntry> FromStrings(const std::vector<std::string>& items, const std::string& what) {
  std::vector<RegexEntry> entries;
  int i = 0;
  for (const std::string& s : items) entries.push_back({s, what, ++i});
  return entries;
}

Result<std::unique_ptr<PyRegexSet>> CompileList(const std::vector<RegexEntry>& entries) {
  Result<PyRegexSet> set = PyRegexSet::Compile(entries);
  if (!set) return set.error();
  return std::make_unique<PyRegexSet>(std::move(set).value());
}

}  // namespace

SigLists::SigLists() = default;
SigLists::~SigLists() = default;

Result<std::unique_ptr<SigLists>> SigLists::FromEntries(const std::vector<std::string>& irrelevant,
                                                        const std::vector<std::string>& prefix,
                                                        const std::vector<std::string>& sentinels,
                                                        const std::vector<std::string>& line_numbers) {
  std::unique_ptr<SigLists> lists(new SigLists());
  auto irr = CompileList(FromStrings(irrelevant, "irrelevant"));
  if (!irr) return irr.error();
  auto pre = CompileList(FromStrings(prefix, "prefix"));
  if (!pre) return pre.error();
  auto lin = CompileList(FromStrings(line_numbers, "line_numbers"));
  if (!lin) return lin.error();
  lists->irrelevant_ = std::move(irr).value();
  lists->prefix_ = std::move(pre).value();
  lists->line_numbers_ = std::move(lin).value();
  lists->sentinels_ = sentinels;
  lists->IndexSentinels();
  return lists;
}

Result<std::unique_ptr<SigLists>> SigLists::LoadDefault() {
  auto text_of = [](std::string_view name) {
    for (const auto& e : signature_internal::kEmbeddedSiglists) {
      if (e.file_name == name) return e.text;
    }
    return std::string_view();
  };
  std::unique_ptr<SigLists> lists(new SigLists());
  auto irr = CompileList(ParseList(text_of(kIrrelevantFile), std::string(kIrrelevantFile)));
  if (!irr) return irr.error();
  auto pre = CompileList(ParseList(text_of(kPrefixFile), std::string(kPrefixFile)));
  if (!pre) return pre.error();
  auto lin = CompileList(ParseList(text_of(kLineNumbersFile), std::string(kLineNumbersFile)));
  if (!lin) return lin.error();
  lists->irrelevant_ = std::move(irr).value();
  lists->prefix_ = std::move(pre).value();
  lists->line_numbers_ = std::move(lin).value();
  for (RegexEntry& e : ParseList(text_of(kSentinelsFile), std::string(kSentinelsFile))) {
    lists->sentinels_.push_back(std::move(e.pattern));
  }
  lists->IndexSentinels();
  return lists;
}

Result<std::unique_ptr<SigLists>> SigLists::LoadFromDir(const std::string& dir) {
  auto read = [&](std::string_view name, std::string& path, std::string& text) -> Status {
    path = dir + "/" + std::string(name);
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::NotFound(path + ": cannot open signature list");
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    return Status::Ok();
  };
  std::unique_ptr<SigLists> lists(new SigLists());
  std::string path, text;
  Status s = read(kIrrelevantFile, path, text);
  if (!s.ok()) return s;
  auto irr = CompileList(ParseList(text, path));
  if (!irr) return irr.error();
  s = read(kPrefixFile, path, text);
  if (!s.ok()) return s;
  auto pre = CompileList(ParseList(text, path));
  if (!pre) return pre.error();
  s = read(kLineNumbersFile, path, text);
  if (!s.ok()) return s;
  auto lin = CompileList(ParseList(text, path));
  if (!lin) return lin.error();
  s = read(kSentinelsFile, path, text);
  if (!s.ok()) return s;
  lists->irrelevant_ = std::move(irr).value();
  lists->prefix_ = std::move(pre).value();
  lists->line_numbers_ = std::move(lin).value();
  for (RegexEntry& e : ParseList(text, path)) lists->sentinels_.push_back(std::move(e.pattern));
  lists->IndexSentinels();
  return lists;
}

void SigLists::IndexSentinels() {
  sentinel_set_.clear();
  sentinel_lengths_.clear();
  for (const std::string& s : sentinels_) {
    sentinel_set_.insert(s);
    if (sentinel_lengths_.size() <= s.size()) sentinel_lengths_.resize(s.size() + 1, false);
    sentinel_lengths_[s.size()] = true;
  }
}

bool SigLists::IsIrrelevant(std::string_view frame) const { return irrelevant_->Matches(frame); }
bool SigLists::IsPrefix(std::string_view frame) const { return prefix_->Matches(frame); }
bool SigLists::WantsLineNumber(std::string_view function) const { return line_numbers_->Matches(function); }

}  // namespace seismo
