// Parser: one JSON document -> ParsedDocument, or the reason it was rejected.
//
// Uses simdjson On-Demand and reads only the fields seismo needs. Crash
// documents are read by the crash parser's DOM reader (crash_parser.h), which
// computes the Socorro signature; a crash source's documents (DocHints{kCrash})
// are parsed by it alone, once (ADR 0021).
//
// Ownership: one Parser per thread (it owns simdjson buffers). Threading: not
// thread-safe; the SignatureGenerator it borrows must outlive it and is
// thread-safe for concurrent Generate() calls.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "seismo/parse/document.h"
#include "seismo/parse/nesting.h"
#include "seismo/parse/options.h"

namespace seismo {

class SignatureGenerator;

// Bytes after a document that let the parser read it where it is (simdjson's padding).
inline constexpr size_t kParsePadding = 64;

// A bhr ping's timeSinceLastPing above one day is rejected as usage_too_large
// (SPEC §7 "usage over a day"); main pings are clamped to a day instead (§3.1).
inline constexpr int64_t kMaxBhrUsageMs = 86'400'000;

// What the transport says about a document: an explicit kind mapped from the
// topic (or none: detect from the document).
struct DocHints {
  constexpr DocHints() = default;
  constexpr explicit DocHints(std::optional<DocKind> k, Nesting n = {}) : kind(k), nesting(n) {}

  std::optional<DocKind> kind;
  // The depth scan's verdict when the document's source made it already (shard/pipeline.h
  // AddDocument): used when made against this parser's max_depth, else the parser scans.
  Nesting nesting;
};

class Parser {
 public:
  // `signatures` may be null: crash documents are then rejected as bad_crash.
  Parser(ParseOptions options, const SignatureGenerator* signatures);
  ~Parser();
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // `json` need not be padded or NUL-terminated; the parser copies it into
  // its padded buffer when needed.
  ParseResult<ParsedDocument> Parse(std::string_view json, DocHints hints = {});
  // The same into `out`, which is emptied first and keeps its buffers (a parse worker
  // reuses one document): nullopt when accepted, else why it was rejected (`out` is then
  // unspecified). `readable_after`: how many bytes after `json` may be read (they need not
  // be anything in particular); with kParsePadding or more the document is parsed where it
  // is, else copied into the parser's padded buffer first.
  std::optional<RejectReason> ParseInto(std::string_view json, DocHints hints, ParsedDocument& out,
                                        size_t readable_after = 0);

  const ParseOptions& options() const { return options_; }

 private:
  struct Impl;
  // A crash document, `json` as `padded` holds it (kParsePadding bytes after it): parsed
  // once, by the crash reader.
  std::optional<RejectReason> ParseCrash(std::string_view json, const char* padded, const Nesting& nesting,
                                         ParsedDocument& out);
  // Whether `json` nests deeper than max_depth: `nesting`'s verdict when made against it,
  // else a scan.
  bool Deeper(std::string_view json, const Nesting& nesting) const {
    const bool made_for_this_limit = nesting.max_depth != 0 && nesting.max_depth == options_.max_depth;
    return made_for_this_limit ? nesting.deeper : NestsDeeperThan(json, options_.max_depth);
  }
  ParseOptions options_;
  const SignatureGenerator* signatures_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seismo
