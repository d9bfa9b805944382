#include "signature/rules.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "signature/c_signature.h"
#include "signature/java_signature.h"
#include "signature/normalize.h"
#include "signature/py_json.h"
#include "signature/py_text.h"

namespace seismo::signature_internal {
namespace {

using Kind = PyValue::Kind;

constexpr size_t kSignatureMaxLength = 255;
constexpr int64_t kSmallOomBytes = 262144;  // 256 KiB

void Note(RuleState& s, std::string_view rule, std::string_view text) {
  std::string n(rule);
  n += ": ";
  n += text;
  s.notes.push_back(std::move(n));
}

// Python int(v); nullopt-with-flag semantics: `type_error` when int() raises
// TypeError, nullopt without it when it raises ValueError.
std::optional<int64_t> PyInt(const PyValue& v, bool* type_error) {
  *type_error = false;
  switch (v.kind) {
    case Kind::kInt:
    case Kind::kStr:
      return PyIntFromText(v.text);
    case Kind::kBool:
      return v.truthy ? 1 : 0;
    case Kind::kFloat: {
      double d = std::strtod(v.text.c_str(), nullptr);
      if (!std::isfinite(d)) return std::nullopt;
      if (d >= 9.2e18) return INT64_MAX;
      if (d <= -9.2e18) return INT64_MIN;
      return static_cast<int64_t>(std::trunc(d));
    }
    default:
      *type_error = true;
      return std::nullopt;
  }
}

// Rule 1 for a given crashing thread (also re-run by the RunWatchdog rule).
std::optional<PyError> GenerateStackSignature(const CrashData& cd, const SigLists& lists, RuleState& s,
                                              int64_t crashing_thread) {
  constexpr std::string_view kName = "SignatureGenerationRule";
  if (cd.java_stack_trace.truthy) {
    JavaResult j = JavaStackTraceSignature(cd.java_stack_trace);
    for (const std::string& n : j.notes) Note(s, kName, n);
    s.signature = std::move(j.signature);
    return std::nullopt;
  }
  if (cd.java_exception.value.truthy) {
    PyOr<JavaResult> j = JavaExceptionSignature(cd.java_exception);
    if (!j.ok()) return j.error();
    for (const std::string& n : j.value().notes) Note(s, kName, n);
    s.signature = std::move(j.value().signature);
    return std::nullopt;
  }

  std::vector<std::string> frames;
  if (const Thread* thread = SelectThread(cd, crashing_thread)) {
    if (!thread->is_dict) return PyError::Type("the crashing thread is not an object");
    PyOr<std::vector<std::string>> list = CreateFrameList(*thread, cd.os.is_str() && cd.os.text == "Windows NT", lists);
    if (list.ok()) {
      frames = std::move(list.value());
    } else if (list.error().lookup) {
      Note(s, kName, "No crashing frames found because of " + list.error().message);
    } else {
      return list.error();
    }
  }
  WalkResult walk = WalkFrames(frames, crashing_thread, lists);
  if (!frames.empty()) {
    std::string proto;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (i > 0) proto += " | ";
      proto += frames[i];
    }
    s.proto_signature = std::move(proto);
  }
  for (const std::string& n : walk.notes) Note(s, kName, n);
  if (!walk.signature.empty()) s.signature = std::move(walk.signature);
  return std::nullopt;
}

std::optional<PyError> SignatureGenerationRule(const CrashData& cd, const SigLists& lists, RuleState& s) {
  return GenerateStackSignature(cd, lists, s, CrashingThreadIndex(cd.crashing_thread));
}

std::optional<PyError> StackwalkerErrorSignatureRule(const CrashData& cd, const SigLists&, RuleState& s) {
  if (StartsWith(s.signature, "EMPTY") && cd.mdsw_status_string.truthy) {
    s.signature += "; ";
    s.signature += cd.mdsw_status_string.text;
  }
  return std::nullopt;
}

std::optional<PyError> BadHardware(const CrashData& cd, const SigLists&, RuleState& s) {
  if (cd.reason.is_str() && Contains(cd.reason.text, "STATUS_DEVICE_DATA_ERROR")) {
    s.signature = "bad hardware | " + s.signature;
  }
  return std::nullopt;
}

bool IsOom(const CrashData& cd, const std::string& signature) {
  if (cd.oom_allocation_size.truthy) return true;
  if (signature.empty()) return false;
  for (std::string_view fragment : {"NS_ABORT_OOM", "mozalloc_handle_oom", "CrashAtUnhandlableOOM",
                                    "AutoEnterOOMUnsafeRegion", "alloc::oom::oom"}) {
    if (Contains(signature, fragment)) return true;
  }
  if (const Thread* t = SelectThread(cd, CrashingThreadIndex(cd.crashing_thread))) {
    const PyValue& lev = t->last_error_value;
    if (t->is_dict && lev.is_str() &&
        (lev.text == "ERROR_COMMITMENT_LIMIT" || lev.text == "ERROR_NOT_ENOUGH_MEMORY")) {
      return true;
    }
  }
  if (cd.reason.is_str() && (cd.reason.text == "STATUS_FATAL_MEMORY_EXHAUSTION" || cd.reason.text == "STATUS_NO_MEMORY")) {
    return true;
  }
  return cd.js_large_allocation_failure.is_str() && cd.js_large_allocation_failure.text == "Reporting";
}

std::optional<PyError> OOMSignature(const CrashData& cd, const SigLists&, RuleState& s) {
  if (!IsOom(cd, s.signature)) return std::nullopt;
  if (cd.js_large_allocation_failure.is_str() && cd.js_large_allocation_failure.text == "Reporting") {
    s.signature = "OOM | large | " + s.signature;
    return std::nullopt;
  }
  bool type_error = false;
  std::optional<int64_t> size = PyInt(cd.oom_allocation_size, &type_error);
  if (type_error) {
    s.signature = "OOM | unknown | " + s.signature;
  } else if (!size) {
    return PyError::Type("invalid literal for int() with base 10: '" + cd.oom_allocation_size.text + "'");
  } else if (*size <= kSmallOomBytes) {
    s.signature = "OOM | small";
  } else {
    s.signature = "OOM | large | " + s.signature;
  }
  return std::nullopt;
}

std::optional<PyError> AbortSignature(const CrashData& cd, const SigLists&, RuleState& s) {
  const PyValue& v = cd.abort_message;
  if (!v.truthy) return std::nullopt;
  if (!v.is_str()) return PyError::Type("abort_message is not a str");
  std::string_view m = v.text;
  if (Contains(m, "###!!! ABORT: file ")) {
    s.signature = "Abort | " + s.signature;
    return std::nullopt;
  }
  if (size_t at = m.find("###!!! ABORT:"); at != std::string_view::npos) m = m.substr(at + 13);
  if (size_t at = m.find(": file "); at != std::string_view::npos) m = m.substr(0, at);
  std::string message(m);
  if (Contains(message, "unable to find a usable font")) {
    size_t open = message.find('(');
    size_t close = message.rfind(')');
    if (open != std::string::npos && close != std::string::npos) {
      // Python: m[:open] + m[close + 1:] (even when close < open).
      message = message.substr(0, open) + message.substr(close + 1);
    }
  }
  message = std::string(PyStrip(KeepPrintableAscii(message)));
  if (message.size() > 80) message = message.substr(0, 77) + "...";
  s.signature = "Abort | " + message + " | " + s.signature;
  return std::nullopt;
}

std::optional<PyError> SignatureShutdownTimeout(const CrashData& cd, const SigLists&, RuleState& s) {
  constexpr std::string_view kName = "SignatureShutdownTimeout";
  const PyValue& v = cd.async_shutdown_timeout;
  if (!v.truthy) return std::nullopt;
  if (!v.is_str()) return PyError::Type("the JSON object must be str, bytes or bytearray");
  std::string parts = "AsyncShutdownTimeout";
  PyJsonError err = PyJsonError::kNone;
  std::optional<PyJson> data = PyJsonLoads(v.text, &err);
  if (err == PyJsonError::kTooDeep) return PyError::Type("maximum recursion depth exceeded");
  if (!data) {
    parts += " | UNKNOWN";
    Note(s, kName, "Error parsing AsyncShutdownTimeout: invalid JSON");
  } else {
    if (data->kind != PyJson::Kind::kObject) return PyError::Type("AsyncShutdownTimeout JSON is not an object");
    const PyJson* phase = data->Find("phase");
    parts += " | ";
    parts += (phase != nullptr && phase->kind == PyJson::Kind::kString) ? phase->text : "(unknown)";
    std::vector<std::string> conditions;
    bool missing_name = false;
    if (const PyJson* c = data->Find("conditions")) {
      switch (c->kind) {
        case PyJson::Kind::kNull:
          break;
        case PyJson::Kind::kArray:
          for (const PyJson& item : c->items) {
            if (item.kind == PyJson::Kind::kObject) {
              const PyJson* name = item.Find("name");
              if (name == nullptr) {
                missing_name = true;
                break;
              }
              conditions.push_back(PyJsonStr(*name));
            } else {
              conditions.push_back(PyJsonStr(item));
            }
          }
          break;
        case PyJson::Kind::kString:  // iterating a str yields its characters
          for (size_t i = 0; i < c->text.size();) {
            size_t start = i;
            NextCodePoint(c->text, &i);
            conditions.push_back(c->text.substr(start, i - start));
          }
          break;
        case PyJson::Kind::kObject:  // iterating a dict yields its keys
          conditions = c->keys;
          break;
        default:
          return PyError::Type("'conditions' is not iterable");
      }
    }
    if (missing_name) {
      parts += " | UNKNOWN";
      Note(s, kName, "Error parsing AsyncShutdownTimeout: 'name'");
    } else if (conditions.empty()) {
      parts += " | (none)";
    } else {
      std::sort(conditions.begin(), conditions.end());  // UTF-8 byte order = code-point order
      parts += " | ";
      for (size_t i = 0; i < conditions.size(); ++i) {
        if (i > 0) parts += ',';
        parts += conditions[i];
      }
    }
  }
  Note(s, kName, "Signature replaced with a Shutdown Timeout signature, was: \"" + s.signature + "\"");
  s.signature = std::move(parts);
  return std::nullopt;
}

std::optional<PyError> SignatureRunWatchDog(const CrashData& cd, const SigLists& lists, RuleState& s) {
  if (!Contains(s.signature, "RunWatchdog")) return std::nullopt;
  RuleState rerun = s;
  if (std::optional<PyError> e = GenerateStackSignature(cd, lists, rerun, 0)) return e;
  s = std::move(rerun);
  s.signature = "shutdownhang | " + s.signature;
  return std::nullopt;
}

std::optional<PyError> SignatureIPCChannelError(const CrashData& cd, const SigLists&, RuleState& s) {
  const PyValue& v = cd.ipc_channel_error;
  if (!v.truthy) return std::nullopt;
  if (!v.is_str()) return PyError::Type("ipc_channel_error is not a str");
  const MinidumpNames& dumps = cd.additional_minidumps;
  if (dumps.bad) return PyError::Type("additional_minidumps is not iterable");
  constexpr std::string_view kBrowser = "upload_file_minidump_browser";
  bool browser = dumps.is_text ? (!dumps.names.empty() && Contains(dumps.names[0], kBrowser))
                               : std::find(dumps.names.begin(), dumps.names.end(), kBrowser) != dumps.names.end();
  s.signature = std::string(browser ? "IPCError-browser | " : "IPCError-content | ") +
                std::string(CodePointPrefix(v.text, 100));
  Note(s, "SignatureIPCChannelError", "IPC Channel Error stomped on signature");
  return std::nullopt;
}

std::optional<PyError> SignatureIPCMessageName(const CrashData& cd, const SigLists&, RuleState& s) {
  if (cd.ipc_message_name.truthy) s.signature += " | IPC_Message_Name=" + cd.ipc_message_name.text;
  return std::nullopt;
}

std::optional<PyError> StackOverflowSignature(const CrashData& cd, const SigLists&, RuleState& s) {
  if (cd.reason.is_str() && cd.reason.text == "EXCEPTION_STACK_OVERFLOW") {
    s.signature = "stackoverflow | " + s.signature;
  }
  return std::nullopt;
}

std::optional<PyError> HungProcess(const CrashData& cd, const SigLists&, RuleState& s) {
  if (!cd.hang.is_none()) s.signature = "hang: " + cd.hang.text + " | " + s.signature;
  return std::nullopt;
}

std::optional<PyError> SigPrintableCharsOnly(const CrashData&, const SigLists&, RuleState& s) {
  std::string cleaned = KeepPrintableAscii(PyStrip(s.signature));
  if (cleaned != s.signature) {
    s.signature = std::move(cleaned);
    Note(s, "SigPrintableCharsOnly", "unprintable characters removed");
  }
  return std::nullopt;
}

std::optional<PyError> SigFixWhitespace(const CrashData&, const SigLists&, RuleState& s) {
  std::string_view in = PyStrip(s.signature);
  std::string out;
  out.reserve(in.size());
  bool in_space = false;
  for (size_t i = 0; i < in.size();) {
    size_t start = i;
    uint32_t cp = NextCodePoint(in, &i);
    if (IsPyWhitespace(cp)) {
      // `\s` -> ' ' then `\s\s+` -> ' ': any run becomes one space.
      if (!in_space) out.push_back(' ');
      in_space = true;
      continue;
    }
    in_space = false;
    out.append(in.substr(start, i - start));
  }
  s.signature = std::move(out);
  return std::nullopt;
}

std::optional<PyError> SigTruncate(const CrashData&, const SigLists&, RuleState& s) {
  if (CodePointCount(s.signature) > kSignatureMaxLength) {
    s.signature = std::string(CodePointPrefix(s.signature, kSignatureMaxLength - 3)) + "...";
    Note(s, "SigTruncate", "SigTrunc: signature truncated due to length");
  }
  return std::nullopt;
}

}  // namespace

