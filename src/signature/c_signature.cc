#include "signature/c_signature.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "signature/normalize.h"
#include "signature/py_text.h"

namespace seismo::signature_internal {
namespace {

struct RustFix {
  std::string_view file, function, fixed;
};

// Rust 1.34 symbols that lost their module (bug 1544246).
constexpr std::array<RustFix, 9> kRustFixes = {{
    {"src/liballoc/raw_vec.rs", "capacity_overflow", "alloc::raw_vec::capacity_overflow"},
    {"src/libcore/option.rs", "expect_failed", "core::option::expect_failed"},
    {"src/libcore/panicking.rs", "panic_bounds_check", "core::panicking::panic_bounds_check"},
    {"src/libcore/panicking.rs", "panic_fmt", "core::panicking::panic_fmt"},
    {"src/libcore/panicking.rs", "panic", "core::panicking::panic"},
    {"src/libcore/slice/mod.rs", "slice_index_order_fail", "core::slice::slice_index_order_fail"},
    {"src/libstd/panicking.rs", "begin_panic_fmt", "std::panicking::begin_panic_fmt"},
    {"src/libstd/panicking.rs", "continue_panic_fmt", "std::panicking::continue_panic_fmt"},
    {"src/libstd/panicking.rs", "rust_panic_with_hook", "std::panicking::rust_panic_with_hook"},
}};

// Applies fix_missing_module and the Windows lower-casing, then normalises.
PyOr<std::string> EmitFrame(FrameFields fields, bool windows, const SigLists& lists) {
  PyValue fixed_function;
  const PyValue& file = *fields.file;
  if (!file.is_none()) {
    if (file.truthy && !file.is_str()) return PyError::Type("'file' is not a str");
    if (!fields.function->hashable()) return PyError::Type("unhashable type: 'function'");
    bool found = false;
    std::string_view path = file.is_str() ? ParseSourceFile(file.text, &found) : std::string_view();
    fields.rust_file = found && EndsWith(path, ".rs");
    if (found && fields.function->is_str()) {
      for (const RustFix& fix : kRustFixes) {
        if (fix.file == path && fix.function == fields.function->text) {
          fixed_function = PyValue::Str(std::string(fix.fixed));
          fields.function = &fixed_function;
          break;
        }
      }
    }
  }
  PyValue lowered;
  if (windows && fields.module->truthy) {
    if (!fields.module->is_str()) return PyError::Type("'module' has no attribute 'lower'");
    const std::string& m = fields.module->text;
    bool needs_lowering = std::any_of(m.begin(), m.end(), [](char c) {
      return (c >= 'A' && c <= 'Z') || static_cast<unsigned char>(c) >= 0x80;
    });
    if (needs_lowering) {
      lowered = PyValue::Str(PyLower(m));
      fields.module = &lowered;
    }
  }
  return NormalizeFrame(fields, lists);
}

// True for frames that collapse into an identical previous one (§4.8).
bool IsCollapsible(std::string_view s) {
  if (StartsWith(s, "(unloaded")) return false;
  auto ends_with_ci = [&](std::string_view suffix) {
    if (s.size() < suffix.size()) return false;
    for (size_t i = 0; i < suffix.size(); ++i) {
      char c = s[s.size() - suffix.size() + i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      if (c != suffix[i]) return false;
    }
    return true;
  };
  return ends_with_ci(".dll") || ends_with_ci(".so") || s == "XUL" || s == "<name omitted>" ||
         StartsWith(s, "<unknown in");
}

}  // namespace

PyOr<std::vector<std::string>> CreateFrameList(const Thread& thread, bool windows, const SigLists& lists) {
  std::vector<std::string> out;
  if (thread.frames_shape == Shape::kBad || thread.frames_shape == Shape::kBadLookup) {
    return PyError::Type("'frames' is not iterable as a list of frames");
  }
  if (thread.frames_shape != Shape::kList) return out;
  out.reserve(std::min(thread.frames.size(), kMaxFramesConsidered));
  for (const Frame& frame : thread.frames) {
    if (out.size() >= kMaxFramesConsidered) break;
    if (!frame.is_dict) return PyError::Type("a frame is null or not an object");
    if (frame.inlines_shape == Shape::kBad || frame.inlines_shape == Shape::kBadLookup) {
      return PyError::Type("'inlines' is not a list");
    }
    if (frame.inlines_shape == Shape::kList) {
      for (const InlineFrame& in : frame.inlines) {
        if (out.size() >= kMaxFramesConsidered) break;
        if (!in.is_dict) return PyError::Type("an inline frame is not an object");
        PyOr<std::string> s =
            EmitFrame({&in.function, &frame.module, &in.file, &in.line, &frame.offset, nullptr}, windows, lists);
        if (!s.ok()) return s.error();
        out.push_back(std::move(s.value()));
      }
      if (out.size() >= kMaxFramesConsidered) break;
    }
    PyOr<std::string> s =
        EmitFrame({&frame.function, &frame.module, &frame.file, &frame.line, &frame.offset, &frame}, windows, lists);
    if (!s.ok()) return s.error();
    out.push_back(std::move(s.value()));
  }
  return out;
}

WalkResult WalkFrames(const std::vector<std::string>& frames, int64_t crashing_thread, const SigLists& lists) {
  WalkResult result;
  // 1. Sentinels: exact strings; the earliest one found cuts the stack.
  // (The earliest frame that equals any sentinel = the smallest first index.)
  size_t begin = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (lists.IsSentinel(frames[i])) {
      begin = i;
      break;
    }
  }

  // 2. Walk: skip irrelevant frames, keep prefixes, stop at the first other.
  std::vector<std::string_view> kept;
  for (size_t i = begin; i < frames.size(); ++i) {
    std::string_view f = frames[i];
    if (f.empty() || lists.IsIrrelevant(f)) continue;
    if (!kept.empty() && kept.back() == f && IsCollapsible(f)) continue;
    kept.push_back(f);
    if (!lists.IsPrefix(f)) break;
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i > 0) result.signature += " | ";
    result.signature += kept[i];
  }
  // 3. Fallbacks when nothing was kept.
  if (result.signature.empty()) {
    result.notes.push_back("CSignatureTool: no frame data for crashing thread (" + std::to_string(crashing_thread) +
                           ")");
    result.signature = begin < frames.size() ? frames[begin] : "EMPTY: no frame data available";
  }
  return result;
}

}  // namespace seismo::signature_internal
