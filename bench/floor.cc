#include "floor.h"

#include <algorithm>
#include <cstring>

namespace seismo::bench {
namespace {

namespace od = simdjson::ondemand;
using simdjson::SUCCESS;

// Every helper returns false on a simdjson error (the document is counted as an error).

bool Str(od::value v, FloorTotals& t) {
  std::string_view s;
  if (v.get_string().get(s) != SUCCESS) return v.is_null().error() == SUCCESS;  // null or wrong type: skip
  t.string_bytes += s.size();
  return true;
}

// A hang's frame: read as Str does, and keyed under --keyed.
bool Frame(od::value v, FloorTotals& t) {
  std::string_view s;
  if (v.get_string().get(s) != SUCCESS) return v.is_null().error() == SUCCESS;
  t.string_bytes += s.size();
  if (t.keys != nullptr) t.keys->Frame(s);
  return true;
}

bool Int(od::value v, uint64_t& out) {
  int64_t n;
  if (v.get_int64().get(n) != SUCCESS) return true;
  out += static_cast<uint64_t>(n);
  return true;
}

// Calls fn(key, value) for every field; false on error.
template <typename Fn>
bool Fields(od::value v, Fn&& fn) {
  od::object o;
  if (v.get_object().get(o) != SUCCESS) return true;  // null or not an object: nothing to read
  for (auto field : o) {
    std::string_view key;
    if (field.unescaped_key().get(key) != SUCCESS) return false;
    od::value value;
    if (field.value().get(value) != SUCCESS) return false;
    if (!fn(key, value)) return false;
  }
  return true;
}

template <typename Fn>
bool Elements(od::value v, Fn&& fn) {
  od::array a;
  if (v.get_array().get(a) != SUCCESS) return true;
  for (auto element : a) {
    od::value value;
    if (element.get(value) != SUCCESS) return false;
    if (!fn(value)) return false;
  }
  return true;
}

// {"values": {"<upper>": count}} as ReadHistogram reads it.
bool Histogram(od::value v, FloorTotals& t) {
  return Fields(v, [&](std::string_view key, od::value value) {
    if (key != "values") return true;
    return Fields(value, [&](std::string_view k, od::value count) {
      uint64_t upper = 0;
      for (char c : k) upper = upper * 10 + static_cast<uint64_t>(c - '0');
      t.hang_buckets += upper != 0;
      return Int(count, t.usage);
    });
  });
}

bool ThreadHangStats(od::value v, FloorTotals& t) {
  return Elements(v, [&](od::value thread) {
    return Fields(thread, [&](std::string_view key, od::value value) {
      if (key == "name") return Str(value, t);
      if (key != "hangs") return true;
      return Elements(value, [&](od::value hang) {
        const bool ok = Fields(hang, [&](std::string_view k, od::value hv) {
          if (k == "stack") {
            return Elements(hv, [&](od::value f) {
              ++t.frames;
              return Frame(f, t);
            });
          }
          if (k == "histogram") return Histogram(hv, t);
          return true;
        });
        if (t.keys != nullptr) t.keys->EndHang();
        return ok;
      });
    });
  });
}

bool BhrHangs(od::value v, FloorTotals& t) {
  return Elements(v, [&](od::value hang) {
    ++t.hang_buckets;
    const bool ok = Fields(hang, [&](std::string_view key, od::value value) {
      if (key == "duration") {
        double d;
        if (value.get_double().get(d) == SUCCESS) t.usage += static_cast<uint64_t>(d);
        return true;
      }
      if (key == "thread" || key == "process") return Str(value, t);
      if (key != "stack") return true;
      return Elements(value, [&](od::value frame) {
        ++t.frames;
        od::json_type type;
        if (frame.type().get(type) != SUCCESS) return false;
        if (type == od::json_type::string) return Frame(frame, t);
        return Elements(frame, [&](od::value e) {  // [module, "offset"]: the offset keyed as its frame
          od::json_type et;
          if (e.type().get(et) != SUCCESS) return false;
          return et == od::json_type::string ? Frame(e, t) : Int(e, t.usage);
        });
      });
    });
    if (t.keys != nullptr) t.keys->EndHang();
    return ok;
  });
}

bool Modules(od::value v, FloorTotals& t) {
  return Elements(v, [&](od::value module) {
    od::json_type type;
    if (module.type().get(type) != SUCCESS) return false;
    if (type == od::json_type::object) {  // crash ping modules: {"filename": ...}
      return Fields(module, [&](std::string_view k, od::value mv) { return k == "filename" ? Str(mv, t) : true; });
    }
    size_t n = 0;
    return Elements(module, [&](od::value e) { return n++ == 0 ? Str(e, t) : true; });
  });
}

// Crash frames (processed json_dump or ping stackTraces): every scalar field.
bool CrashThreads(od::value v, FloorTotals& t) {
  return Elements(v, [&](od::value thread) {
    return Fields(thread, [&](std::string_view key, od::value value) {
      if (key != "frames") return key == "thread_name" ? Str(value, t) : true;
      return Elements(value, [&](od::value frame) {
        ++t.frames;
        return Fields(frame, [&](std::string_view fk, od::value fv) {
          if (fk == "function" || fk == "module" || fk == "file" || fk == "offset" || fk == "module_offset" ||
              fk == "ip") {
            return Str(fv, t);
          }
          if (fk == "line" || fk == "module_index") return Int(fv, t.usage);
          if (fk == "inlines") {  // inlined frames: function, file, line
            return Elements(fv, [&](od::value inl) {
              return Fields(inl, [&](std::string_view ik, od::value iv) {
                if (ik == "function" || ik == "file") return Str(iv, t);
                return ik == "line" ? Int(iv, t.usage) : true;
              });
            });
          }
          return true;
        });
      });
    });
  });
}

bool StackTraces(od::value v, FloorTotals& t) {
  return Fields(v, [&](std::string_view key, od::value value) {
    if (key == "threads") return CrashThreads(value, t);
    if (key == "modules") return Modules(value, t);
    if (key == "crash_info" || key == "system_info") {
      return Fields(value, [&](std::string_view, od::value cv) {
        od::json_type type;
        if (cv.type().get(type) != SUCCESS) return false;
        return type == od::json_type::number ? Int(cv, t.usage) : Str(cv, t);
      });
    }
    return key == "status" ? Str(value, t) : true;
  });
}

bool Payload(od::value v, FloorTotals& t) {
  return Fields(v, [&](std::string_view key, od::value value) {
    if (key == "info") {
      return Fields(value, [&](std::string_view k, od::value iv) {
        if (k == "subsessionLength") return Int(iv, t.usage);
        return k == "reason" ? Str(iv, t) : true;
      });
    }
    if (key == "threadHangStats") return ThreadHangStats(value, t);
    if (key == "childPayloads") {
      return Elements(value, [&](od::value child) {
        return Fields(child, [&](std::string_view k, od::value cv) {
          return k == "threadHangStats" ? ThreadHangStats(cv, t) : true;
        });
      });
    }
    if (key == "keyedHistograms") {
      return Fields(value, [&](std::string_view k, od::value kv) {
        if (k != "SUBPROCESS_CRASHES_WITH_DUMP") return true;
        return Fields(kv, [&](std::string_view, od::value hist) {
          return Fields(hist, [&](std::string_view hk, od::value sum) { return hk == "sum" ? Int(sum, t.usage) : true; });
        });
      });
    }
    if (key == "timeSinceLastPing") return Int(value, t.usage);
    if (key == "modules") return Modules(value, t);
    if (key == "hangs") return BhrHangs(value, t);
    // crash ping
    if (key == "crashId" || key == "processType") return Str(value, t);
    if (key == "metadata") {
      return Fields(value, [&](std::string_view, od::value mv) { return Str(mv, t); });
    }
    if (key == "stackTraces") return StackTraces(value, t);
    return true;
  });
}

}  // namespace

void FloorExtractor::Extract(simdjson::padded_string_view padded, FloorTotals& t) {
  ++t.documents;
  od::document doc;
  od::object root;
  if (parser_.iterate(padded).get(doc) != SUCCESS || doc.get_object().get(root) != SUCCESS) {
    ++t.errors;
    return;
  }
  bool ok = true;
  for (auto field : root) {
    std::string_view key;
    od::value value;
    if (field.unescaped_key().get(key) != SUCCESS || field.value().get(value) != SUCCESS) {
      ok = false;
      break;
    }
    if (key == "payload") {
      ok = Payload(value, t);
    } else if (key == "application") {
      ok = Fields(value, [&](std::string_view k, od::value av) {
        return k == "channel" || k == "name" || k == "displayVersion" || k == "version" || k == "buildId"
                   ? Str(av, t)
                   : true;
      });
    } else if (key == "environment") {
      ok = Fields(value, [&](std::string_view k, od::value sys) {
        if (k != "system") return true;
        return Fields(sys, [&](std::string_view sk, od::value os) {
          if (sk != "os") return true;
          return Fields(os, [&](std::string_view ok2, od::value name) { return ok2 == "name" ? Str(name, t) : true; });
        });
      });
    } else if (key == "json_dump") {
      ok = StackTraces(value, t);
    } else if (key == "type" || key == "id" || key == "submission_timestamp" || key == "creationDate" ||
               key == "clientId" || key == "uuid" || key == "date_processed" ||
               key == "submitted_timestamp" || key == "product" || key == "version" || key == "build" ||
               key == "release_channel" || key == "os_name" || key == "process_type" ||
               key == "install_time" || key == "reason" || key == "ipc_channel_error" ||
               key == "mdsw_status_string" || key == "moz_crash_reason" || key == "abort_message" ||
               key == "java_stack_trace" || key == "oom_allocation_size" || key == "crash_id" ||
               key == "startup_crash") {
      od::json_type type;
      ok = value.type().get(type) == SUCCESS;
      if (ok && type == od::json_type::string) ok = Str(value, t);
      if (ok && type == od::json_type::boolean) t.usage += value.get_bool().value_unsafe();
    } else if (key == "additional_minidumps") {
      ok = Elements(value, [&](od::value m) { return Str(m, t); });
    }
    if (!ok) break;
  }
  if (!ok) ++t.errors;
}

// ------------------------------------------------------------------ FloorKeys

std::string_view FloorKeys::Keep(std::string_view bytes) {
  constexpr size_t kBlock = 1 << 20;
  if (blocks_.empty() || used_ + bytes.size() > kBlock) {
    blocks_.push_back(std::make_unique<char[]>(std::max(kBlock, bytes.size())));
    used_ = 0;
  }
  char* p = blocks_.back().get() + used_;
  std::memcpy(p, bytes.data(), bytes.size());
  used_ += bytes.size();
  return {p, bytes.size()};
}

void FloorKeys::Frame(std::string_view text) {
  auto it = texts_.find(text);
  if (it == texts_.end()) it = texts_.emplace(Keep(text), static_cast<uint32_t>(texts_.size())).first;
  frames_.push_back(it->second);
}

void FloorKeys::EndHang() {
  const std::string_view bytes(reinterpret_cast<const char*>(frames_.data()), frames_.size() * sizeof(uint32_t));
  auto it = stacks_.find(bytes);
  if (it == stacks_.end()) it = stacks_.emplace(Keep(bytes), static_cast<uint32_t>(stacks_.size())).first;
  ++series_[it->second];
  frames_.clear();
}

}  // namespace seismo::bench
