#include "signature/normalize.h"

#include <array>
#include <cctype>
#include <cstring>
#include <vector>

#include "signature/py_text.h"

namespace seismo::signature_internal {
namespace {

// find_enclosed_slices + replace_enclosed_slices (reference §4.7): `replace`
// gets the text since the previous slice and the slice itself (brackets
// included); an opener left unclosed extends its slice to the end.
template <typename Replace>
std::string ReplaceEnclosedSlices(std::string_view s, char open, char close, Replace replace) {
  std::string out;
  out.reserve(s.size());
  size_t previous_end = 0;
  size_t start = 0;
  int depth = 0;
  auto emit = [&](size_t end) {
    std::string_view before = s.substr(previous_end, start - previous_end);
    out.append(before);
    replace(before, s.substr(start, end - start), out);
    previous_end = end;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == open) {
      if (depth == 0) start = i;
      ++depth;
    } else if (c == close && depth > 0) {
      if (--depth == 0) emit(i + 1);
    }
  }
  if (depth > 0) emit(s.size());
  out.append(s.substr(previous_end));
  return out;
}

// Removes every space directly followed by '*', '&' or ',' (` (?=[\*&,])`),
// then puts a space after every comma that lacks one (`,(?! )`). In place;
// allocates only when a comma needs a space.
void FixupSpacesAndCommas(std::string& s) {
  bool any = false;
  for (char c : s) any |= (c == ',') | (c == '*') | (c == '&');
  if (!any) return;
  size_t w = 0;
  bool comma_without_space = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ' && i + 1 < s.size() && (s[i + 1] == '*' || s[i + 1] == '&' || s[i + 1] == ',')) continue;
    s[w++] = c;
  }
  s.resize(w);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ',' && (i + 1 >= s.size() || s[i + 1] != ' ')) {
      comma_without_space = true;
      break;
    }
  }
  if (!comma_without_space) return;
  std::string spaced;
  spaced.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size(); ++i) {
    spaced.push_back(s[i]);
    if (s[i] == ',' && (i + 1 >= s.size() || s[i + 1] != ' ')) spaced.push_back(' ');
  }
  s.swap(spaced);
}

bool HasByte(std::string_view s, char c) { return s.find(c) != std::string_view::npos; }

// Shrinks s to `part`, a view into s, without allocating.
void KeepOnly(std::string& s, std::string_view part) {
  if (part.size() == s.size()) return;
  size_t begin = static_cast<size_t>(part.data() - s.data());
  size_t size = part.size();
  s.erase(begin + size);
  s.erase(0, begin);
}

// `"::operator" in s` (glibc memmem: C++ names are full of "::", which makes
// a first-character search slow).
bool ContainsScopedOperator(std::string_view s) {
  constexpr std::string_view kNeedle = "::operator";
  return ::memmem(s.data(), s.size(), kNeedle.data(), kNeedle.size()) != nullptr;
}

