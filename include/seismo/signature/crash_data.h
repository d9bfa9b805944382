// CrashData: the input of the signature generator, Socorro's "signature crash
// data" dict (reference socorro-signatures.md §2) as a C++ value.
//
// Socorro's generator is Python reading a JSON-shaped dict, and its output on
// odd input depends on Python's view of each value: its truthiness, its str()
// text, and whether an operation on it raises. PyValue keeps exactly that, so
// quirks such as `crashing_thread: "2"`, `hang: ""`, `frames: null` or a null
// frame give Socorro's answer. Containers keep their shape in `Shape` fields.
// Build one with CrashDataFromJson (seismo/parse/crash_parser.h) or by hand.
//
// Threading: plain values; read concurrently by SignatureGenerator::Generate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seismo {

// One dict value as Python sees it. A missing key and JSON null are both kNone
// (Socorro reads every key with .get()).
struct PyValue {
  enum class Kind : uint8_t { kNone, kStr, kInt, kFloat, kBool, kList, kDict };
  Kind kind = Kind::kNone;
  std::string text;     // kStr: the string; otherwise Python str() of the value
  bool truthy = false;  // Python bool(value)

  static PyValue None() { return {}; }
  static PyValue Str(std::string s) {
    bool t = !s.empty();
    return {Kind::kStr, std::move(s), t};
  }
  static PyValue Int(int64_t v) { return {Kind::kInt, std::to_string(v), v != 0}; }
  static PyValue Bool(bool b) { return {Kind::kBool, b ? "True" : "False", b}; }

  bool is_none() const { return kind == Kind::kNone; }
  bool is_str() const { return kind == Kind::kStr; }
  // Python raises TypeError when hashing a list or dict.
  bool hashable() const { return kind != Kind::kList && kind != Kind::kDict; }
};

// What a container-valued key held: a list (items in the vector beside it),
// nothing (missing/null), or something Python cannot treat as that list.
enum class Shape : uint8_t {
  kList,       // a JSON array (possibly empty)
  kNone,       // missing or null
  kEmpty,      // a falsy non-list Python iterates as empty ("" or {})
  kBad,        // anything else: iterating or indexing it raises
  kBadLookup,  // a non-empty dict where an index was expected: raises KeyError
};

struct InlineFrame {
  bool is_dict = true;  // false: Python raises when reading it
  PyValue function, file, line;
};

struct UnloadedModule {
  bool is_dict = true;
  PyValue module;
};

// One rust-minidump json_dump frame (only the fields signatures use).
struct Frame {
  bool is_dict = true;  // false for a null (or non-object) frame: the rule fails
  PyValue function, module, file, line, offset;
  Shape inlines_shape = Shape::kNone;
  std::vector<InlineFrame> inlines;
  PyValue unloaded_modules_value;  // kind/truthiness of the raw value
  Shape unloaded_modules_shape = Shape::kNone;
  std::vector<UnloadedModule> unloaded_modules;
};

struct Thread {
  bool is_dict = true;  // false: reading it raises (rule fails)
  // kNone only when the key is missing (no frames); `frames: null` is kBad
  // (Python iterates None: the rule fails).
  Shape frames_shape = Shape::kNone;
  std::vector<Frame> frames;
  PyValue last_error_value;
};

// `java_exception` reduced to what the Java-exception tool reads (§4.10).
struct JavaException {
  PyValue value;             // the raw value's kind/truthiness (the tool runs when truthy)
  bool well_formed = false;  // exception.values[0].stacktrace is a truthy dict
  bool has_type = false;     // stacktrace has a "type" key ("Unknown" otherwise)
  PyValue type, module;
  bool has_frame = false;        // stacktrace.frames is non-empty
  bool frame_is_dict = true;
  PyValue frame_module, frame_function, frame_filename;
};

// `additional_minidumps`: Socorro tests `"upload_file_minidump_browser" in value`.
struct MinidumpNames {
  bool is_text = false;  // a string: substring test on names[0]
  bool bad = false;      // a number or bool: `in` raises
  std::vector<std::string> names;  // list items that are strings, or dict keys
};

struct CrashData {
  PyValue crashing_thread;  // int, numeric string, null, anything (int() else 0)
  Shape threads_shape = Shape::kNone;
  std::vector<Thread> threads;
  PyValue os, reason;
  PyValue java_stack_trace;
  JavaException java_exception;
  PyValue oom_allocation_size, js_large_allocation_failure, abort_message;
  PyValue async_shutdown_timeout, ipc_channel_error, ipc_message_name;
  MinidumpNames additional_minidumps;
  PyValue mdsw_status_string;
  PyValue hang;
};

}  // namespace seismo
