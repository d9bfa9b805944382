#include "signature/java_signature.h"

#include <initializer_list>
#include <string_view>

#include "signature/normalize.h"
#include "signature/py_text.h"

namespace seismo::signature_internal {
namespace {

constexpr std::string_view kBadTrace = "EMPTY: Java stack trace not in expected format";
constexpr size_t kDescriptionMaxLength = 255;

std::string JoinNonEmpty(std::string_view delimiter, std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += delimiter;
    out += p;
  }
  return out;
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// `@[0-9a-f]{8}` -> `@<addr>`, left to right without overlap.
std::string KillHexAddresses(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '@' && i + 9 <= s.size()) {
      bool hex = true;
      for (size_t k = i + 1; k < i + 9; ++k) hex = hex && IsLowerHex(s[k]);
      if (hex) {
        out += "@<addr>";
        i += 9;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// `\.java\:\d+\)$` -> `.java)` (lines are stripped, so `$` is the end).
std::string KillLineNumber(std::string_view s) {
  size_t at = s.rfind(".java:");
  if (at == std::string_view::npos || s.empty() || s.back() != ')') return std::string(s);
  size_t i = at + 6;
  size_t digits = 0;
  while (i < s.size() - 1) {
    size_t next = i;
    if (!IsPyDecimal(NextCodePoint(s, &next))) break;
    i = next;
    ++digits;
  }
  if (digits == 0 || i != s.size() - 1) return std::string(s);
  return std::string(s.substr(0, at)) + ".java)";
}

}  // namespace

JavaResult JavaStackTraceSignature(const PyValue& trace) {
  JavaResult r;
  if (!trace.is_str()) {
    r.signature = kBadTrace;
    r.notes.push_back("JavaSignatureTool: stack trace not in expected format");
    return r;
  }
  std::vector<std::string_view> lines = PySplitLines(trace.text);
  if (lines.empty()) {
    r.signature = kBadTrace;
    r.notes.push_back("JavaSignatureTool: stack trace not in expected format");
    return r;
  }
  for (std::string_view& l : lines) l = PyStrip(l);

  std::string exception_class;
  std::string description;
  size_t colon = lines[0].find(':');
  if (colon == std::string_view::npos) {
    exception_class = std::string(lines[0]);
    r.notes.push_back("JavaSignatureTool: stack trace line 1 is not in the expected format");
  } else {
    exception_class = std::string(PyStrip(lines[0].substr(0, colon)));
    description = std::string(PyStrip(KillHexAddresses(lines[0].substr(colon + 1))));
  }
  std::string method;
  if (lines.size() > 1) {
    method = KillLineNumber(lines[1]);
    if (method.empty()) r.notes.push_back("JavaSignatureTool: stack trace line 2 is empty");
  } else {
    r.notes.push_back("JavaSignatureTool: stack trace line 2 is missing");
  }

  if (EndsWith(description, "<addr>")) {
    r.signature = JoinNonEmpty(": ", {exception_class, description, method});
  } else {
    std::string phrase = JoinNonEmpty(" ", {description, method});
    r.signature = JoinNonEmpty(": ", {exception_class, phrase});
  }
  if (CodePointCount(r.signature) > kDescriptionMaxLength) {
    r.signature = exception_class + ": " + method;
    r.notes.push_back("JavaSignatureTool: dropped Java exception description due to length");
  }
  return r;
}

PyOr<JavaResult> JavaExceptionSignature(const JavaException& e) {
  JavaResult r;
  if (!e.well_formed) {
    r.signature = "EMPTY: Java exception not in expected format";
    r.notes.push_back("JavaExceptionSignatureTool: java_exception not in expected format");
    return r;
  }
  std::string type = e.has_type ? std::string(PyStr(e.type)) : "Unknown";
  bool type_truthy = e.has_type ? e.type.truthy : true;
  std::string exception_class =
      (e.module.truthy && type_truthy) ? std::string(PyStr(e.module)) + "." + type : type;
  if (!e.has_frame) {
    r.signature = exception_class;
    return r;
  }
  if (!e.frame_is_dict) return PyError::Type("a java_exception frame is not an object");
  std::string frame;
  if (e.frame_module.truthy && e.frame_function.truthy) {
    frame = std::string(PyStr(e.frame_module)) + "." + std::string(PyStr(e.frame_function));
  } else if (e.frame_module.truthy) {
    frame = PyStr(e.frame_module);
  } else if (e.frame_function.truthy) {
    frame = PyStr(e.frame_function);
  }
  if (e.frame_filename.truthy) frame += "(" + std::string(PyStr(e.frame_filename)) + ")";
  if (frame.empty()) frame = "unknown";
  r.signature = exception_class + ": at " + frame;
  return r;
}

}  // namespace seismo::signature_internal
