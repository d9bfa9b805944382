// The records of the aggregates topic (SPEC §9, ADR 0023): a compacted Kafka topic
// holding, per (source topic, partition, bucket), that partition's partial
// aggregates for the bucket, and one record of the alert engine's state.
//
// Key (the compaction identity; never carries a format version, so a record of a
// newer format replaces an older one under the same key):
//
//   partial      "p/<source topic>/<partition>/<bucket index>/<part>"   e.g. p/telemetry.main/3/29916666/0
//   alert state  "a/alerts"
//   counts       "c/<source topic>/<partition>"                        e.g. c/telemetry.main/3
//   crash ids    "d/<source topic>/<partition>/<epoch>/<chunk>"         e.g. d/telemetry.main/3/1246/17
//
// Value (little endian, the checkpoint's framing with a record kind):
//
//   0        8         12     13               21               29
//   ┌────────┬─────────┬──────┬────────────────┬────────────────┬──────────────┐
//   │SEISMOAG│ version │ kind │ payload length │ xxh64(payload) │ payload ...  │
//   └────────┴─────────┴──────┴────────────────┴────────────────┴──────────────┘
//
//   partial payload:  topic, partition, bucket, part (the key again), parts,
//                     bucket_ms, source_offset, stream_time_ms, owner, then a series set
//                     (aggregate/shard_image.h: dictionary of texts and stacks,
//                     then each series with its one entry, the bucket's)
//   alert payload:    holder, evaluated_ms, the engine's state (opaque bytes)
//   counts payload:   topic, partition (the key again), source_offset, owner, then the
//                     partition's record counts (core/record_counts.h's encoding, as in
//                     checkpoints), then its shard counters (deltas, duplicates,
//                     late_dropped, folded, dedup_forgotten)
//   crash ids payload: topic, partition, epoch, chunk (the key again), owner, then the
//                     ids (count, then each as 8 bytes, strictly ascending)
//
// A null value (Kafka's tombstone) under a partial key deletes the bucket (it left
// the retention), under a crash-ids key the chunk (its epoch expired, or it was sent
// again); under any other key it is a key_mismatch. Anything else that is not a complete record of
// this build's version is rejected with one reason (RecordReject) and never half-read.
//
// Threading: free functions of their arguments; decoding interns into `symbols`
// (which is thread-safe).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "seismo/aggregate/partition_counts.h"
#include "seismo/aggregate/shard_image.h"

namespace seismo {

inline constexpr std::string_view kAggregatesMagic = "SEISMOAG";
// 2: build-usage entries carry their hour's sub-process crash reporters (ADR 0031); records
// of version 1 are still read (shard_image.h, SeriesSetFormat::kCrashEntryInstalls).
// 3: the counts record (kind 3, key c/...: each partition's record counts, ADR 0024
// "Counts"); records of versions 1 and 2 are still read (a topic written by them has no
// counts records: its partitions count nothing in the view's header counts).
// 4: the crash-ids record (kind 4, key d/...: the crash ids a partition remembers, ADR
// 0024 "Crash ids"); records of versions 1 to 3 are still read (a partition restored from
// a topic without them forgets the crashes it counted before it moved).
inline constexpr uint32_t kAggregatesFormatVersion = 4;
inline constexpr uint32_t kOldestReadableAggregatesVersion = 1;
inline constexpr uint32_t kMaxPartialParts = 1024;

enum class RecordKind : uint8_t { kPartial = 1, kAlertState = 2, kCounts = 3, kCrashIds = 4 };
// At most this many ids in one crash-ids record (8 bytes each: 256 KiB, within half of
// Kafka's default max.message.bytes as partials are).
inline constexpr size_t kMaxCrashIdsPerRecord = 32 * 1024;

// Why a record was not taken (each counted and reported by name; ADR 0023).
enum class RecordReject : uint8_t {
  kCorrupt,         // bad magic, checksum, undecodable key or payload, unknown kind, trailing bytes
  kTruncated,       // shorter than its header or than the length the header states
  kUnknownVersion,  // a format version this build does not read (a newer writer)
  kKeyMismatch,     // the value is not the record its key names (kind, topic, partition, bucket, part)
};
inline constexpr size_t kRecordRejectCount = 4;
// Stable names: "corrupt", "truncated", "unknown_version", "key_mismatch".
std::string_view RecordRejectName(RecordReject r);

// Which partition, bucket and part of the bucket a partial is. A bucket too large
// for one record is published in `parts` parts (a power of two), a series in part
// KeyContentHash(key) % parts (ADR 0023).
struct PartitionBucket {
  std::string topic;
  int32_t partition = 0;
  int64_t bucket = 0;  // bucket index: start = bucket * bucket_ms
  uint32_t part = 0;

