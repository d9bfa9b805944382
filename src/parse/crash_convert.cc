// Processed crash and Telemetry crash ping -> the generator's crash data.
#include <simdjson.h>

#include <cstdlib>

#include "crash_json.h"
#include "signature/py_text.h"

namespace seismo::crash_internal {
namespace {

using signature_internal::PyIntFromText;
using signature_internal::PyRstrip;
using Kind = PyValue::Kind;

// Socorro's int_or_none.
PyValue IntOrNone(const PyValue& v) {
  switch (v.kind) {
    case Kind::kInt:
      return v;
    case Kind::kBool:
      return PyValue::Int(v.truthy ? 1 : 0);
    case Kind::kFloat: {
      double d = std::strtod(v.text.c_str(), nullptr);
      if (d != d || d > 9.2e18 || d < -9.2e18) return PyValue::None();
      return PyValue::Int(static_cast<int64_t>(d));
    }
    case Kind::kStr: {
      std::optional<int64_t> i = PyIntFromText(v.text);
      return i ? PyValue::Int(*i) : PyValue::None();
    }
    default:
      return PyValue::None();
  }
}

bool IsInteger(dom::element e) {
  return e.type() == dom::element_type::INT64 || e.type() == dom::element_type::UINT64;
}

bool IsNull(const std::optional<dom::element>& e) { return !e || e->type() == dom::element_type::NULL_VALUE; }

}  // namespace

CrashData CrashDataFromProcessed(dom::object root) {
  CrashData cd;
  // Same-named processed fields (reference §2 mapping table).
  for (std::string_view key : {"hang", "js_large_allocation_failure", "abort_message", "mdsw_status_string",
                               "async_shutdown_timeout", "ipc_channel_error", "ipc_message_name",
                               "additional_minidumps", "java_exception", "java_stack_trace"}) {
    if (std::optional<dom::element> e = Field(root, key)) SetCrashDataKey(cd, key, *e);
  }
  if (std::optional<dom::element> e = Field(root, "oom_allocation_size")) {
    cd.oom_allocation_size = IntOrNone(ToPyValue(*e));
  }
  // Only when the key json_dump exists; note crash_info.crashing_thread and
  // json_dump.threads, not the top-level crashing_thread / json_dump.crashing_thread.
  if (Field(root, "json_dump")) {
    if (auto e = Path(root, {"json_dump", "crash_info", "crashing_thread"})) SetCrashDataKey(cd, "crashing_thread", *e);
    if (auto e = Path(root, {"json_dump", "crash_info", "type"})) SetCrashDataKey(cd, "reason", *e);
    if (auto e = Path(root, {"json_dump", "threads"})) SetCrashDataKey(cd, "threads", *e);
    if (auto e = Path(root, {"json_dump", "system_info", "os"})) SetCrashDataKey(cd, "os", *e);
  }
  return cd;
}

ParseResult<CrashData> CrashDataFromPing(dom::object root) {
  CrashData cd;
  std::optional<dom::element> payload_e = Field(root, "payload");
  if (IsNull(payload_e)) return RejectReason::kBadCrash;
  if (payload_e->type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
  dom::object payload(*payload_e);

  if (std::optional<dom::element> os = Path(root, {"environment", "system", "os", "name"}); !IsNull(os)) {
    if (os->type() != dom::element_type::STRING) return RejectReason::kWrongType;
    std::string_view name(*os);
    cd.os = PyValue::Str(name == "Windows_NT" ? std::string("Windows NT") : std::string(name));
  }

  // Annotations from payload.metadata, right-stripped as Socorro's processor does.
  if (std::optional<dom::element> meta_e = Field(payload, "metadata"); !IsNull(meta_e)) {
    if (meta_e->type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
    for (dom::key_value_pair kv : dom::object(*meta_e)) {
      std::string_view k = kv.key;
      PyValue* target = k == "AbortMessage"               ? &cd.abort_message
                        : k == "AsyncShutdownTimeout"     ? &cd.async_shutdown_timeout
                        : k == "ipc_channel_error"        ? &cd.ipc_channel_error
                        : k == "IPCMessageName"           ? &cd.ipc_message_name
                        : k == "Hang"                     ? &cd.hang
                        : k == "JSLargeAllocationFailure" ? &cd.js_large_allocation_failure
                        : k == "OOMAllocationSize"        ? &cd.oom_allocation_size
                                                          : nullptr;
      if (target == nullptr || kv.value.type() == dom::element_type::NULL_VALUE) continue;
      if (kv.value.type() != dom::element_type::STRING) return RejectReason::kWrongType;
      std::string_view text(kv.value);
      if (target == &cd.oom_allocation_size) {
        std::optional<int64_t> size = PyIntFromText(text);
        cd.oom_allocation_size = size ? PyValue::Int(*size) : PyValue::None();
      } else {
        *target = PyValue::Str(std::string(PyRstrip(text)));
      }
    }
  }

  std::optional<dom::element> st_e = Field(payload, "stackTraces");
  if (IsNull(st_e)) return cd;
  if (st_e->type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
  dom::object st(*st_e);

  if (std::optional<dom::element> info = Field(st, "crash_info"); !IsNull(info)) {
    if (info->type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
    dom::object ci(*info);
    if (std::optional<dom::element> ct = Field(ci, "crashing_thread"); !IsNull(ct)) {
      if (!IsInteger(*ct)) return RejectReason::kWrongType;
      cd.crashing_thread = ToPyValue(*ct);
    }
    if (std::optional<dom::element> type = Field(ci, "type"); !IsNull(type)) {
      if (type->type() != dom::element_type::STRING) return RejectReason::kWrongType;
      cd.reason = ToPyValue(*type);
    }
  }

  std::vector<PyValue> module_names;
  if (std::optional<dom::element> mods = Field(st, "modules"); !IsNull(mods)) {
    if (mods->type() != dom::element_type::ARRAY) return RejectReason::kWrongType;
    for (dom::element m : dom::array(*mods)) {
      if (m.type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
      std::optional<dom::element> name = Field(dom::object(m), "filename");
      if (!IsNull(name) && name->type() != dom::element_type::STRING) return RejectReason::kWrongType;
      module_names.push_back(IsNull(name) ? PyValue::None() : ToPyValue(*name));
    }
  }

  std::optional<dom::element> threads_e = Field(st, "threads");
  if (IsNull(threads_e)) return cd;
  if (threads_e->type() != dom::element_type::ARRAY) return RejectReason::kWrongType;
  cd.threads_shape = Shape::kList;
  for (dom::element t : dom::array(*threads_e)) {
    if (t.type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
    Thread thread;
    std::optional<dom::element> frames = Field(dom::object(t), "frames");
    if (!IsNull(frames)) {
      if (frames->type() != dom::element_type::ARRAY) return RejectReason::kWrongType;
      thread.frames_shape = Shape::kList;
      for (dom::element f : dom::array(*frames)) {
        if (f.type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
        dom::object fo(f);
        Frame frame;
        std::optional<dom::element> index = Field(fo, "module_index");
        std::optional<dom::element> ip = Field(fo, "ip");
        if (!IsNull(index) && !IsInteger(*index)) return RejectReason::kWrongType;
        if (!IsNull(ip) && ip->type() != dom::element_type::STRING) return RejectReason::kWrongType;
        bool valid = false;
        if (!IsNull(index)) {
          if (index->type() == dom::element_type::INT64) {
            int64_t i = int64_t(*index);
            valid = i >= 0 && static_cast<uint64_t>(i) < module_names.size();
            if (valid) frame.module = module_names[static_cast<size_t>(i)];
          }
        }
        if (!valid && !IsNull(ip)) frame.offset = ToPyValue(*ip);
        thread.frames.push_back(std::move(frame));
      }
    }
    cd.threads.push_back(std::move(thread));
  }
  return cd;
}

}  // namespace seismo::crash_internal
