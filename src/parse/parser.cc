#include "seismo/parse/parser.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "crash_json.h"
#include "json_util.h"
#include "ping_fields.h"
#include "scrub_document.h"
#include "seismo/parse/crash_parser.h"
#include "seismo/parse/hang_math.h"

namespace seismo {

using parse_internal::FromSimdjson;
using parse_internal::Outcome;
using parse_internal::PingFields;
namespace od = simdjson::ondemand;

namespace {

std::optional<DocKind> KindFromType(const std::optional<std::string_view>& type) {
  if (!type) return std::nullopt;
  if (*type == "main" || *type == "saved-session" || *type == "first-shutdown") return DocKind::kMain;
  if (*type == "bhr") return DocKind::kBhr;
  if (*type == "crash") return DocKind::kCrash;
  return std::nullopt;
}

bool Contains(const std::vector<std::string>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Fills dims from the ping's application/environment fields.
Outcome FillDimensions(const PingFields& f, Dimensions& d) {
  if (!f.build_id) return RejectReason::kMissingBuildId;
  const std::string_view b = *f.build_id;
  if (b.size() < 8 || !std::all_of(b.begin(), b.begin() + 8, [](char c) { return c >= '0' && c <= '9'; })) {
    return RejectReason::kBadBuildId;
  }
  d.build_id = b;
  d.build_date = b.substr(0, 8);
  if (f.channel) d.channel = *f.channel;
  if (f.name) d.product = *f.name;
  if (f.display_version) {
    d.version = *f.display_version;
  } else if (f.version) {
    d.version = *f.version;
  }
  if (f.os_name) d.os = *f.os_name;
  return std::nullopt;
}

// A document the [hangs] channel and OS filters leave out.
bool FilteredOut(const Dimensions& d, const HangOptions& o) {
  return (!o.channels.empty() && !Contains(o.channels, d.channel)) ||
         (!o.os_names.empty() && !Contains(o.os_names, d.os));
}

bool KeepHang(std::string_view process, std::string_view thread, const HangOptions& o) {
  if (!o.threads.empty() && !Contains(o.threads, thread)) return false;
  if (!o.processes.empty() && !Contains(o.processes, process)) return false;
  return true;
}

// The hang's signature from its (unscrubbed) frames: a view of one of them, so that
// ScrubDocument can find it and give it its frame's scrubbed text.
void SetSignature(ParsedDocument& doc, HangRecord& h, const std::vector<bool>& native,
                  HangSignatureMode mode) {
  const std::optional<size_t> i = HangSignatureFrame(doc.Stack(h), native, mode);
  h.signature = i ? doc.frames[h.frames_begin + *i] : kEmptyStackSignature;
}

void FinishMain(PingFields& f, const HangOptions& o, ParsedDocument& doc) {
  bool children = o.child_payloads == ChildPayloads::kAll ||
                  (o.child_payloads == ChildPayloads::kShutdownOnly &&
                   (f.reason == "shutdown" || f.type == "saved-session"));
  auto add = [&](const std::vector<parse_internal::RawLegacyHang>& hangs, std::string_view process) {
    for (const parse_internal::RawLegacyHang& raw : hangs) {
      if (!KeepHang(process, raw.thread, o)) continue;
      HangRecord& h = doc.hangs.emplace_back();
      h.process = process;
      h.thread = doc.text.Copy(raw.thread);
      h.frames_begin = static_cast<uint32_t>(doc.frames.size());
      for (size_t i = raw.frames_begin; i < raw.frames_end; ++i)
        doc.frames.push_back(doc.text.Copy(f.legacy_frames[i]));
      h.frames_end = static_cast<uint32_t>(doc.frames.size());
      SetSignature(doc, h, {}, o.signature);
      h.hang_us = raw.hang_us;
      h.hang_count = raw.hang_count;
    }
  };
  add(f.parent_hangs, "parent");
  if (children) add(f.child_hangs, "content");
  doc.usage_ms = std::min<int64_t>(f.subsession_length.value, 86400) * 1000;
  doc.subprocess_crashes = f.subprocess_crashes;
}

void FinishBhr(PingFields& f, const HangOptions& o, std::vector<bool>& native, ParsedDocument& doc) {
  doc.usage_ms = f.time_since_last_ping.value;
  for (const parse_internal::RawBhrHang& raw : f.bhr_hangs) {
    if (raw.duration_us < o.min_ms * 1000 || raw.duration_us >= o.bhr_max_ms * 1000) continue;
    if (raw.raw_stack_len == 0 || raw.raw_stack_len >= 300) continue;
    const std::string process = NormalizeProcess(raw.process);
    if (!KeepHang(process, raw.thread, o)) continue;
    HangRecord& h = doc.hangs.emplace_back();
    h.process = doc.text.Copy(process);
    h.thread = doc.text.Copy(raw.thread);
    native.clear();
    h.frames_begin = static_cast<uint32_t>(doc.frames.size());
    for (size_t i = raw.frames_begin; i < raw.frames_end; ++i) {
      const parse_internal::RawFrame& fr = f.bhr_frames[i];
      if (!fr.native) {
        doc.frames.push_back(doc.text.Copy(fr.text));
        native.push_back(false);
      } else if (auto text = RenderNativeFrame(fr.module_index, fr.text, f.modules, doc.text)) {
        doc.frames.push_back(*text);
        native.push_back(true);
      }
    }
    h.frames_end = static_cast<uint32_t>(doc.frames.size());
    SetSignature(doc, h, native, o.signature);
    h.hang_us = raw.duration_us;
    h.hang_count = 1;
  }
}

}  // namespace

struct Parser::Impl {
  od::parser parser;
  simdjson::dom::parser dom;  // crash documents: the signature reads them at random
  std::vector<char> buffer;  // the document followed by SIMDJSON_PADDING bytes
  // Reused from one document to the next.
  PingFields fields;
  std::vector<bool> native;
  parse_internal::ScrubCache scrub_cache;
};

static_assert(kParsePadding >= simdjson::SIMDJSON_PADDING);

Parser::Parser(ParseOptions options, const SignatureGenerator* signatures)
    : options_(std::move(options)), signatures_(signatures), impl_(std::make_unique<Impl>()) {}

Parser::~Parser() = default;

ParseResult<ParsedDocument> Parser::Parse(std::string_view json, DocHints hints) {
  ParsedDocument out;
  if (std::optional<RejectReason> r = ParseInto(json, hints, out)) return *r;
  return out;
}

std::optional<RejectReason> Parser::ParseInto(std::string_view json, DocHints hints, ParsedDocument& out,
                                              size_t readable_after) {
  out.Clear();
  if (json.size() > options_.max_document_bytes) return RejectReason::kTooLarge;

  simdjson::padded_string_view padded;
  if (readable_after >= simdjson::SIMDJSON_PADDING) {
    padded = simdjson::padded_string_view(json.data(), json.size(), json.size() + readable_after);
  } else {
    std::vector<char>& buf = impl_->buffer;
    if (buf.size() < json.size() + simdjson::SIMDJSON_PADDING) {
      buf.resize(json.size() + simdjson::SIMDJSON_PADDING);
    }
    std::memcpy(buf.data(), json.data(), json.size());
    std::memset(buf.data() + json.size(), 0, simdjson::SIMDJSON_PADDING);
    padded = simdjson::padded_string_view(buf.data(), json.size(), buf.size());
  }

  // A document of a crash source is parsed once, by the crash reader (ADR 0021).
  if (hints.kind == DocKind::kCrash) return ParseCrash(json, padded.data(), hints.nesting, out);

  if (impl_->parser.capacity() < json.size() || impl_->parser.max_depth() != options_.max_depth) {
    size_t capacity = std::max<size_t>(json.size(), 64 * 1024);
    if (auto e = impl_->parser.allocate(capacity, options_.max_depth)) return FromSimdjson(e);
  }

  // simdjson's stage 1 (run whole by iterate) validates UTF-8, so a document it accepts
  // is valid UTF-8 and is not read twice. Its first error wins over a bad byte found
  // later, so on an error the reasons are decided as before: invalid UTF-8 first, then
  // too deep, then what simdjson said.
  od::document doc;
  if (auto e = impl_->parser.iterate(padded).get(doc)) {
    if (!simdjson::validate_utf8(json.data(), json.size())) return RejectReason::kInvalidUtf8;
    if (Deeper(json, hints.nesting)) return RejectReason::kTooDeep;
    return FromSimdjson(e);
  }
  if (Deeper(json, hints.nesting)) return RejectReason::kTooDeep;
  od::json_type root_type;
  if (auto e = doc.type().get(root_type)) return FromSimdjson(e);
  if (root_type != od::json_type::object) {
    // Rare path: tell "valid JSON, not an object" from "not JSON at all".
    simdjson::dom::parser validator;
    simdjson::dom::element ignored;
    return validator.parse(json.data(), json.size(), true).get(ignored) ? RejectReason::kMalformedJson
                                                                        : RejectReason::kNotObject;
  }
  od::object root;
  if (auto e = doc.get_object().get(root)) return FromSimdjson(e);

  PingFields& f = impl_->fields;
  f.Clear();
  if (Outcome o = parse_internal::ReadPingFields(root, options_.hangs, f)) return *o;

  std::optional<DocKind> kind = hints.kind ? hints.kind : KindFromType(f.type);
  if (!kind && f.has_crash_keys) kind = DocKind::kCrash;
  if (!kind) return RejectReason::kUnknownKind;

  if (*kind == DocKind::kCrash) return ParseCrash(json, padded.data(), hints.nesting, out);
  const HangOptions& o = options_.hangs;

  // Everything was read: the document must end here (catches trailing garbage
  // and unbalanced structure).
  // simdjson 3.0 has no document::at_end(); current_location() says OUT_OF_BOUNDS there.
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) return RejectReason::kMalformedJson;