int64_t CrashingThreadIndex(const PyValue& v) {
  bool type_error = false;
  return PyInt(v, &type_error).value_or(0);
}

const Thread* SelectThread(const CrashData& cd, int64_t index) {
  if (cd.threads_shape != Shape::kList) return nullptr;
  int64_t n = static_cast<int64_t>(cd.threads.size());
  if (index < 0) index += n;
  if (index < 0 || index >= n) return nullptr;
  return &cd.threads[static_cast<size_t>(index)];
}

const std::vector<Rule>& DefaultRules() {
  static const std::vector<Rule> kRules = {
      {"SignatureGenerationRule", SignatureGenerationRule},
      {"StackwalkerErrorSignatureRule", StackwalkerErrorSignatureRule},
      {"BadHardware", BadHardware},
      {"OOMSignature", OOMSignature},
      {"AbortSignature", AbortSignature},
      {"SignatureShutdownTimeout", SignatureShutdownTimeout},
      {"SignatureRunWatchDog", SignatureRunWatchDog},
      {"SignatureIPCChannelError", SignatureIPCChannelError},
      {"SignatureIPCMessageName", SignatureIPCMessageName},
      {"StackOverflowSignature", StackOverflowSignature},
      {"HungProcess", HungProcess},
      {"SigPrintableCharsOnly", SigPrintableCharsOnly},
      {"SigFixWhitespace", SigFixWhitespace},
      {"SigTruncate", SigTruncate},
  };
  return kRules;
}

}  // namespace seismo::signature_internal
