#include "ping_fields.h"

#include <algorithm>

#include "seismo/parse/hang_math.h"

namespace seismo::parse_internal {
namespace {

// Iterates the fields of an object value; `fn(key, value)` returns an Outcome.
// A null value is treated as an empty object.
template <typename Fn>
Outcome ForEachField(od::value v, Fn&& fn) {
  if (IsNull(v)) return std::nullopt;
  od::object obj;
  if (auto e = v.get_object().get(obj)) return FromSimdjson(e);
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return FromSimdjson(e);
    od::value value;
    if (auto e = field.value().get(value)) return FromSimdjson(e);
    if (Outcome o = fn(key, value)) return o;
  }
  return std::nullopt;
}

// Iterates the elements of an array value; null is an empty array.
template <typename Fn>
Outcome ForEachElement(od::value v, Fn&& fn) {
  if (IsNull(v)) return std::nullopt;
  od::array arr;
  if (auto e = v.get_array().get(arr)) return FromSimdjson(e);
  for (auto element : arr) {
    od::value value;
    if (auto e = element.get(value)) return FromSimdjson(e);
    if (Outcome o = fn(value)) return o;
  }
  return std::nullopt;
}

Outcome ReadUsage(od::value v, UsageField& u) {
  u.present = true;
  u.valid = false;
  if (IsNull(v)) return std::nullopt;
  int64_t n;
  if (v.get_int64().get(n) == simdjson::SUCCESS && n >= 0) {
    u.valid = true;
    u.value = n;
  }
  return std::nullopt;
}

// {"values": {"255": 2, ...}, ...} -> buckets. Keys must be integers, counts >= 0.
// A key repeated in `values` (or `values` repeated) takes its last value, as every other
// member does (ADR 0017): keys are compared as strings, so "255" and "0255" stay two keys.
// `keys` is scratch (the keys of out[i]; views into the parser's string buffer).
Outcome ReadHistogram(od::value v, std::vector<HistogramBucket>& out, std::vector<std::string_view>& keys) {
  return ForEachField(v, [&](std::string_view key, od::value value) -> Outcome {
    if (key != "values") return std::nullopt;
    out.clear();
    keys.clear();
    return ForEachField(value, [&](std::string_view k, od::value count) -> Outcome {
      std::optional<uint64_t> upper = ParseUint(k);
      if (!upper) return RejectReason::kBadHistogram;
      int64_t c;
      if (auto e = count.get_int64().get(c)) return FromSimdjson(e, RejectReason::kBadHistogram);
      if (c < 0) return RejectReason::kBadHistogram;
      const HistogramBucket bucket{*upper, static_cast<uint64_t>(c)};
      const auto seen = std::find(keys.begin(), keys.end(), k);
      if (seen != keys.end()) {
        out[static_cast<size_t>(seen - keys.begin())] = bucket;
      } else {
        keys.push_back(k);
        out.push_back(bucket);
      }
      return std::nullopt;
    });
  });
}

// A stack's frames appended to `frames` from `begin` (a repeated key: the last array wins).
Outcome ReadStack(od::value v, std::vector<std::string_view>& frames, size_t begin) {
  frames.resize(begin);
  return ForEachElement(v, [&](od::value e) -> Outcome {
    std::string_view s;
    if (auto err = e.get_string().get(s)) return FromSimdjson(err);
    frames.push_back(s);
    return std::nullopt;
  });
}

// One element of threadHangStats: {"name": ..., "hangs": [{"stack": [...], "histogram": {...}}]}
Outcome ReadThread(od::value v, const HangOptions& opts, PingFields& f, std::vector<RawLegacyHang>& out) {
  std::optional<std::string_view> name;
  std::vector<RawLegacyHang>& hangs = f.thread_hangs;
  hangs.clear();
  Outcome o = ForEachField(v, [&](std::string_view key, od::value value) -> Outcome {
    if (key == "name") return ReadOptString(value, name);
    if (key != "hangs") return std::nullopt;
    hangs.clear();
    return ForEachElement(value, [&](od::value hang) -> Outcome {
      RawLegacyHang rec;
      rec.frames_begin = rec.frames_end = f.legacy_frames.size();
      f.buckets.clear();
      Outcome ho = ForEachField(hang, [&](std::string_view k, od::value hv) -> Outcome {
        if (k == "stack") {
          Outcome so = ReadStack(hv, f.legacy_frames, rec.frames_begin);
          rec.frames_end = f.legacy_frames.size();
          return so;
        }
        if (k == "histogram") {
          f.buckets.clear();
          return ReadHistogram(hv, f.buckets, f.bucket_keys);
        }
        return std::nullopt;
      });
      if (ho) return ho;
      std::optional<HangTotals> t = LegacyHangTotals(f.buckets, opts);
      if (!t) return RejectReason::kHangOverflow;
      if (t->hang_count == 0) return std::nullopt;  // nothing in range: adds nothing
      rec.hang_us = t->hang_us;
      rec.hang_count = t->hang_count;
      hangs.push_back(rec);
      return std::nullopt;
    });
  });
  if (o) return o;
  if (!name) return std::nullopt;  // threads without a name are skipped
  for (RawLegacyHang& h : hangs) {
    h.thread = *name;
    out.push_back(h);
  }
  return std::nullopt;
}

// Appends the hangs of a threadHangStats array to `out`.
Outcome ReadThreadHangStatsInto(od::value v, const HangOptions& opts, PingFields& f,
                                std::vector<RawLegacyHang>& out) {
  return ForEachElement(v, [&](od::value thread) -> Outcome {
    if (IsNull(thread)) return std::nullopt;
    return ReadThread(thread, opts, f, out);
  });
}

// SUBPROCESS_CRASHES_WITH_DUMP: {"gpu": {count histogram}, ...}; the count is `sum`.
Outcome ReadSubprocessCrashes(od::value v, SubprocessCrashes& out) {
  out = {};
  return ForEachField(v, [&](std::string_view key, od::value hist) -> Outcome {
    uint64_t* slot = key == "gpu"        ? &out.gpu
                     : key == "plugin"   ? &out.plugin
                     : key == "gmplugin" ? &out.gmplugin
                                         : nullptr;
    if (slot == nullptr) return std::nullopt;
    *slot = 0;
    return ForEachField(hist, [&](std::string_view k, od::value sum) -> Outcome {
      if (k != "sum") return std::nullopt;
      int64_t n;
      if (auto e = sum.get_int64().get(n)) return FromSimdjson(e, RejectReason::kBadHistogram);
      if (n < 0) return RejectReason::kBadHistogram;
      *slot = static_cast<uint64_t>(n);
      return std::nullopt;
    });
  });
}

// One bhr stack element: a string, or [moduleIndex, "hexOffset"]; others dropped.
Outcome ReadBhrFrame(od::value v, RawBhrHang& hang, std::vector<RawFrame>& frames) {
  ++hang.raw_stack_len;
  od::json_type t;
  if (auto e = v.type().get(t)) return FromSimdjson(e);
  if (t == od::json_type::string) {
    std::string_view s;
    if (auto e = v.get_string().get(s)) return FromSimdjson(e);
    frames.push_back({false, 0, s});
    return std::nullopt;
  }
  if (t != od::json_type::array) {
    return std::nullopt;  // dropped; skipped by the iterator
  }
  od::array arr;
  if (auto e = v.get_array().get(arr)) return FromSimdjson(e);
  size_t n = 0;
  int64_t index = 0;
  std::string_view offset;
  bool ok = true;
  for (auto element : arr) {
    od::value ev;
    if (auto e = element.get(ev)) return FromSimdjson(e);
    if (n == 0) {
      ok = ok && ev.get_int64().get(index) == simdjson::SUCCESS;
    } else if (n == 1) {
      ok = ok && ev.get_string().get(offset) == simdjson::SUCCESS;
    }
    ++n;
  }
  if (ok && n == 2) frames.push_back({true, index, offset});
  return std::nullopt;
}

Outcome ReadBhrHang(od::value v, std::vector<RawBhrHang>& out, std::vector<RawFrame>& frames) {
  RawBhrHang hang;
  bool has_duration = false;
  Outcome o = ForEachField(v, [&](std::string_view key, od::value value) -> Outcome {
    if (key == "duration") {
      const std::string_view text = value.raw_json_token();
      double d;
      if (auto e = value.get_double().get(d)) return FromSimdjson(e, RejectReason::kBadHang);
      if (!(d >= 0) || d > 1e12) return RejectReason::kBadHang;
      const std::optional<int64_t> us = DecimalMsToUs(text.substr(0, text.find_last_not_of(" \t\r\n") + 1));
      if (!us) return RejectReason::kBadHang;
      hang.duration_us = *us;
      has_duration = true;
      return std::nullopt;
    }
    if (key == "thread" || key == "process") {
      std::optional<std::string_view> s;
      if (Outcome so = ReadOptString(value, s)) return so;
      (key == "thread" ? hang.thread : hang.process) = s.value_or(std::string_view());
      return std::nullopt;
    }
    if (key == "stack") {
      hang.raw_stack_len = 0;
      hang.frames_begin = frames.size();  // a repeated key: its last array (ADR 0017)
      Outcome so = ForEachElement(value, [&](od::value frame) { return ReadBhrFrame(frame, hang, frames); });
      hang.frames_end = frames.size();
      return so;
    }
    return std::nullopt;
  });
  if (o) return o;
  if (!has_duration) return RejectReason::kBadHang;
  out.push_back(std::move(hang));
  return std::nullopt;
}

Outcome ReadModules(od::value v, std::vector<std::string_view>& out) {
  out.clear();
  return ForEachElement(v, [&](od::value module) -> Outcome {
    std::string_view name;
    od::json_type t;
    if (auto e = module.type().get(t)) return FromSimdjson(e);
    if (t == od::json_type::array) {
      size_t n = 0;
      od::array arr;
      if (auto e = module.get_array().get(arr)) return FromSimdjson(e);
      for (auto element : arr) {
        od::value ev;
        if (auto e = element.get(ev)) return FromSimdjson(e);
        std::string_view s;
        if (n++ == 0 && ev.get_string().get(s) == simdjson::SUCCESS) name = s;
      }
    }
    out.push_back(name);  // "" = unusable entry; frames render as 0x<offset>
    return std::nullopt;
  });
}

// Everything read from `payload`: a repeated "payload" replaces the earlier one whole.
void ResetPayload(PingFields& f) {
  f.subsession_length = {};
  f.reason.reset();
  f.parent_hangs.clear();
  f.child_hangs.clear();
  f.legacy_frames.clear();
  f.subprocess_crashes = {};
  f.time_since_last_ping = {};
  f.modules.clear();
  f.bhr_hangs.clear();
  f.bhr_frames.clear();
}

Outcome ReadPayload(od::value v, const HangOptions& opts, PingFields& f) {
  ResetPayload(f);
  return ForEachField(v, [&](std::string_view key, od::value value) -> Outcome {
    if (key == "info") {
      f.subsession_length = {};
      f.reason.reset();
      return ForEachField(value, [&](std::string_view k, od::value iv) -> Outcome {
        if (k == "subsessionLength") return ReadUsage(iv, f.subsession_length);
        if (k == "reason") return ReadOptString(iv, f.reason);
        return std::nullopt;
      });
    }
    if (key == "threadHangStats") {
      f.parent_hangs.clear();  // a repeated key: its last array
      return ReadThreadHangStatsInto(value, opts, f, f.parent_hangs);
    }
    if (key == "childPayloads") {
      f.child_hangs.clear();
      return ForEachElement(value, [&](od::value child) -> Outcome {
        // This child's hangs follow the earlier children's; a repeated key: its last array.
        const size_t begin = f.child_hangs.size();
        return ForEachField(child, [&](std::string_view k, od::value cv) -> Outcome {
          if (k != "threadHangStats") return std::nullopt;
          f.child_hangs.resize(begin);
          return ReadThreadHangStatsInto(cv, opts, f, f.child_hangs);
        });
      });
    }
    if (key == "keyedHistograms") {
      f.subprocess_crashes = {};
      return ForEachField(value, [&](std::string_view k, od::value kv) -> Outcome {
        if (k != "SUBPROCESS_CRASHES_WITH_DUMP") return std::nullopt;
        return ReadSubprocessCrashes(kv, f.subprocess_crashes);
      });
    }
    if (key == "timeSinceLastPing") return ReadUsage(value, f.time_since_last_ping);
    if (key == "modules") return ReadModules(value, f.modules);
    if (key == "hangs") {
      f.bhr_hangs.clear();
      f.bhr_frames.clear();
      return ForEachElement(value, [&](od::value h) { return ReadBhrHang(h, f.bhr_hangs, f.bhr_frames); });
    }
    return std::nullopt;
  });
}

Outcome ReadApplication(od::value v, PingFields& f) {
  f.channel.reset();
  f.name.reset();
  f.display_version.reset();
  f.version.reset();
  f.build_id.reset();
  f.build_id_present = false;
  return ForEachField(v, [&](std::string_view key, od::value value) -> Outcome {
    if (key == "channel") return ReadOptString(value, f.channel);
    if (key == "name") return ReadOptString(value, f.name);
    if (key == "displayVersion") return ReadOptString(value, f.display_version);
    if (key == "version") return ReadOptString(value, f.version);
    if (key == "buildId") {
      f.build_id_present = true;
      return ReadOptString(value, f.build_id);
    }
    return std::nullopt;
  });
}

Outcome ReadEnvironment(od::value v, PingFields& f) {
  f.os_name.reset();
  return ForEachField(v, [&](std::string_view key, od::value system) -> Outcome {
    if (key != "system") return std::nullopt;
    return ForEachField(system, [&](std::string_view k, od::value os) -> Outcome {
      if (k != "os") return std::nullopt;
      return ForEachField(os, [&](std::string_view ok, od::value name) -> Outcome {
        if (ok != "name") return std::nullopt;
        return ReadOptString(name, f.os_name);
      });
    });
  });
}

}  // namespace

