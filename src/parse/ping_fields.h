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

struct RawBhrHang {
  int64_t duration_us = 0;
  std::string thread;
  std::string process;
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
  std::vector<HangRecord> parent_hangs;  // process = parent
  std::vector<HangRecord> child_hangs;   // process = content
  SubprocessCrashes subprocess_crashes;

  // bhr payload
  UsageField time_since_last_ping;
  std::vector<std::string_view> modules;  // views like RawFrame::text
  std::vector<RawBhrHang> bhr_hangs;
  std::vector<RawFrame> bhr_frames;  // of every hang in bhr_hangs, in order
};

// Reads the whole top-level object into `f` (crash documents too: their kind is known
// only at the end, where a repeated "type" takes its last value). A member repeated at
// any level takes its last value, containers whole (ADR 0017).
Outcome ReadPingFields(od::object root, const HangOptions& opts, PingFields& f);

}  // namespace seismo::parse_internal
