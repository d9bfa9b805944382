#include "fuzz_targets.h"

#include <cstdlib>
#include <memory>
#include <optional>

#include "seismo/aggregate/delta.h"
#include "seismo/parse/crash_parser.h"
#include "seismo/parse/parser.h"
#include "seismo/signature/generator.h"

namespace seismo::fuzz {
namespace {

const SignatureGenerator& Signatures() {
  static const std::unique_ptr<SignatureGenerator> gen = [] {
    auto loaded = SignatureGenerator::LoadDefault();
    if (!loaded) std::abort();  // the built-in lists always load
    return std::move(*loaded);
  }();
  return *gen;
}

// "" when the accepted document satisfies the parser's contract.
std::string CheckAccepted(const ParsedDocument& d) {
  if (d.usage_ms < 0 || d.usage_ms > kMaxBhrUsageMs) return "usage out of range";
  if (d.dims.build_date != "unknown" && d.dims.build_date.size() != 8)
    return "build_date is not 8 characters";
  for (const HangRecord& h : d.hangs) {
    if (h.hang_count == 0 || h.hang_us < 0) return "hang without count or with negative time";
    if (h.signature.empty()) return "hang without signature";
    if (h.stack.empty() && h.signature != "(empty stack)") return "empty stack not named (empty stack)";
  }
  if (d.crash && d.crash->signature.size() > 255) return "crash signature over 255 characters";
  thread_local Symbols symbols;
  thread_local DeltaEncoder encoder(&symbols);
  std::vector<Delta> deltas;
  encoder.Encode(d, EventTime{0}, deltas);
  for (const Delta& delta : deltas) {
    for (size_t i = 0; i < FieldCount(delta.table()); ++i) {
      if (delta.key[i] == kNoId) return "delta with an unset key field";
    }
    if (delta.hash != KeyContentHash(delta.key, symbols)) return "delta whose hash is not its key's";
  }
  if (deltas.empty()) return "accepted document without deltas";
  return "";
}

}  // namespace

std::string ParseTarget(std::string_view data) {
  thread_local Parser parser({}, &Signatures());
  for (std::optional<DocKind> kind :
       {std::optional<DocKind>(), std::optional<DocKind>(DocKind::kMain),
        std::optional<DocKind>(DocKind::kBhr), std::optional<DocKind>(DocKind::kCrash)}) {
    auto result = parser.Parse(data, DocHints{kind});
    if (!result.ok()) continue;
    std::string problem = CheckAccepted(result.value());
    if (!problem.empty()) return problem;
  }
  return "";
}

std::string SignatureTarget(std::string_view json) {
  ParseResult<CrashData> crash = CrashDataFromAnyJson(json);
  if (!crash.ok()) return "";
  SignatureResult r = Signatures().Generate(crash.value());
  const std::string& s = r.signature;
  if (s.size() > 255) return "signature over 255 characters";
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] < 0x20 || s[i] > 0x7E) return "signature with a non-printable character";
    if (s[i] == ' ' && (i == 0 || i + 1 == s.size() || s[i + 1] == ' ')) {
      return "signature with leading, trailing or double spaces";
    }
  }
  // The document-level parser must cope with whatever the generator could read.
  (void)ParseCrashDocument(json, CrashFormat::kProcessed, Signatures());
  (void)ParseCrashDocument(json, CrashFormat::kTelemetryPing, Signatures());
  return "";
}

}  // namespace seismo::fuzz
