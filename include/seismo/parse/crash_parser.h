// Crash documents -> CrashData (the signature generator's input) and ->
// ParsedDocument{kind = kCrash} with a Socorro-compatible signature.
//
// Three JSON shapes are understood:
//   crash-data dict   the generator's own input (reference §2): `threads`,
//                     `crashing_thread`, `os`, `reason`, `java_stack_trace`, ...
//                     Values keep their Python meaning (see crash_data.h).
//   processed crash   a Socorro processed crash, converted exactly like
//                     Socorro's convert_to_crash_data (reference §2).
//   crash ping        a Telemetry crash ping, converted as SPEC §3.3 says:
//                     stackTraces.threads frames -> {module} or {offset},
//                     crash_info -> crashing_thread/reason, metadata
//                     annotations right-stripped.
//
// Input need not be padded or NUL-terminated: it is copied into a per-thread
// padded buffer (the DOM API is used for its random access). Parser reads a
// crash document in place with its own DOM parser and the same reader.
//
// Threading: every function is thread-safe (per-thread simdjson parser); the
// SignatureGenerator must be too (it is).
#pragma once

#include <optional>
#include <string_view>

#include "seismo/parse/document.h"
#include "seismo/signature/crash_data.h"

namespace seismo {

class SignatureGenerator;

enum class CrashFormat {
  kTelemetryPing,  // type == "crash"
  kProcessed,      // a processed crash; without `json_dump` but with `threads` or
                   // `crashing_thread` at the top it is read as a crash-data dict
};

// Rejects: kMalformedJson, kInvalidUtf8, kTooDeep, kNotObject.
ParseResult<CrashData> CrashDataFromJson(std::string_view json);
// + kWrongType for a processed field of the wrong type that the conversion
// itself needs (json_dump values go to the generator as they are).
ParseResult<CrashData> CrashDataFromProcessedJson(std::string_view json);
// + kWrongType for stackTraces/metadata fields of the wrong type, kBadCrash
// without a payload object.
ParseResult<CrashData> CrashDataFromPingJson(std::string_view json);

// Which shape a document has: `type == "crash"` -> ping, an object with
// `json_dump` -> processed, anything else -> crash-data dict.
enum class CrashInput { kCrashData, kProcessed, kPing };
ParseResult<CrashData> CrashDataFromAnyJson(std::string_view json, CrashInput* detected = nullptr);

// Parses a Telemetry crash ping or a Socorro processed crash into a crash
// document: dimensions (SPEC §2), doc id, event times, and a CrashRecord with
// process, class, startup flag, install id and the signature from `gen`.
// Extra rejects: kMissingBuildId / kBadBuildId (ping build id; a processed
// crash with no build is "unknown" but a malformed one is rejected),
// kBadTimestamp (submission/processing time; a bad creationDate is ignored),
// kWrongType (also a build id that is not a string, as ADR 0001 says).
ParseResult<ParsedDocument> ParseCrashDocument(std::string_view json, CrashFormat format,
                                               const SignatureGenerator& gen);
// The same into `doc`, which must be empty (new or Clear()ed); nullopt when accepted.
std::optional<RejectReason> ParseCrashDocument(std::string_view json, CrashFormat format,
                                               const SignatureGenerator& gen, ParsedDocument& doc);

// Mission Control's class for a normalised process name (SPEC §3.3).
CrashClass ClassifyCrash(std::string_view process, std::string_view ipc_channel_error);

}  // namespace seismo
