// Raw fields of a main/bhr ping collected in one On-Demand pass, before the
// kind is known (field order in JSON is arbitrary). Internal to src/parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json_util.h"
#include "seismo/parse/document.h"
#include "seismo/parse/hang_math.h"
#include "seismo/parse/options.h"

namespace seismo::parse_internal {

// A usage field: absent, present and valid, or present and invalid.
struct UsageField {
  bool present = false;
  bool valid = false;
  int64_t value = 0;
};

// A bhr stack element before module names are known. Views into the parser's string
// buffer (simdjson's unescaped strings): they live as long as the document being read.
struct RawFrame {
  bool native = false;
  int64_t module_index = 0;
  std::string_view text;  // label, or hex offset for a native frame
};

// A main ping's (legacy) hang whose histogram had something in range. Its stack is
// PingFields::legacy_frames[frames_begin, frames_end), views like RawFrame::text.
struct RawLegacyHang {
  std::string_view thread;
  size_t frames_begin = 0;
  size_t frames_end = 0;
  int64_t hang_us = 0;
  uint64_t hang_count = 0;
};

struct RawBhrHang {
  int64_t duration_us = 0;
  std::string_view thread;
  std::string_view process;
  size_t raw_stack_len = 0;  // elements in the JSON array, before dropping bad ones
  // Its frames: PingFields::bhr_frames[frames_begin, frames_end) (one vector for the
  // document's hangs, not one per hang).
  size_t frames_begin = 0;
  size_t frames_end = 0;
};

// The strings are views into the parser's string buffer (see RawFrame).
struct PingFields {
  std::optional<std::string_view> type;
  bool has_crash_keys = false;  // json_dump / threads / crashing_thread at top level
  std::optional<std::string_view> id;
  std::optional<std::string_view> client_id;  // clientId (main pings; absent from Mozilla's bhr pings)
  std::optional<std::string_view> submission_timestamp;
  std::optional<std::string_view> creation_date;

  std::optional<std::string_view> channel, name, display_version, version, build_id;
  bool build_id_present = false;
  std::optional<std::string_view> os_name;

  // main payload
  UsageField subsession_length;
  std::optional<std::string_view> reason;
  std::vector<RawLegacyHang> parent_hangs;      // process = parent
  std::vector<RawLegacyHang> child_hangs;       // process = content
  std::vector<std::string_view> legacy_frames;  // of every hang in parent_hangs and child_hangs
  SubprocessCrashes subprocess_crashes;

  // bhr payload
  UsageField time_since_last_ping;
  std::vector<std::string_view> modules;  // views like RawFrame::text
  std::vector<RawBhrHang> bhr_hangs;
  std::vector<RawFrame> bhr_frames;  // of every hang in bhr_hangs, in order

  // Scratch reused from one histogram or thread to the next.
  std::vector<HistogramBucket> buckets;
  std::vector<std::string_view> bucket_keys;
  std::vector<RawLegacyHang> thread_hangs;

  // Empties every field for the next document, keeping the buffers.
  void Clear();
};

// Reads the whole top-level object into `f` (crash documents too: their kind is known
// only at the end, where a repeated "type" takes its last value). A member repeated at
// any level takes its last value, containers whole (ADR 0017).
Outcome ReadPingFields(od::object root, const HangOptions& opts, PingFields& f);

}  // namespace seismo::parse_internal