void PingFields::Clear() {
  type.reset();
  has_crash_keys = false;
  id.reset();
  client_id.reset();
  submission_timestamp.reset();
  creation_date.reset();
  channel.reset();
  name.reset();
  display_version.reset();
  version.reset();
  build_id.reset();
  build_id_present = false;
  os_name.reset();
  ResetPayload(*this);
}

Outcome ReadPingFields(od::object root, const HangOptions& opts, PingFields& f) {
  for (auto field : root) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return FromSimdjson(e);
    od::value value;
    if (auto e = field.value().get(value)) return FromSimdjson(e);
    Outcome o;
    if (key == "type") {
      o = ReadOptString(value, f.type);
    } else if (key == "json_dump" || key == "threads" || key == "crashing_thread") {
      f.has_crash_keys = true;
    } else if (key == "id") {
      o = ReadOptString(value, f.id);
    } else if (key == "clientId") {
      o = ReadOptString(value, f.client_id);
    } else if (key == "submission_timestamp") {
      o = ReadOptString(value, f.submission_timestamp);
    } else if (key == "creationDate") {
      o = ReadOptString(value, f.creation_date);
    } else if (key == "application") {
      o = ReadApplication(value, f);
    } else if (key == "environment") {
      o = ReadEnvironment(value, f);
    } else if (key == "payload") {
      o = ReadPayload(value, opts, f);
    }
    if (o) return o;
  }
  return std::nullopt;
}

}  // namespace seismo::parse_internal