// `::\$_\d+::` -> `::$::`, scanning left to right without overlap like re.sub.
std::string CollapseLambdaNumbers(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, 4, "::$_") == 0) {
      size_t j = i + 4;
      size_t digits = 0;
      while (j < s.size()) {
        size_t next = j;
        if (!IsPyDecimal(NextCodePoint(s, &next))) break;
        j = next;
        ++digits;
      }
      if (digits > 0 && s.compare(j, 2, "::") == 0) {
        out += "::$::";
        i = j + 2;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t hit = s.find(from); hit != std::string_view::npos; hit = s.find(from, pos)) {
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

// Removes a trailing `::h<hex>` (Python `::h[0-9a-fA-F]+$`, where `$` also
// matches just before a final newline).
void RemoveRustHash(std::string& s) {
  size_t stop = (!s.empty() && s.back() == '\n') ? s.size() - 1 : s.size();
  size_t at = std::string_view(s).substr(0, stop).rfind("::h");
  if (at == std::string::npos || at + 3 >= stop) return;
  for (size_t k = at + 3; k < stop; ++k) {
    if (!std::isxdigit(static_cast<unsigned char>(s[k]))) return;
  }
  s.erase(at, stop - at);
}

}  // namespace

std::string_view ParseSourceFile(std::string_view file, bool* found) {
  *found = false;
  if (file.empty()) return {};
  // One pass: the positions of the first three colons and whether there are more.
  size_t colon[3] = {0, 0, 0};
  size_t colons = 0;
  for (size_t i = 0; i < file.size(); ++i) {
    if (file[i] != ':') continue;
    if (colons < 3) colon[colons] = i;
    if (++colons > 3) break;
  }
  if (colons == 3) {  // vcs:host/repo:path:revision
    *found = true;
    return file.substr(colon[1] + 1, colon[2] - colon[1] - 1);
  }
  if (colons == 1) {  // c:\path
    *found = true;
    return file.substr(colon[0] + 1);
  }
  if (file[0] == '/') {
    *found = true;
    return file;
  }
  return {};
}

bool DropPrefixAndReturnType(std::string_view f, std::string_view* out) {
  // Tokens are the text between top-level spaces (the trailing empty token is
  // dropped), so merging the last two is the contiguous source text between
  // them: only the positions of top-level spaces are needed. Most names have
  // few, so they live in a small inline buffer.
  constexpr size_t kInline = 32;
  std::array<size_t, kInline> inline_spaces;
  std::vector<size_t> more_spaces;
  size_t space_count = 0;
  auto add_space = [&](size_t pos) {
    if (space_count < kInline) {
      inline_spaces[space_count] = pos;
    } else {
      if (more_spaces.empty()) more_spaces.assign(inline_spaces.begin(), inline_spaces.end());
      more_spaces.push_back(pos);
    }
    ++space_count;
  };
  auto space_at = [&](size_t i) { return space_count <= kInline ? inline_spaces[i] : more_spaces[i]; };

  std::string levels;  // open brackets, innermost last (SSO covers typical depth)
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    switch (c) {
      case '(': case '{': case '[': case '<': case '`':
        levels.push_back(c);
        break;
      case ')': case '}': case ']': case '>': case '\'': {
        if (!levels.empty()) {
          char o = levels.back();
          char want = o == '(' ? ')' : o == '{' ? '}' : o == '[' ? ']' : o == '<' ? '>' : '\'';
          if (want == c) levels.pop_back();
        }
        break;
      }
      case ' ':
        if (levels.empty()) add_space(i);
        break;
      default:
        break;
    }
  }
  // Token k spans (space k-1, space k); the last one ends at the string's end
  // unless the string ends with a top-level space (that empty token is dropped).
  size_t token_count = space_count + 1;
  size_t end = f.size();
  if (space_count > 0 && space_at(space_count - 1) == f.size() - 1) {
    token_count = space_count;
    end = f.size() - 1;
  }
  if (f.empty()) return false;  // no tokens at all: tokens[-1] raises IndexError
  auto token_start = [&](size_t k) { return k == 0 ? 0 : space_at(k - 1) + 1; };
  size_t first = token_count - 1;
  while (first > 0) {
    size_t start = token_start(first);
    size_t stop = first + 1 < token_count ? space_at(first) : end;
    std::string_view tok = f.substr(start, stop - start);
    if (!(StartsWith(tok, "(") || StartsWith(tok, "[clone"))) break;
    --first;
  }
  *out = f.substr(token_start(first), end - token_start(first));
  return true;
}

std::string CollapseTypesCpp(std::string_view s) {
  if (!HasByte(s, '<')) return std::string(s);
  return ReplaceEnclosedSlices(s, '<', '>', [](std::string_view before, std::string_view inside, std::string& out) {
    if (inside == "<name omitted>" || Contains(inside, " as ") || Contains(inside, " in ") ||
        EndsWith(before, "operator")) {
      out.append(inside);
    } else if (EndsWith(before, "IPC::ParamTraits")) {
      std::string_view inner = inside.size() >= 2 ? inside.substr(1, inside.size() - 2) : std::string_view();
      out.push_back('<');
      out.append(CollapseTypesCpp(inner));
      out.push_back('>');
    } else {
      out.append("<T>");
    }
  });
}

std::string CollapseTypesRust(std::string_view s) {
  if (!HasByte(s, '<')) return std::string(s);
  return ReplaceEnclosedSlices(s, '<', '>', [](std::string_view, std::string_view inside, std::string& out) {
    out.append(Contains(inside, " as ") ? inside : std::string_view("<T>"));
  });
}

std::string CollapseArgumentsCpp(std::string_view s) {
  std::string out(s);
  CollapseArgumentsCppInPlace(out);
  return out;
}

void CollapseArgumentsCppInPlace(std::string& s) {
  // Same as ReplaceEnclosedSlices with "keep or drop": the output never gets
  // longer, so it is compacted in place (w <= the read position).
  size_t w = 0;
  size_t previous_end = 0;
  size_t start = 0;
  int depth = 0;
  auto emit = [&](size_t end) {
    size_t before_len = start - previous_end;
    std::string_view before(s.data() + previous_end, before_len);
    std::string_view inside(s.data() + start, end - start);
    bool keep = inside == "(anonymous namespace)" || EndsWith(before, "operator");
    std::memmove(&s[w], s.data() + previous_end, before_len);
    w += before_len;
    if (keep) {
      std::memmove(&s[w], s.data() + start, end - start);
      w += end - start;
    }
    previous_end = end;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(') {
      if (depth == 0) start = i;
      ++depth;
    } else if (c == ')' && depth > 0) {
      if (--depth == 0) emit(i + 1);
    }
  }
  if (depth > 0) emit(s.size());
  size_t rest = s.size() - previous_end;
  std::memmove(&s[w], s.data() + previous_end, rest);
  s.resize(w + rest);
}