  out.kind = *kind;
  if (Outcome r = FillDimensions(f, out.dims)) return *r;
  if (FilteredOut(out.dims, o)) return RejectReason::kFiltered;
  if (f.id) out.doc_id = *f.id;
  if (f.client_id) out.install_id = *f.client_id;
  if (f.submission_timestamp) {
    out.primary_time = ParseTimestamp(*f.submission_timestamp);
    if (!out.primary_time) return RejectReason::kBadTimestamp;
  }
  // creationDate is the client's clock: an unreadable one is ignored, not fatal.
  if (f.creation_date) out.fallback_time = ParseTimestamp(*f.creation_date);

  if (*kind == DocKind::kMain) {
    if (!f.subsession_length.valid) return RejectReason::kBadUsage;
    FinishMain(f, o, out);
  } else {
    if (!f.time_since_last_ping.valid) return RejectReason::kBadUsage;
    if (f.time_since_last_ping.value > kMaxBhrUsageMs) return RejectReason::kUsageTooLarge;
    FinishBhr(f, o, impl_->native, out);
  }
  parse_internal::ScrubDocument(out, Scrubber::Default(), impl_->scrub_cache);
  return std::nullopt;
}

// The crash reader's DOM, in place. On an error the reasons are decided as for the other
// kinds: invalid UTF-8 first, then too deep, then what simdjson said.
std::optional<RejectReason> Parser::ParseCrash(std::string_view json, const char* padded,
                                               const Nesting& nesting, ParsedDocument& out) {
  simdjson::dom::parser& dom = impl_->dom;
  if (dom.capacity() < json.size() || dom.max_depth() != options_.max_depth) {
    if (auto e = dom.allocate(std::max<size_t>(json.size(), 64 * 1024), options_.max_depth))
      return FromSimdjson(e);
  }
  simdjson::dom::element root;
  if (auto e = dom.parse(padded, json.size(), false).get(root)) {
    if (!simdjson::validate_utf8(json.data(), json.size())) return RejectReason::kInvalidUtf8;
    if (Deeper(json, nesting)) return RejectReason::kTooDeep;
    return crash_internal::FromDomError(e);
  }
  if (root.type() != simdjson::dom::element_type::OBJECT) return RejectReason::kNotObject;
  if (signatures_ == nullptr) return RejectReason::kBadCrash;
  const simdjson::dom::object o(root);
  if (auto r = crash_internal::ReadCrashDocument(o, crash_internal::FormatOf(o), *signatures_, out)) return r;
  if (FilteredOut(out.dims, options_.hangs)) return RejectReason::kFiltered;
  parse_internal::ScrubDocument(out, Scrubber::Default(), impl_->scrub_cache);
  return std::nullopt;
}

}  // namespace seismo
