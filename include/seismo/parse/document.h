// What one telemetry document becomes after parsing: its dimensions, its usage
// contribution, its hangs and/or its crash. A ParsedDocument is built whole
// before anything is aggregated, so a rejected document is never partly counted.
//
// Threading: plain values; built on a parse thread, then moved (never copied: views).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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

// Bytes a ParsedDocument's views point into (frames, thread and process names): its own
// blocks, which never move, so the views stay valid when the document is moved. Clear()
// keeps the blocks, so a document reused for the next one allocates nothing new.
class TextArena {
 public:
  TextArena() = default;
  TextArena(TextArena&&) noexcept = default;
  TextArena& operator=(TextArena&&) noexcept = default;
  TextArena(const TextArena&) = delete;
  TextArena& operator=(const TextArena&) = delete;

  // A copy of `s` in the arena.
  std::string_view Copy(std::string_view s);
  // `n` bytes to write, valid until Clear().
  char* Allocate(size_t n);
  void Clear();

 private:
  struct Block {
    std::unique_ptr<char[]> bytes;
    size_t size = 0;
  };
  std::vector<Block> blocks_;
  size_t block_ = 0;  // the block being filled
  size_t used_ = 0;   // bytes of it used
};

// One hang series contribution. hang_us is hang milliseconds in units of 1/1000
// ms (exact integer sums make results independent of thread count and order).
// The texts are views into the document (ParsedDocument::text) or static.
struct HangRecord {
  std::string_view process;    // normalised: parent, content, gpu, ...
  std::string_view thread;     // e.g. Gecko, Gecko_Child
  std::string_view signature;  // chosen per hangs.signature: one of the frames, or "(empty stack)"
  // Its stack, root first, innermost last: ParsedDocument::frames[frames_begin, frames_end).
  uint32_t frames_begin = 0;
  uint32_t frames_end = 0;
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
  std::vector<std::string_view> frames;  // of every hang, each hang's in a row
  SubprocessCrashes subprocess_crashes;
  std::optional<CrashRecord> crash;
  TextArena text;  // what the views of `hangs` and `frames` point into

  ParsedDocument() = default;
  ParsedDocument(ParsedDocument&&) noexcept = default;
  ParsedDocument& operator=(ParsedDocument&&) noexcept = default;
  // Not copied: the copy's views would point into this document's arena.
  ParsedDocument(const ParsedDocument&) = delete;
  ParsedDocument& operator=(const ParsedDocument&) = delete;

  // A hang's stack, root first.
  std::span<const std::string_view> Stack(const HangRecord& h) const {
    return std::span<const std::string_view>(frames).subspan(h.frames_begin, h.frames_end - h.frames_begin);
  }
  // Appends a hang whose texts are copied into the document (simulators, tests).
  HangRecord& AddHang(std::string_view process, std::string_view thread,
                      std::span<const std::string_view> stack, std::string_view signature, int64_t hang_us,
                      uint64_t hang_count);
  HangRecord& AddHang(std::string_view process, std::string_view thread,
                      std::initializer_list<std::string_view> stack, std::string_view signature,
                      int64_t hang_us, uint64_t hang_count) {
    return AddHang(process, thread, std::span<const std::string_view>(stack.begin(), stack.size()), signature,
                   hang_us, hang_count);
  }
  // Empties the document for the next one, keeping its buffers (Parser::ParseInto).
  void Clear();
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
