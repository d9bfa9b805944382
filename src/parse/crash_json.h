// simdjson DOM -> CrashData, shared by the crash-parsing files of the parse
// stage. Internal. Threading: pure functions; the per-thread parser lives in
// crash_parser.cc.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>

#include "seismo/core/reject.h"
#include "seismo/parse/crash_parser.h"
#include "seismo/parse/document.h"
#include "seismo/signature/crash_data.h"

namespace seismo::crash_internal {

namespace dom = simdjson::dom;

// One JSON value as Python's json.loads would hand it to Socorro; `repr`
// controls whether containers get their str() text (costs a walk).
PyValue ToPyValue(dom::element e, bool repr = true);

// Sets one crash-data key (reference §2) from its JSON value; unknown keys
// are ignored.
void SetCrashDataKey(CrashData& cd, std::string_view key, dom::element value);
// The crash-data dict (reference §2) from an object.
CrashData CrashDataFromObject(dom::object root);
// convert_to_crash_data for a processed crash.
CrashData CrashDataFromProcessed(dom::object root);
// SPEC §3.3 for a Telemetry crash ping.
ParseResult<CrashData> CrashDataFromPing(dom::object root);

// Field lookup with Python dict semantics for duplicates (the last one wins).
std::optional<dom::element> Field(dom::object o, std::string_view key);
// o[k1][k2]... through objects only; nullopt when any step is missing or not an object.
std::optional<dom::element> Path(dom::object o, std::initializer_list<std::string_view> keys);

// Parses `json` with this thread's DOM parser into its root element.
ParseResult<dom::element> ParseDom(std::string_view json);
// The reason for a DOM parse error (SPEC §7 names).
RejectReason FromDomError(simdjson::error_code e);

// A crash ping when `type` is the string "crash", else a processed crash.
CrashFormat FormatOf(dom::object root);
// The crash document of a parsed root (ParseCrashDocument after the parse): dimensions, ids,
// times and the CrashRecord with its signature; nullopt when accepted.
std::optional<RejectReason> ReadCrashDocument(dom::object root, CrashFormat format,
                                              const SignatureGenerator& gen, ParsedDocument& doc);

}  // namespace seismo::crash_internal
