// What one telemetry document becomes after parsing: its dimensions, its usage
// contribution, its hangs and/or its crash. A ParsedDocument is built whole
// before anything is aggregated, so a rejected document is never partly counted.
//
// Threading: plain values; built on a parse thread, then moved.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "seismo/core/reject.h"
#include "seismo/core/time.h"

namespace seismo {

enum class DocKind : uint8_t { kMain, kBhr, kCrash };
std::string_view DocKindName(DocKind k);  // "main", "bhr", "crash"

// The "source" column of usage and hang rows: which ping type measured it.
enum class UsageSource : uint8_t { kMain, kBhr };

// Dimensions read from every document (SPEC §2); missing values are "unknown".
struct Dimensions {
  std::string channel = "unknown";
  std::string product = "unknown";
  std::string version = "unknown";
  std::string build_id = "unknown";
  std::string build_date = "unknown";  // first 8 characters of build_id
  std::string os = "unknown";
};

// One hang series contribution. hang_us is hang milliseconds in units of 1/1000
// ms (exact integer sums make results independent of thread count and order).
struct HangRecord {
  std::string process;             // normalised: parent, content, gpu, ...
  std::string thread;              // e.g. Gecko, Gecko_Child
  std::vector<std::string> stack;  // root first, innermost last
  std::string signature;           // chosen per hangs.signature
  int64_t hang_us = 0;
  uint64_t hang_count = 0;
};

// Crash class per Mission Control (SPEC §3.3).
enum class CrashClass : uint8_t { kParent, kContent, kContentShutdown, kGpu, kRdd, kSocket,
                                  kUtility, kGmplugin, kPlugin, kOther };
std::string_view CrashClassName(CrashClass c);  // "parent", "content", "content_shutdown", ...

// One crash (from a Telemetry crash ping or a Socorro processed crash).
struct CrashRecord {
  std::string process;          // normalised process name
  CrashClass crash_class = CrashClass::kParent;
  bool startup = false;         // StartupCrash == "1" (counts in the `startup` class too)
  std::string signature;        // Socorro-compatible
  std::string proto_signature;
  std::string install_id;       // clientId (ping) or install_time (processed); "" if none
};

// Sub-process crash counts from a main ping's SUBPROCESS_CRASHES_WITH_DUMP.
struct SubprocessCrashes {
  uint64_t gpu = 0;
  uint64_t plugin = 0;
  uint64_t gmplugin = 0;
};

struct ParsedDocument {
  DocKind kind = DocKind::kMain;
  Dimensions dims;
  // Crash documents: the de-duplication key, "<format>:<id>" ("crash:" + uuid for
  // processed crashes, "crash-ping:" + payload.crashId, else id, for crash pings), so
  // a crash ping and a processed crash never collide (ADR 0009). "" if absent.
  std::string doc_id;
  // main / bhr: the ping's clientId ("" if absent: Mozilla's bhr pings carry none). Only
  // ever hashed into a distinct-installs sketch; it never leaves the process.
  std::string install_id;

  // Event time candidates, most preferred first (SPEC §2): `primary` comes from
  // the document (submission_timestamp / submitted_timestamp / date_processed)
  // and beats the Kafka timestamp; `fallback` (creationDate) loses to it.
  std::optional<EventTime> primary_time;
  std::optional<EventTime> fallback_time;

  int64_t usage_ms = 0;  // main: min(subsessionLength, 86400) s in ms; bhr: timeSinceLastPing
  std::vector<HangRecord> hangs;
  SubprocessCrashes subprocess_crashes;
  std::optional<CrashRecord> crash;
};

// Resolves the event time of a document given the transport's timestamp.
std::optional<EventTime> ResolveEventTime(const ParsedDocument& doc,
                                          std::optional<EventTime> transport_time);

// Either a value or the reason the input was rejected.
template <typename T>
class [[nodiscard]] ParseResult {
 public:
  ParseResult(T v) : v_(std::move(v)) {}            // NOLINT(google-explicit-constructor)
  ParseResult(RejectReason r) : v_(r) {}            // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  RejectReason reason() const { return std::get<1>(v_); }

 private:
  std::variant<T, RejectReason> v_;
};

// Normalises a process name (SPEC §2): main/default/null/"" -> parent,
// tab or anything containing "content" -> content, known names kept, others lower-cased.
std::string NormalizeProcess(std::string_view raw);

// Maps Socorro's OS names onto Telemetry's, so crash reports and main pings of the
// same build meet in one series (crash rates need both): "Windows NT" -> "Windows_NT",
// "Mac OS X" -> "Darwin"; every other name is kept as it is (ADR 0009).
std::string NormalizeOs(std::string_view raw);

}  // namespace seismo