  bool operator==(const PartitionBucket&) const = default;
};

// One source partition's partial aggregates for one bucket.
struct PartialRecord {
  PartitionBucket where;
  uint32_t parts = 1;  // how many parts the bucket was published in
  int64_t bucket_ms = 0;
  int64_t source_offset = 0;  // next offset of the source partition: every record before it is included
  int64_t stream_time_ms = INT64_MIN;  // the partition's stream time when published
  std::string owner;                   // instance id of the publisher (the partition's owner then)
  std::vector<SeriesImage> series;     // each with exactly one entry, for `where.bucket`, of this part
};

// The alert engine's state, published by the instance evaluating alerts.
struct AlertStateRecord {
  std::string holder;                // instance id of the publisher
  int64_t evaluated_ms = INT64_MIN;  // stream time of the last round the state includes
  std::string state;                 // the engine's serialised state (alert stage; opaque here)
};

// One source partition's counts as of `source_offset` (aggregate/partition_counts.h):
// the view's header counts are their sum.
struct CountsRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t source_offset = 0;  // as a partial's: every source record before it is counted
  std::string owner;
  PartitionCounts counts;
};

// Crash ids one source partition's states remembered in one dedup generation (aggregate/
// crash_ids.h), sent in chunks: each publish sends the ids new since the last one as new
// chunks of the epoch they were remembered in; an epoch that expired is tombstoned chunk by
// chunk (ADR 0024, "Crash ids").
struct CrashIdsRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t epoch = 0;   // never at int64's ends (readers add and subtract one)
  uint32_t chunk = 0;  // numbered per partition by its owners, never reused while it lives; < UINT32_MAX
  std::string owner;
  std::vector<uint64_t> ids;  // strictly ascending
};

// A record's key, decoded.
struct RecordKey {
  RecordKind kind = RecordKind::kPartial;
  PartitionBucket where;  // partials; counts: topic and partition only; crash ids: bucket
                          // is the epoch, part the chunk
};

std::string PartialKey(const PartitionBucket& where);
std::string AlertStateKey();
std::string CountsKey(std::string_view topic, int32_t partition);
std::string CrashIdsKey(std::string_view topic, int32_t partition, int64_t epoch, uint32_t chunk);
// Only a key in its canonical form (what PartialKey writes: no leading zeros, no
// "-0") is a key: two spellings of one bucket would be two records to compaction.
std::optional<RecordKey> DecodeRecordKey(std::string_view key);

// Values. Series keys are read from `symbols`.
std::string EncodePartial(const PartialRecord& record, const Symbols& symbols);
std::string EncodeAlertState(const AlertStateRecord& record);
std::string EncodeCounts(const CountsRecord& record);
std::string EncodeCrashIds(const CrashIdsRecord& record);

// A decoded record: a partial, a tombstone (the partition-bucket part, or the crash-ids
// chunk, it deletes), the alert state, a partition's counts or crash ids.
struct Tombstone {
  RecordKind kind = RecordKind::kPartial;  // kPartial or kCrashIds
  PartitionBucket where;                   // as RecordKey's
};
using AggregatesRecord =
    std::variant<PartialRecord, Tombstone, AlertStateRecord, CountsRecord, CrashIdsRecord>;

class [[nodiscard]] RecordResult {
 public:
  RecordResult(AggregatesRecord record) : v_(std::move(record)) {}  // NOLINT(google-explicit-constructor)
  RecordResult(RecordReject reason, std::string detail) : v_(Rejection{reason, std::move(detail)}) {}

  bool ok() const { return v_.index() == 0; }
  const AggregatesRecord& value() const { return std::get<0>(v_); }
  AggregatesRecord& value() { return std::get<0>(v_); }
  // Precondition: !ok().
  RecordReject reason() const { return std::get<1>(v_).reason; }
  const std::string& detail() const { return std::get<1>(v_).detail; }

 private:
  struct Rejection {
    RecordReject reason;
    std::string detail;
  };
  std::variant<AggregatesRecord, Rejection> v_;
};

// A record read from the topic: `value` nullopt is a tombstone. Interns the
// series' texts into `symbols` (a record rejected midway may leave texts no key
// holds; the intern tables' next sweep frees them).
RecordResult DecodeRecord(std::string_view key, std::optional<std::string_view> value, Symbols& symbols);

}  // namespace seismo
