#include "signature/normalize.h"

#include <cctype>
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
// then puts a space after every comma that lacks one (`,(?! )`).
std::string FixupSpacesAndCommas(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 4);
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ' && i + 1 < s.size() && (s[i + 1] == '*' || s[i + 1] == '&' || s[i + 1] == ',')) continue;
    out.push_back(c);
  }
  if (out.find(',') == std::string::npos) return out;
  std::string spaced;
  spaced.reserve(out.size() + 8);
  for (size_t i = 0; i < out.size(); ++i) {
    spaced.push_back(out[i]);
    if (out[i] == ',' && (i + 1 >= out.size() || out[i + 1] != ' ')) spaced.push_back(' ');
  }
  return spaced;
}

bool HasByte(std::string_view s, char c) { return s.find(c) != std::string_view::npos; }

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
  size_t colons = 0;
  for (char c : file) colons += c == ':';
  if (colons == 3) {
    size_t a = file.find(':');
    size_t b = file.find(':', a + 1);
    size_t c = file.find(':', b + 1);
    *found = true;
    return file.substr(b + 1, c - b - 1);
  }
  if (colons == 1) {
    *found = true;
    return file.substr(file.find(':') + 1);
  }
  if (file[0] == '/') {
    *found = true;
    return file;
  }
  return {};
}

bool DropPrefixAndReturnType(std::string_view f, std::string_view* out) {
  // Token i spans [starts[i], ends[i]); tokens are separated by one top-level
  // space each, so merging the last two is the contiguous source text.
  std::vector<size_t> starts;
  std::vector<size_t> ends;
  std::string levels;  // open brackets, innermost last
  size_t current_start = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    switch (c) {
      case '(': case '{': case '[': case '<': case '`':
        levels.push_back(c);
        continue;
      case ')': case '}': case ']': case '>': case '\'': {
        if (!levels.empty()) {
          char o = levels.back();
          char want = o == '(' ? ')' : o == '{' ? '}' : o == '[' ? ']' : o == '<' ? '>' : '\'';
          if (want == c) levels.pop_back();
        }
        continue;
      }
      case ' ':
        if (levels.empty()) {
          starts.push_back(current_start);
          ends.push_back(i);
          current_start = i + 1;
        }
        continue;
      default:
        continue;
    }
  }
  if (current_start < f.size()) {
    starts.push_back(current_start);
    ends.push_back(f.size());
  }
  if (starts.empty()) return false;  // tokens[-1] on an empty list: IndexError
  size_t last = starts.size() - 1;
  size_t first = last;
  while (first > 0) {
    std::string_view tok = f.substr(starts[first], ends[first] - starts[first]);
    if (!(StartsWith(tok, "(") || StartsWith(tok, "[clone"))) break;
    --first;
  }
  *out = f.substr(starts[first], ends[last] - starts[first]);
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
  if (!HasByte(s, '(')) return std::string(s);
  return ReplaceEnclosedSlices(s, '(', ')', [](std::string_view before, std::string_view inside, std::string& out) {
    if (inside == "(anonymous namespace)" || EndsWith(before, "operator")) out.append(inside);
  });
}

PyOr<std::string> NormalizeCppFunction(std::string function, const PyValue& line, const SigLists& lists) {
  // 1. Trailing cv/ref qualifiers: plain suffix tests, each on the result so far.
  for (std::string_view q : {"const", "const&", "const &", "&&", "&"}) {
    if (EndsWith(function, q)) {
      function = std::string(PyStrip(std::string_view(function).substr(0, function.size() - q.size())));
    }
  }
  // 2. Prefix and return type, unless this is an operator.
  if (!Contains(function, "::operator")) {
    std::string_view kept;
    if (!DropPrefixAndReturnType(function, &kept)) return PyError::Lookup("list index out of range");
    if (kept.size() != function.size()) function = std::string(kept);
  }
  // 3.-4. `anonymous namespace' and lambda numbers.
  if (Contains(function, "`anonymous namespace'")) {
    function = ReplaceAll(function, "`anonymous namespace'", "(anonymous namespace)");
  }
  if (Contains(function, "::$_")) function = CollapseLambdaNumbers(function);
  // 5.-7. Template arguments, call arguments, PGO cold-block labels.
  function = CollapseTypesCpp(function);
  function = CollapseArgumentsCpp(function);
  if (Contains(function, "clone .cold")) {
    function = ReplaceEnclosedSlices(function, '[', ']', [](std::string_view, std::string_view, std::string&) {});
  }
  // 8. Line numbers for the listed functions.
  if (lists.WantsLineNumber(function)) {
    function += ':';
    function += PyStr(line);
  }
  // 9.-10. Spaces before * & , and after commas.
  return FixupSpacesAndCommas(function);
}

std::string NormalizeRustFunction(std::string function, const PyValue& line, const SigLists& lists) {
  std::string_view kept;
  if (DropPrefixAndReturnType(function, &kept) && kept.size() != function.size()) function = std::string(kept);
  function = CollapseTypesRust(function);
  if (HasByte(function, '(')) {
    function = ReplaceEnclosedSlices(function, '(', ')', [](std::string_view, std::string_view, std::string&) {});
  }
  if (lists.WantsLineNumber(function)) {
    function += ':';
    function += PyStr(line);
  }
  function = FixupSpacesAndCommas(function);
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
      bool found = false;
      std::string_view path = ParseSourceFile(file.text, &found);
      if (found && EndsWith(path, ".rs")) return NormalizeRustFunction(function.text, line, lists);
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