PyOr<std::string> NormalizeCppFunction(std::string function, const PyValue& line, const SigLists& lists) {
  // 1. Trailing cv/ref qualifiers: plain suffix tests, each on the result so far.
  if (!function.empty() && (function.back() == 't' || function.back() == '&')) {
    for (std::string_view q : {"const", "const&", "const &", "&&", "&"}) {
      if (EndsWith(function, q)) {
        function = std::string(PyStrip(std::string_view(function).substr(0, function.size() - q.size())));
      }
    }
  }
  // 2. Prefix and return type, unless this is an operator.
  if (!ContainsScopedOperator(function)) {
    std::string_view kept;
    if (!DropPrefixAndReturnType(function, &kept)) return PyError::Lookup("list index out of range");
    KeepOnly(function, kept);
  }
  // 3.-4. `anonymous namespace' and lambda numbers (rare: gate on one byte).
  if (HasByte(function, '`') && Contains(function, "`anonymous namespace'")) {
    function = ReplaceAll(function, "`anonymous namespace'", "(anonymous namespace)");
  }
  if (HasByte(function, '$') && Contains(function, "::$_")) function = CollapseLambdaNumbers(function);
  // 5.-7. Template arguments, call arguments, PGO cold-block labels.
  if (HasByte(function, '<')) function = CollapseTypesCpp(function);
  if (HasByte(function, '(')) CollapseArgumentsCppInPlace(function);
  if (HasByte(function, '[') && Contains(function, "clone .cold")) {
    function = ReplaceEnclosedSlices(function, '[', ']', [](std::string_view, std::string_view, std::string&) {});
  }
  // 8. Line numbers for the listed functions.
  if (lists.WantsLineNumber(function)) {
    function += ':';
    function += PyStr(line);
  }
  // 9.-10. Spaces before * & , and after commas.
  FixupSpacesAndCommas(function);
  return function;
}

std::string NormalizeRustFunction(std::string function, const PyValue& line, const SigLists& lists) {
  std::string_view kept;
  if (DropPrefixAndReturnType(function, &kept)) KeepOnly(function, kept);
  if (HasByte(function, '<')) function = CollapseTypesRust(function);
  if (HasByte(function, '(')) {
    function = ReplaceEnclosedSlices(function, '(', ')', [](std::string_view, std::string_view, std::string&) {});
  }
  if (lists.WantsLineNumber(function)) {
    function += ':';
    function += PyStr(line);
  }
  FixupSpacesAndCommas(function);
  RemoveRustHash(function);
  return function;
}

PyOr<std::string> NormalizeFrame(const FrameFields& f, const SigLists& lists) {
  const PyValue& function = *f.function;
  const PyValue& file = *f.file;
  const PyValue& line = *f.line;
  if (function.truthy) {
    if (!function.is_str()) return PyError::Type("'" + function.text + "' is not a str (function)");
    if (file.truthy) {
      if (!file.is_str()) return PyError::Type("'file' is not a str");
      if (f.rust_file) return NormalizeRustFunction(function.text, line, lists);
    }
    return NormalizeCppFunction(function.text, line, lists);
  }
  if (file.truthy && line.truthy) {
    if (!file.is_str()) return PyError::Type("'file' is not a str");
    std::string_view name = file.text;
    while (!name.empty() && (name.back() == '/' || name.back() == '\\')) name.remove_suffix(1);
    size_t cut = HasByte(name, '\\') ? name.rfind('\\') : name.rfind('/');
    if (cut != std::string_view::npos) name = name.substr(cut + 1);
    std::string out(name);
    out += '#';
    out += PyStr(line);
    return out;
  }
  const PyValue& module = *f.module;
  if (module.truthy) {
    if (!module.is_str()) return PyError::Type("'module' is not a str");
    std::string_view m = module.text;
    while (!m.empty() && (m.front() == '[' || m.front() == ']')) m.remove_prefix(1);
    while (!m.empty() && (m.back() == '[' || m.back() == ']')) m.remove_suffix(1);
    return std::string(m);
  }
  if (f.unloaded != nullptr && f.unloaded->unloaded_modules_value.truthy) {
    const Frame& fr = *f.unloaded;
    if (fr.unloaded_modules_shape == Shape::kBadLookup) return PyError::Lookup("0");
    if (fr.unloaded_modules_shape != Shape::kList || fr.unloaded_modules.empty()) {
      return PyError::Type("unloaded_modules is not a list");
    }
    const UnloadedModule& first = fr.unloaded_modules.front();
    if (!first.is_dict) return PyError::Type("unloaded module entry is not a dict");
    std::string out = "(unloaded ";
    out += PyStr(first.module);
    out += ')';
    return out;
  }
  const PyValue& offset = *f.offset;
  if (offset.truthy) {
    std::string out = "@";
    std::optional<std::string> hex = offset.is_str() ? PyHexNormalize(offset.text) : std::nullopt;
    out += hex ? *hex : offset.text;
    return out;
  }
  return std::string();
}

}  // namespace seismo::signature_internal
