#include "seismo/cluster/record.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

#include "seismo/core/bytes.h"
#include "seismo/core/hash.h"

namespace seismo {
namespace {

constexpr size_t kHeaderBytes = 29;  // magic 8, version 4, kind 1, length 8, checksum 8
constexpr std::string_view kPartialPrefix = "p/";
constexpr std::string_view kAlertStateKey = "a/alerts";
constexpr std::string_view kCountsPrefix = "c/";
constexpr std::string_view kCrashIdsPrefix = "d/";

std::string Frame(RecordKind kind, std::string_view payload) {
  ByteWriter w;
  for (char c : kAggregatesMagic) w.U8(static_cast<uint8_t>(c));
  w.Fixed32(kAggregatesFormatVersion);
  w.U8(static_cast<uint8_t>(kind));
  w.Fixed64(payload.size());
  w.Fixed64(Hash64(payload));
  std::string out = w.Take();
  out += payload;
  return out;
}

template <typename T>
bool ParseInt(std::string_view s, T& out) {
  if (s.empty() || s.front() == '+') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

RecordResult Reject(RecordReject reason, std::string detail) {
  return RecordResult(reason, std::move(detail));
}

RecordResult DecodePartialPayload(std::string_view payload, const PartitionBucket& where, uint32_t version,
                                  Symbols& symbols) {
  ByteReader r(payload);
  PartialRecord p;
  p.where.topic = std::string(r.Str());
  const int64_t partition = r.I64();
  p.where.bucket = r.I64();
  const uint64_t part = r.U64();
  const uint64_t parts = r.U64();
  p.bucket_ms = r.I64();
  p.source_offset = r.I64();
  p.stream_time_ms = r.I64();
  p.owner = std::string(r.Str());
  // Ranges are checked before narrowing: a wrapped number could pass for the key's.
  if (!r.ok() || p.bucket_ms <= 0 || partition < 0 || partition > INT32_MAX || part >= kMaxPartialParts ||
      parts == 0 || parts > kMaxPartialParts || (parts & (parts - 1)) != 0) {
    return Reject(RecordReject::kCorrupt, "undecodable partial header");
  }
  p.where.partition = static_cast<int32_t>(partition);
  p.where.part = static_cast<uint32_t>(part);
  p.parts = static_cast<uint32_t>(parts);
  if (!(p.where == where) || p.where.part >= p.parts) {
    return Reject(RecordReject::kKeyMismatch,
                  fmt::format("value holds {} of {} parts", PartialKey(p.where), p.parts));
  }
  const SeriesSetFormat format =
      version < 2 ? SeriesSetFormat::kCrashEntryInstalls : SeriesSetFormat::kWithUsageEntryInstalls;
  if (!DecodeSeriesSet(r, symbols, p.series, format) || !r.at_end()) {
    return Reject(RecordReject::kCorrupt, "undecodable series");
  }
  for (const SeriesImage& s : p.series) {
    if (s.entries.size() != 1 || s.entries.front().bucket != where.bucket) {
      return Reject(RecordReject::kKeyMismatch,
                    fmt::format("a series holds other buckets than {}", where.bucket));
    }
    if (KeyContentHash(s.key, symbols) % p.parts != where.part) {
      return Reject(RecordReject::kKeyMismatch, fmt::format("a series of another part than {}", where.part));
    }
  }
  return AggregatesRecord(std::move(p));
}

RecordResult DecodeAlertPayload(std::string_view payload) {
  ByteReader r(payload);
  AlertStateRecord a;
  a.holder = std::string(r.Str());
  a.evaluated_ms = r.I64();
  a.state = std::string(r.Str());
  if (!r.ok() || !r.at_end()) return Reject(RecordReject::kCorrupt, "undecodable alert state");
  return AggregatesRecord(std::move(a));
}

RecordResult DecodeCountsPayload(std::string_view payload, const PartitionBucket& where) {
  ByteReader r(payload);
  CountsRecord c;
  c.topic = std::string(r.Str());
  const int64_t partition = r.I64();
  c.source_offset = r.I64();
  c.owner = std::string(r.Str());
  DecodeRecordCounts(r, c.counts.records);
  ShardCounters& sc = c.counts.shards;
  for (uint64_t* v : {&sc.deltas, &sc.duplicates, &sc.late_dropped, &sc.folded, &sc.dedup_forgotten})
    *v = r.U64();
  if (!r.ok() || !r.at_end() || partition < 0 || partition > INT32_MAX) {
    return Reject(RecordReject::kCorrupt, "undecodable counts");
  }
  c.partition = static_cast<int32_t>(partition);
  if (c.topic != where.topic || c.partition != where.partition) {
    return Reject(RecordReject::kKeyMismatch, fmt::format("value holds {}", CountsKey(c.topic, c.partition)));
  }
  return AggregatesRecord(std::move(c));
}

RecordResult DecodeCrashIdsPayload(std::string_view payload, const PartitionBucket& where) {
  ByteReader r(payload);
  CrashIdsRecord c;
  c.topic = std::string(r.Str());
  const int64_t partition = r.I64();
  c.epoch = r.I64();
  const uint64_t chunk = r.U64();
  c.owner = std::string(r.Str());
  const uint64_t n = r.Count(8);  // checked against the bytes left: a forged count reserves nothing
  // Epochs and chunks at their types' ends are refused: readers add and subtract one.
  if (!r.ok() || partition < 0 || partition > INT32_MAX || chunk >= UINT32_MAX || n > kMaxCrashIdsPerRecord ||
      c.epoch <= INT64_MIN + 1 || c.epoch >= INT64_MAX - 1) {
    return Reject(RecordReject::kCorrupt, "undecodable crash ids header");
  }
  c.ids.reserve(n);
  for (uint64_t i = 0; i < n; ++i) c.ids.push_back(r.Fixed64());
  if (!r.ok() || !r.at_end() || !std::is_sorted(c.ids.begin(), c.ids.end()) ||
      std::adjacent_find(c.ids.begin(), c.ids.end()) != c.ids.end()) {
    return Reject(RecordReject::kCorrupt, "undecodable crash ids");
  }
  c.partition = static_cast<int32_t>(partition);
  c.chunk = static_cast<uint32_t>(chunk);
  if (c.topic != where.topic || c.partition != where.partition || c.epoch != where.bucket ||
      c.chunk != where.part) {
    return Reject(RecordReject::kKeyMismatch,
                  fmt::format("value holds {}", CrashIdsKey(c.topic, c.partition, c.epoch, c.chunk)));
  }
  return AggregatesRecord(std::move(c));
}

// "<topic>/<partition>" with a partition in canonical form, into `where`.
bool DecodeTopicPartition(std::string_view rest, PartitionBucket& where) {
  const size_t slash = rest.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return false;
  where.topic = std::string(rest.substr(0, slash));
  if (where.topic.find('/') != std::string::npos) return false;
  return ParseInt(rest.substr(slash + 1), where.partition) && where.partition >= 0;
}

}  // namespace

std::string_view RecordRejectName(RecordReject r) {
  switch (r) {
    case RecordReject::kCorrupt:
      return "corrupt";
    case RecordReject::kTruncated:
      return "truncated";
    case RecordReject::kUnknownVersion:
      return "unknown_version";
    case RecordReject::kKeyMismatch:
      return "key_mismatch";
  }
  return "corrupt";
}

std::string PartialKey(const PartitionBucket& where) {
  return fmt::format("{}{}/{}/{}/{}", kPartialPrefix, where.topic, where.partition, where.bucket, where.part);
}

std::string AlertStateKey() { return std::string(kAlertStateKey); }

std::string CountsKey(std::string_view topic, int32_t partition) {
  return fmt::format("{}{}/{}", kCountsPrefix, topic, partition);
}

std::string CrashIdsKey(std::string_view topic, int32_t partition, int64_t epoch, uint32_t chunk) {
  return fmt::format("{}{}/{}/{}/{}", kCrashIdsPrefix, topic, partition, epoch, chunk);
}

std::optional<RecordKey> DecodeRecordKey(std::string_view key) {
  if (key == kAlertStateKey) return RecordKey{RecordKind::kAlertState, {}};
  if (key.starts_with(kCountsPrefix)) {
    RecordKey k{RecordKind::kCounts, {}};
    if (!DecodeTopicPartition(key.substr(kCountsPrefix.size()), k.where)) return std::nullopt;
    if (CountsKey(k.where.topic, k.where.partition) != key) return std::nullopt;  // not canonical
    return k;
  }
  const bool crash_ids = key.starts_with(kCrashIdsPrefix);
  if (!crash_ids && !key.starts_with(kPartialPrefix)) return std::nullopt;
  // Topic names cannot hold '/' (Kafka allows [a-zA-Z0-9._-]): the last three fields are numbers.
  const std::string_view rest = key.substr(kPartialPrefix.size());  // both prefixes are 2 bytes
  std::array<size_t, 3> slash{};  // the last three '/', right to left
  size_t end = rest.size();
  for (size_t& at : slash) {
    at = end == 0 ? std::string_view::npos : rest.rfind('/', end - 1);
    if (at == std::string_view::npos || at == 0) return std::nullopt;
    end = at;
  }
  RecordKey k;
  k.kind = crash_ids ? RecordKind::kCrashIds : RecordKind::kPartial;
  k.where.topic = std::string(rest.substr(0, slash[2]));
  if (k.where.topic.find('/') != std::string::npos) return std::nullopt;
  auto field = [&](size_t i) {
    return rest.substr(slash[i] + 1, (i == 0 ? rest.size() : slash[i - 1]) - slash[i] - 1);
  };
  if (!ParseInt(field(2), k.where.partition) || k.where.partition < 0) return std::nullopt;
  if (!ParseInt(field(1), k.where.bucket)) return std::nullopt;
  if (!ParseInt(field(0), k.where.part) || (!crash_ids && k.where.part >= kMaxPartialParts))
    return std::nullopt;
  const std::string canonical =
      crash_ids ? CrashIdsKey(k.where.topic, k.where.partition, k.where.bucket, k.where.part)
                : PartialKey(k.where);
  if (canonical != key) return std::nullopt;  // not canonical: "01", "-0"
  return k;
}

std::string EncodePartial(const PartialRecord& p, const Symbols& symbols) {
  ByteWriter w;
  w.Str(p.where.topic);
  w.I64(p.where.partition);
  w.I64(p.where.bucket);
  w.U64(p.where.part);
  w.U64(p.parts);
  w.I64(p.bucket_ms);
  w.I64(p.source_offset);
  w.I64(p.stream_time_ms);
  w.Str(p.owner);
  EncodeSeriesSet(p.series, symbols, w);
  return Frame(RecordKind::kPartial, w.bytes());
}

std::string EncodeCounts(const CountsRecord& c) {
  ByteWriter w;
  w.Str(c.topic);
  w.I64(c.partition);
  w.I64(c.source_offset);
  w.Str(c.owner);
  EncodeRecordCounts(c.counts.records, w);
  const ShardCounters& sc = c.counts.shards;
  for (uint64_t v : {sc.deltas, sc.duplicates, sc.late_dropped, sc.folded, sc.dedup_forgotten}) w.U64(v);
  return Frame(RecordKind::kCounts, w.bytes());
}

std::string EncodeCrashIds(const CrashIdsRecord& c) {
  ByteWriter w;
  w.Str(c.topic);
  w.I64(c.partition);
  w.I64(c.epoch);
  w.U64(c.chunk);
  w.Str(c.owner);
  w.U64(c.ids.size());
  for (uint64_t id : c.ids) w.Fixed64(id);
  return Frame(RecordKind::kCrashIds, w.bytes());
}

std::string EncodeAlertState(const AlertStateRecord& a) {
  ByteWriter w;
  w.Str(a.holder);
  w.I64(a.evaluated_ms);
  w.Str(a.state);
  return Frame(RecordKind::kAlertState, w.bytes());
}

RecordResult DecodeRecord(std::string_view key, std::optional<std::string_view> value, Symbols& symbols) {
  const std::optional<RecordKey> k = DecodeRecordKey(key);
  if (!k) return Reject(RecordReject::kCorrupt, "not an aggregates-topic key");
  if (!value) {
    if (k->kind != RecordKind::kPartial && k->kind != RecordKind::kCrashIds) {
      return Reject(RecordReject::kKeyMismatch,
                    "a tombstone under a key that is not a partial's or crash ids'");
    }
    return AggregatesRecord(Tombstone{k->kind, k->where});
  }
  const std::string_view v = *value;
  const size_t magic = std::min(v.size(), kAggregatesMagic.size());
  if (v.substr(0, magic) != kAggregatesMagic.substr(0, magic)) {
    return Reject(RecordReject::kCorrupt, "bad magic");
  }
  if (v.size() < kHeaderBytes) {
    return Reject(RecordReject::kTruncated, fmt::format("{} bytes, shorter than the header", v.size()));
  }
  const auto version = static_cast<uint32_t>(GetFixed(v, 8, 4));
  if (version < kOldestReadableAggregatesVersion || version > kAggregatesFormatVersion) {
    return Reject(RecordReject::kUnknownVersion,
                  fmt::format("format version {} (this build reads {} to {})", version,
                              kOldestReadableAggregatesVersion, kAggregatesFormatVersion));
  }
  const auto kind = static_cast<uint8_t>(v[12]);
  const uint64_t length = GetFixed(v, 13, 8);
  if (length > v.size() - kHeaderBytes) {
    return Reject(RecordReject::kTruncated,
                  fmt::format("payload is {} bytes, header says {}", v.size() - kHeaderBytes, length));
  }
  if (length < v.size() - kHeaderBytes) return Reject(RecordReject::kCorrupt, "bytes after the payload");
  const std::string_view payload = v.substr(kHeaderBytes, length);
  if (Hash64(payload) != GetFixed(v, 21, 8)) return Reject(RecordReject::kCorrupt, "checksum mismatch");
  if (kind != static_cast<uint8_t>(RecordKind::kPartial) &&
      kind != static_cast<uint8_t>(RecordKind::kAlertState) &&
      (kind != static_cast<uint8_t>(RecordKind::kCounts) || version < 3) &&
      (kind != static_cast<uint8_t>(RecordKind::kCrashIds) || version < 4)) {
    return Reject(RecordReject::kCorrupt, fmt::format("unknown record kind {}", kind));
  }
  if (kind != static_cast<uint8_t>(k->kind)) {
    return Reject(RecordReject::kKeyMismatch, "the value's kind is not the key's");
  }
  switch (k->kind) {
    case RecordKind::kPartial:
      return DecodePartialPayload(payload, k->where, version, symbols);
    case RecordKind::kCounts:
      return DecodeCountsPayload(payload, k->where);
    case RecordKind::kCrashIds:
      return DecodeCrashIdsPayload(payload, k->where);
    case RecordKind::kAlertState:
      break;
  }
  return DecodeAlertPayload(payload);
}

}  // namespace seismo
