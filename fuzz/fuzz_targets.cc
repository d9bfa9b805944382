#include "fuzz_targets.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <variant>

#include "seismo/aggregate/delta.h"
#include "seismo/cluster/global_view.h"
#include "seismo/cluster/record.h"
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
    if (d.Stack(h).empty() && h.signature != "(empty stack)") return "empty stack not named (empty stack)";
    if (h.frames_begin > h.frames_end || h.frames_end > d.frames.size())
      return "hang stack outside the frames";
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

std::string AggregatesRecordTarget(std::string_view data) {
  if (data.empty()) return "";
  const auto head = static_cast<uint8_t>(data[0]);
  const size_t key_size = std::min<size_t>(head & 0x7f, data.size() - 1);
  const std::string_view key = data.substr(1, key_size);
  const std::optional<std::string_view> value =
      (head & 0x80) != 0 ? std::nullopt : std::optional<std::string_view>(data.substr(1 + key_size));
  thread_local Symbols symbols;
  {
    // The global view takes any record without a crash, and what it did shows: a record
    // under a partial or counts key is in its partition, degraded exactly when it was rejected.
    GlobalView view(AggregateOptions{}, &symbols);
    const std::optional<std::string> why = view.Apply(key, value, 0);
    (void)view.Build();
    if (why && why->empty()) return "the view rejected a record without a line";
    const std::optional<RecordKey> named = DecodeRecordKey(key);
    if (named && named->kind != RecordKind::kAlertState) {
      const auto partitions = view.Partitions();
      if (partitions.size() != 1) return "a record under a partition's key and no partition in the view";
      if (partitions[0].degraded() != why.has_value())
        return "a partition degraded by a record it took, or not by one it refused";
    }
  }
  RecordResult r = DecodeRecord(key, value, symbols);
  if (!r.ok())
    return (RecordRejectName(r.reason()).empty() || r.detail().empty()) ? "rejection without reason" : "";
  auto encode = [&](const AggregatesRecord& record) {
    if (const auto* p = std::get_if<PartialRecord>(&record)) return EncodePartial(*p, symbols);
    if (const auto* c = std::get_if<CountsRecord>(&record)) return EncodeCounts(*c);
    if (const auto* d = std::get_if<CrashIdsRecord>(&record)) return EncodeCrashIds(*d);
    return EncodeAlertState(std::get<AlertStateRecord>(record));
  };
  std::string again;
  if (const auto* p = std::get_if<PartialRecord>(&r.value())) {
    if (PartialKey(p->where) != key) return "a partial decoded under a key that is not its own";
    again = encode(r.value());
  } else if (const auto* c = std::get_if<CountsRecord>(&r.value())) {
    if (CountsKey(c->topic, c->partition) != key) return "counts decoded under a key that is not their own";
    again = encode(r.value());
  } else if (const auto* d = std::get_if<CrashIdsRecord>(&r.value())) {
    if (CrashIdsKey(d->topic, d->partition, d->epoch, d->chunk) != key)
      return "crash ids decoded under a key that is not their own";
    again = encode(r.value());
  } else if (std::holds_alternative<AlertStateRecord>(r.value())) {
    if (key != AlertStateKey()) return "alert state decoded under another key";
    again = encode(r.value());
  } else {
    if (value) return "a tombstone with a value";
    const Tombstone& t = std::get<Tombstone>(r.value());
    const std::string own = t.kind == RecordKind::kCrashIds
                                ? CrashIdsKey(t.where.topic, t.where.partition, t.where.bucket, t.where.part)
                                : PartialKey(t.where);
    if (own != key) return "a tombstone under a key not its own";
    return "";
  }
  RecordResult second = DecodeRecord(key, again, symbols);
  if (!second.ok()) return "a re-encoded record is rejected: " + second.detail();
  if (encode(second.value()) != again) return "re-encoding is not a fixed point";
  return "";
}

}  // namespace seismo::fuzz
