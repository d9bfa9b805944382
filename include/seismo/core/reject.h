// Why a document was rejected. A rejected document contributes nothing to any
// aggregate (never partly counted); it is counted by reason and written to the
// dead-letter destination with its reason, topic, partition and offset.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace seismo {

enum class RejectReason : uint8_t {
  kMalformedJson,    // not parseable JSON (truncated, bad token, trailing garbage)
  kNotObject,        // valid JSON whose root is not an object
  kTooLarge,         // over ingest.max_document_bytes
  kInvalidUtf8,      // bytes that are not UTF-8
  kTooDeep,          // nesting deeper than the parser's depth limit
  kUnknownKind,      // neither main, bhr nor crash, and the topic maps to no kind
  kMissingBuildId,   // application.buildId (or build/BuildID) missing or not a string
  kBadBuildId,       // build id without 8 leading digits
  kBadUsage,         // subsessionLength/timeSinceLastPing missing, null, negative, not an integer
  kUsageTooLarge,    // usage over a day (main) or absurdly long (bhr)
  kBadHistogram,     // a hang histogram key that is not an integer, or a negative count
  kBadHang,          // a bhr hang with a duration that is not a non-negative number
  kWrongType,        // a field the parser reads has the wrong JSON type
  kBadTimestamp,     // an event-time field that is present but not a timestamp
  kBadCrash,         // a crash document with no usable crash data
  kFiltered,         // dropped by a configured filter (channel/os/...), not an error
  kHangOverflow,     // a legacy hang histogram whose count or weighted sum would overflow 64 bits
  kFutureTime,       // event time more than max_clock_skew ahead of stream time (or the clock, live)
  kCount_,           // number of reasons; not a reason
};

inline constexpr size_t kRejectReasonCount = static_cast<size_t>(RejectReason::kCount_);

// Stable snake_case name used in output JSON, metrics labels and dead letters.
constexpr std::string_view RejectReasonName(RejectReason r) {
  constexpr std::array<std::string_view, kRejectReasonCount> kNames = {
      "malformed_json", "not_object",  "too_large",     "invalid_utf8",  "too_deep",
      "unknown_kind",   "missing_build_id", "bad_build_id", "bad_usage", "usage_too_large",
      "bad_histogram",  "bad_hang",    "wrong_type",    "bad_timestamp", "bad_crash",
      "filtered",       "hang_overflow",  "future_time",
  };
  return kNames[static_cast<size_t>(r)];
}

}  // namespace seismo
