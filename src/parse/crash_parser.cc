#include "seismo/parse/crash_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "crash_json.h"
#include "seismo/signature/generator.h"

namespace seismo {

using crash_internal::CrashDataFromObject;
using crash_internal::CrashDataFromPing;
using crash_internal::CrashDataFromProcessed;
using crash_internal::Field;
using crash_internal::Path;
namespace dom = simdjson::dom;

namespace crash_internal {

ParseResult<dom::element> ParseDom(std::string_view json) {
  // One parser and one padded buffer per thread; the element returned stays
  // valid until this thread parses again.
  thread_local dom::parser parser;
  thread_local std::vector<char> buffer;
  if (buffer.size() < json.size() + simdjson::SIMDJSON_PADDING) {
    buffer.resize(json.size() + simdjson::SIMDJSON_PADDING);
  }
  if (!json.empty()) std::memcpy(buffer.data(), json.data(), json.size());
  std::memset(buffer.data() + json.size(), 0, simdjson::SIMDJSON_PADDING);
  dom::element root;
  if (simdjson::error_code e = parser.parse(buffer.data(), json.size(), false).get(root))
    return FromDomError(e);
  return root;
}

RejectReason FromDomError(simdjson::error_code e) {
  switch (e) {
    case simdjson::UTF8_ERROR:
      return RejectReason::kInvalidUtf8;
    case simdjson::DEPTH_ERROR:
      return RejectReason::kTooDeep;
    case simdjson::CAPACITY:
      return RejectReason::kTooLarge;
    default:
      return RejectReason::kMalformedJson;
  }
}

}  // namespace crash_internal

namespace {

ParseResult<dom::object> ParseObject(std::string_view json) {
  ParseResult<dom::element> root = crash_internal::ParseDom(json);
  if (!root.ok()) return root.reason();
  if (root.value().type() != dom::element_type::OBJECT) return RejectReason::kNotObject;
  return dom::object(root.value());
}

bool IsNull(const std::optional<dom::element>& e) { return !e || e->type() == dom::element_type::NULL_VALUE; }

// A string field: missing/null -> nullopt, non-string -> kWrongType.
std::optional<RejectReason> OptString(const std::optional<dom::element>& e, std::optional<std::string>& out) {
  out.reset();
  if (IsNull(e)) return std::nullopt;
  if (e->type() != dom::element_type::STRING) return RejectReason::kWrongType;
  out = std::string(std::string_view(*e));
  return std::nullopt;
}

// The first of `keys` that is present and not null.
std::optional<dom::element> FirstOf(dom::object o, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    std::optional<dom::element> e = Field(o, k);
    if (!IsNull(e)) return e;
  }
  return std::nullopt;
}

bool HasEightLeadingDigits(std::string_view b) {
  return b.size() >= 8 && std::all_of(b.begin(), b.begin() + 8, [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<RejectReason> SetDim(const std::optional<dom::element>& e, std::string& dim) {
  std::optional<std::string> v;
  if (auto r = OptString(e, v)) return r;
  if (v) dim = std::move(*v);
  return std::nullopt;
}

// Reads a timestamp field into `out` (missing/null -> unset).
std::optional<RejectReason> SetTime(const std::optional<dom::element>& e, std::optional<EventTime>& out) {
  std::optional<std::string> text;
  if (auto r = OptString(e, text)) return r;
  if (!text) return std::nullopt;
  out = ParseTimestamp(*text);
  if (!out) return RejectReason::kBadTimestamp;
  return std::nullopt;
}

std::optional<RejectReason> PingDocument(dom::object root, ParsedDocument& doc, CrashRecord& crash,
                                         std::string& ipc_error) {
  std::optional<dom::element> app_e = Field(root, "application");
  if (IsNull(app_e)) return RejectReason::kMissingBuildId;
  if (app_e->type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
  dom::object app(*app_e);
  std::optional<dom::element> build = Field(app, "buildId");
  if (IsNull(build)) return RejectReason::kMissingBuildId;
  if (build->type() != dom::element_type::STRING) return RejectReason::kWrongType;
  std::string_view b(*build);
  if (!HasEightLeadingDigits(b)) return RejectReason::kBadBuildId;
  doc.dims.build_id = std::string(b);
  doc.dims.build_date = doc.dims.build_id.substr(0, 8);
  if (auto r = SetDim(Field(app, "channel"), doc.dims.channel)) return r;
  if (auto r = SetDim(Field(app, "name"), doc.dims.product)) return r;
  if (auto r = SetDim(FirstOf(app, {"displayVersion", "version"}), doc.dims.version)) return r;
  if (auto r = SetDim(Path(root, {"environment", "system", "os", "name"}), doc.dims.os)) return r;

  std::optional<dom::element> payload_e = Field(root, "payload");
  if (IsNull(payload_e)) return RejectReason::kBadCrash;
  if (payload_e->type() != dom::element_type::OBJECT) return RejectReason::kWrongType;
  dom::object payload(*payload_e);

  // One crash can send two pings (crash reporter client and CrashManager), each
  // with its own document id but the same payload.crashId: the crash id wins.
  std::optional<std::string> id;
  if (auto r = OptString(Field(payload, "crashId"), id)) return r;
  if (!id) {
    if (auto r = OptString(FirstOf(root, {"id", "uuid", "crashId", "crash_id"}), id)) return r;
  }
  if (id) doc.doc_id = "crash-ping:" + *id;
  if (auto r = SetTime(Field(root, "submission_timestamp"), doc.primary_time)) return r;
  // creationDate is the client's clock: unreadable text means absent (ADR 0001); a value
  // that is not a string is wrong_type, as in main and bhr pings.
  std::optional<std::string> creation;
  if (auto r = OptString(Field(root, "creationDate"), creation)) return r;
  if (creation) doc.fallback_time = ParseTimestamp(*creation);

  std::optional<std::string> process;
  if (auto r = OptString(Field(payload, "processType"), process)) return r;
  crash.process = NormalizeProcess(process.value_or(""));
  std::optional<std::string> startup;
  if (auto r = OptString(Path(payload, {"metadata", "StartupCrash"}), startup)) return r;
  crash.startup = startup == "1";
  std::optional<std::string> ipc;
  if (auto r = OptString(Path(payload, {"metadata", "ipc_channel_error"}), ipc)) return r;
  ipc_error = ipc.value_or("");
  std::optional<std::string> client;
  if (auto r = OptString(Field(root, "clientId"), client)) return r;
  crash.install_id = client.value_or("");
  return std::nullopt;
}

std::optional<RejectReason> ProcessedDocument(dom::object root, ParsedDocument& doc, CrashRecord& crash,
                                              std::string& ipc_error) {
  std::optional<dom::element> build = FirstOf(root, {"build", "BuildID"});
  if (build) {
    if (build->type() != dom::element_type::STRING) return RejectReason::kWrongType;
    std::string_view b(*build);
    if (!HasEightLeadingDigits(b)) return RejectReason::kBadBuildId;
    doc.dims.build_id = std::string(b);
    doc.dims.build_date = doc.dims.build_id.substr(0, 8);
  }
  if (auto r = SetDim(FirstOf(root, {"release_channel", "ReleaseChannel"}), doc.dims.channel)) return r;
  if (auto r = SetDim(FirstOf(root, {"product", "ProductName"}), doc.dims.product)) return r;
  if (auto r = SetDim(FirstOf(root, {"version", "Version"}), doc.dims.version)) return r;
  std::optional<dom::element> os = Field(root, "os_name");
  if (IsNull(os)) os = Path(root, {"json_dump", "system_info", "os"});
  if (auto r = SetDim(os, doc.dims.os)) return r;
  doc.dims.os = NormalizeOs(doc.dims.os);

  std::optional<std::string> id;
  if (auto r = OptString(FirstOf(root, {"id", "uuid", "crashId", "crash_id"}), id)) return r;
  if (id) doc.doc_id = "crash:" + *id;
  if (auto r = SetTime(FirstOf(root, {"submitted_timestamp", "date_processed"}), doc.primary_time)) return r;

  std::optional<std::string> process;
  if (auto r = OptString(Field(root, "process_type"), process)) return r;
  crash.process = NormalizeProcess(process.value_or(""));
  std::optional<dom::element> startup = Field(root, "startup_crash");
  crash.startup = !IsNull(startup) &&
                  ((startup->type() == dom::element_type::BOOL && bool(*startup)) ||
                   (startup->type() == dom::element_type::STRING && std::string_view(*startup) == "1"));
  std::optional<dom::element> ipc = Field(root, "ipc_channel_error");
  ipc_error =
      (!IsNull(ipc) && ipc->type() == dom::element_type::STRING) ? std::string(std::string_view(*ipc)) : "";
  std::optional<dom::element> install = Field(root, "install_time");
  if (!IsNull(install)) {
    switch (install->type()) {
      case dom::element_type::INT64:
        crash.install_id = std::to_string(int64_t(*install));
        break;
      case dom::element_type::UINT64:
        crash.install_id = std::to_string(uint64_t(*install));
        break;
      case dom::element_type::STRING:
        crash.install_id = std::string(std::string_view(*install));
        break;
      default:
        return RejectReason::kWrongType;
    }
  }
  return std::nullopt;
}

bool IsProcessedCrashDataDict(dom::object root) {
  return !Field(root, "json_dump") && (Field(root, "threads") || Field(root, "crashing_thread"));
}

}  // namespace

namespace crash_internal {

CrashFormat FormatOf(dom::object root) {
  std::optional<dom::element> type = Field(root, "type");
  return type && type->type() == dom::element_type::STRING && std::string_view(*type) == "crash"
             ? CrashFormat::kTelemetryPing
             : CrashFormat::kProcessed;
}

std::optional<RejectReason> ReadCrashDocument(dom::object root, CrashFormat format,
                                              const SignatureGenerator& gen, ParsedDocument& doc) {
  doc.kind = DocKind::kCrash;
  CrashRecord crash;
  std::string ipc_error;
  std::optional<RejectReason> reject = format == CrashFormat::kTelemetryPing
                                           ? PingDocument(root, doc, crash, ipc_error)
                                           : ProcessedDocument(root, doc, crash, ipc_error);
  if (reject) return *reject;

  CrashData data;
  if (format == CrashFormat::kTelemetryPing) {
    ParseResult<CrashData> d = CrashDataFromPing(root);
    if (!d.ok()) return d.reason();
    data = std::move(d.value());
  } else {
    data = IsProcessedCrashDataDict(root) ? CrashDataFromObject(root) : CrashDataFromProcessed(root);
  }
  SignatureResult sig = gen.Generate(data);
  crash.signature = std::move(sig.signature);
  crash.proto_signature = std::move(sig.proto_signature);
  crash.crash_class = ClassifyCrash(crash.process, ipc_error);
  doc.crash = std::move(crash);
  return std::nullopt;
}

}  // namespace crash_internal

ParseResult<CrashData> CrashDataFromJson(std::string_view json) {
  ParseResult<dom::object> root = ParseObject(json);
  if (!root.ok()) return root.reason();
  return CrashDataFromObject(root.value());
}

ParseResult<CrashData> CrashDataFromProcessedJson(std::string_view json) {
  ParseResult<dom::object> root = ParseObject(json);
  if (!root.ok()) return root.reason();
  return CrashDataFromProcessed(root.value());
}

ParseResult<CrashData> CrashDataFromPingJson(std::string_view json) {
  ParseResult<dom::object> root = ParseObject(json);
  if (!root.ok()) return root.reason();
  return CrashDataFromPing(root.value());
}

ParseResult<CrashData> CrashDataFromAnyJson(std::string_view json, CrashInput* detected) {
  ParseResult<dom::object> root = ParseObject(json);
  if (!root.ok()) return root.reason();
  dom::object o = root.value();
  std::optional<dom::element> type = Field(o, "type");
  CrashInput kind = CrashInput::kCrashData;
  const bool typed = type && type->type() == dom::element_type::STRING;
  if (typed && std::string_view(*type) == "crash") {
    kind = CrashInput::kPing;
  } else if (typed) {
    return RejectReason::kUnknownKind;  // a main, bhr or other Telemetry ping: no crash
  } else if (Field(o, "json_dump")) {
    kind = CrashInput::kProcessed;
  }
  if (detected != nullptr) *detected = kind;
  switch (kind) {
    case CrashInput::kPing:
      return CrashDataFromPing(o);
    case CrashInput::kProcessed:
      return CrashDataFromProcessed(o);
    default:
      return CrashDataFromObject(o);
  }
}

CrashClass ClassifyCrash(std::string_view process, std::string_view ipc_channel_error) {
  if (process == "parent") return CrashClass::kParent;
  if (process == "content") {
    return ipc_channel_error.find("ShutDownKill") != std::string_view::npos ? CrashClass::kContentShutdown
                                                                            : CrashClass::kContent;
  }
  if (process == "gpu") return CrashClass::kGpu;
  if (process == "rdd") return CrashClass::kRdd;
  if (process == "socket") return CrashClass::kSocket;
  if (process == "utility") return CrashClass::kUtility;
  if (process == "gmplugin") return CrashClass::kGmplugin;
  if (process == "plugin") return CrashClass::kPlugin;
  return CrashClass::kOther;
}

std::optional<RejectReason> ParseCrashDocument(std::string_view json, CrashFormat format,
                                               const SignatureGenerator& gen, ParsedDocument& doc) {
  ParseResult<dom::object> root = ParseObject(json);
  if (!root.ok()) return root.reason();
  return crash_internal::ReadCrashDocument(root.value(), format, gen, doc);
}

ParseResult<ParsedDocument> ParseCrashDocument(std::string_view json, CrashFormat format,
                                               const SignatureGenerator& gen) {
  ParsedDocument doc;
  if (std::optional<RejectReason> r = ParseCrashDocument(json, format, gen, doc)) return *r;
  return doc;
}

}  // namespace seismo
