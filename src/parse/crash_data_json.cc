// The crash-data dict and its pieces (threads, frames, java_exception) from
// simdjson DOM values, keeping Python's view of every value.
#include <simdjson.h>

#include <cstdio>

#include "crash_json.h"
#include "signature/py_text.h"

namespace seismo::crash_internal {
namespace {

using signature_internal::AppendPyStrRepr;
using signature_internal::PyFloatRepr;
using Kind = PyValue::Kind;

// Python repr() of a decoded JSON value (str() of containers uses it).
void AppendRepr(std::string& out, dom::element e) {
  switch (e.type()) {
    case dom::element_type::ARRAY: {
      out.push_back('[');
      bool first = true;
      for (dom::element item : dom::array(e)) {
        if (!first) out += ", ";
        first = false;
        AppendRepr(out, item);
      }
      out.push_back(']');
      return;
    }
    case dom::element_type::OBJECT: {
      out.push_back('{');
      bool first = true;
      for (dom::key_value_pair kv : dom::object(e)) {
        if (!first) out += ", ";
        first = false;
        AppendPyStrRepr(out, kv.key);
        out += ": ";
        AppendRepr(out, kv.value);
      }
      out.push_back('}');
      return;
    }
    case dom::element_type::STRING:
      AppendPyStrRepr(out, std::string_view(e));
      return;
    default:
      out += ToPyValue(e, false).text;
  }
}

// The Shape of a value that Python iterates or indexes as a list.
Shape ShapeOf(dom::element e) {
  switch (e.type()) {
    case dom::element_type::ARRAY: return Shape::kList;
    case dom::element_type::NULL_VALUE: return Shape::kNone;
    case dom::element_type::STRING: return std::string_view(e).empty() ? Shape::kEmpty : Shape::kBad;
    case dom::element_type::OBJECT: return dom::object(e).size() == 0 ? Shape::kEmpty : Shape::kBadLookup;
    default: return Shape::kBad;
  }
}

InlineFrame ToInline(dom::element e) {
  InlineFrame in;
  if (e.type() != dom::element_type::OBJECT) {
    in.is_dict = false;
    return in;
  }
  for (dom::key_value_pair kv : dom::object(e)) {
    if (kv.key == "function") in.function = ToPyValue(kv.value);
    else if (kv.key == "file") in.file = ToPyValue(kv.value);
    else if (kv.key == "line") in.line = ToPyValue(kv.value);
  }
  return in;
}

Frame ToFrame(dom::element e) {
  Frame f;
  if (e.type() != dom::element_type::OBJECT) {
    f.is_dict = false;
    return f;
  }
  for (dom::key_value_pair kv : dom::object(e)) {
    std::string_view k = kv.key;
    if (k == "function") {
      f.function = ToPyValue(kv.value);
    } else if (k == "module") {
      f.module = ToPyValue(kv.value);
    } else if (k == "file") {
      f.file = ToPyValue(kv.value);
    } else if (k == "line") {
      f.line = ToPyValue(kv.value);
    } else if (k == "offset") {
      f.offset = ToPyValue(kv.value);
    } else if (k == "inlines") {
      f.inlines_shape = ShapeOf(kv.value);
      f.inlines.clear();
      if (f.inlines_shape == Shape::kList) {
        for (dom::element item : dom::array(kv.value)) f.inlines.push_back(ToInline(item));
      }
    } else if (k == "unloaded_modules") {
      f.unloaded_modules_value = ToPyValue(kv.value, false);
      f.unloaded_modules_shape = ShapeOf(kv.value);
      f.unloaded_modules.clear();
      if (f.unloaded_modules_shape == Shape::kList) {
        for (dom::element item : dom::array(kv.value)) {
          UnloadedModule m;
          if (item.type() != dom::element_type::OBJECT) {
            m.is_dict = false;
          } else if (std::optional<dom::element> mod = Field(dom::object(item), "module")) {
            m.module = ToPyValue(*mod);
          }
          f.unloaded_modules.push_back(std::move(m));
        }
      }
    }
  }
  return f;
}

Thread ToThread(dom::element e) {
  Thread t;
  if (e.type() != dom::element_type::OBJECT) {
    t.is_dict = false;
    return t;
  }
  for (dom::key_value_pair kv : dom::object(e)) {
    if (kv.key == "frames") {
      t.frames.clear();
      t.frames_shape = ShapeOf(kv.value);
      if (t.frames_shape == Shape::kNone) t.frames_shape = Shape::kBad;  // frames: null raises
      if (t.frames_shape == Shape::kList) {
        dom::array frames(kv.value);
        t.frames.reserve(frames.size());
        for (dom::element fr : frames) t.frames.push_back(ToFrame(fr));
      }
    } else if (kv.key == "last_error_value") {
      t.last_error_value = ToPyValue(kv.value);
    }
  }
  return t;
}

JavaException ToJavaException(dom::element e) {
  JavaException j;
  j.value = ToPyValue(e, false);
  if (e.type() != dom::element_type::OBJECT) return j;
  std::optional<dom::element> values = Path(dom::object(e), {"exception", "values"});
  if (!values || values->type() != dom::element_type::ARRAY || dom::array(*values).size() == 0) return j;
  dom::element first = dom::array(*values).at(0).value_unsafe();
  if (first.type() != dom::element_type::OBJECT) return j;
  std::optional<dom::element> st = Field(dom::object(first), "stacktrace");
  if (!st || st->type() != dom::element_type::OBJECT || dom::object(*st).size() == 0) return j;
  dom::object stack(*st);
  j.well_formed = true;
  if (std::optional<dom::element> type = Field(stack, "type")) {
    j.has_type = true;
    j.type = ToPyValue(*type);
  }
  if (std::optional<dom::element> module = Field(stack, "module")) j.module = ToPyValue(*module);
  if (std::optional<dom::element> frames = Field(stack, "frames")) {
    PyValue fv = ToPyValue(*frames, false);
    if (fv.truthy) {
      j.has_frame = true;
      dom::element f0;
      if (frames->type() == dom::element_type::ARRAY) f0 = dom::array(*frames).at(0).value_unsafe();
      if (frames->type() != dom::element_type::ARRAY || f0.type() != dom::element_type::OBJECT) {
        j.frame_is_dict = false;
      } else {
        dom::object fo(f0);
        if (auto v = Field(fo, "module")) j.frame_module = ToPyValue(*v);
        if (auto v = Field(fo, "function")) j.frame_function = ToPyValue(*v);
        if (auto v = Field(fo, "filename")) j.frame_filename = ToPyValue(*v);
      }
    }
  }
  return j;
}

MinidumpNames ToMinidumpNames(dom::element e) {
  MinidumpNames m;
  switch (e.type()) {
    case dom::element_type::ARRAY:
      for (dom::element item : dom::array(e)) {
        if (item.type() == dom::element_type::STRING) m.names.emplace_back(std::string_view(item));
      }
      break;
    case dom::element_type::STRING:
      m.is_text = true;
      m.names.emplace_back(std::string_view(e));
      break;
    case dom::element_type::OBJECT:
      for (dom::key_value_pair kv : dom::object(e)) m.names.emplace_back(kv.key);
      break;
    case dom::element_type::NULL_VALUE:
      break;
    default:
      m.bad = true;
  }
  return m;
}

}  // namespace

PyValue ToPyValue(dom::element e, bool repr) {
  PyValue v;
  switch (e.type()) {
    case dom::element_type::NULL_VALUE:
      return v;
    case dom::element_type::BOOL:
      return PyValue::Bool(bool(e));
    case dom::element_type::INT64:
      return PyValue::Int(int64_t(e));
    case dom::element_type::UINT64: {
      uint64_t u = uint64_t(e);
      return {Kind::kInt, std::to_string(u), u != 0};
    }
    case dom::element_type::DOUBLE: {
      double d = double(e);
      return {Kind::kFloat, PyFloatRepr(d), d != 0};
    }
    case dom::element_type::STRING:
      return PyValue::Str(std::string(std::string_view(e)));
    case dom::element_type::ARRAY:
      v.kind = Kind::kList;
      v.truthy = dom::array(e).size() > 0;
      break;
    case dom::element_type::OBJECT:
      v.kind = Kind::kDict;
      v.truthy = dom::object(e).size() > 0;
      break;
  }
  if (repr) AppendRepr(v.text, e);
  return v;
}

std::optional<dom::element> Field(dom::object o, std::string_view key) {
  std::optional<dom::element> found;
  for (dom::key_value_pair kv : o) {
    if (kv.key == key) found = kv.value;
  }
  return found;
}

std::optional<dom::element> Path(dom::object o, std::initializer_list<std::string_view> keys) {
  std::optional<dom::element> cur;
  dom::object obj = o;
  size_t i = 0;
  for (std::string_view k : keys) {
    if (i++ > 0) {
      if (cur->type() != dom::element_type::OBJECT) return std::nullopt;
      obj = dom::object(*cur);
    }
    cur = Field(obj, k);
    if (!cur) return std::nullopt;
  }
  return cur;
}

void SetCrashDataKey(CrashData& cd, std::string_view k, dom::element value) {
  if (k == "threads") {
    cd.threads.clear();
    cd.threads_shape = ShapeOf(value);
    if (cd.threads_shape == Shape::kList) {
      for (dom::element t : dom::array(value)) cd.threads.push_back(ToThread(t));
    }
  } else if (k == "crashing_thread") {
    cd.crashing_thread = ToPyValue(value);
  } else if (k == "os") {
    cd.os = ToPyValue(value);
  } else if (k == "reason") {
    cd.reason = ToPyValue(value);
  } else if (k == "java_stack_trace") {
    cd.java_stack_trace = ToPyValue(value);
  } else if (k == "java_exception") {
    cd.java_exception = ToJavaException(value);
  } else if (k == "oom_allocation_size") {
    cd.oom_allocation_size = ToPyValue(value);
  } else if (k == "js_large_allocation_failure") {
    cd.js_large_allocation_failure = ToPyValue(value);
  } else if (k == "abort_message") {
    cd.abort_message = ToPyValue(value);
  } else if (k == "async_shutdown_timeout") {
    cd.async_shutdown_timeout = ToPyValue(value);
  } else if (k == "ipc_channel_error") {
    cd.ipc_channel_error = ToPyValue(value);
  } else if (k == "ipc_message_name") {
    cd.ipc_message_name = ToPyValue(value);
  } else if (k == "additional_minidumps") {
    cd.additional_minidumps = ToMinidumpNames(value);
  } else if (k == "mdsw_status_string") {
    cd.mdsw_status_string = ToPyValue(value);
  } else if (k == "hang") {
    cd.hang = ToPyValue(value);
  }
}

CrashData CrashDataFromObject(dom::object root) {
  CrashData cd;
  for (dom::key_value_pair kv : root) SetCrashDataKey(cd, kv.key, kv.value);
  return cd;
}

}  // namespace seismo::crash_internal
