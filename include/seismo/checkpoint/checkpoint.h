// Checkpoints: everything needed to restart without losing or double-counting
// a record — all shard state, the pipeline counters, the next offset of every
// Kafka partition and the progress through every [sources] file, and the
// alert engine's state — consistent with each other (taken at a barrier where
// everything handed to the pipeline has been aggregated).
//
// File layout (little endian):
//
//   0        8        12               20               28
//   ┌────────┬────────┬────────────────┬────────────────┬───────────────────┐
//   │SEISMOCP│version │ payload length │ xxh64(payload) │ payload ...       │
//   └────────┴────────┴────────────────┴────────────────┴───────────────────┘
//
// Written atomically: <dir>/seismo.ckpt.tmp, fsync, rename to
// <dir>/seismo.ckpt, fsync the directory. A file that fails any check
// (magic, version, length, checksum, decoding, bucket width) is reported and
// ignored — never half-loaded; SetAsideCheckpoint() then renames it to a name of
// its own (seismo.ckpt.bad-<ms>[-<n>]) before anything is written in its place
// (what the daemon does about the lost state: ADR 0018).
//
// Threading: free functions; callers serialise writes to one directory.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/aggregate/shard_image.h"
#include "seismo/core/status.h"
#include "seismo/core/record_counts.h"

namespace seismo {

// 2: shard counters carry dedup_forgotten; every series entry carries its installs
// sketch (1 held it for crashes only).
// 3: shard images carry their own dictionary of texts and stacks, and keys as
// indices into it; a series carries its installs sketch, a bucket only for crashes
// (shard_image.h). Version 2 files are still read.
// 4: build-usage entries carry a sketch too, and a build-usage series' sketch is every
// main ping's install (ADR 0031); versions 2 and 3 are read with their reporters' sketch
// moved to the series' last entry.
// 5: after the shard images, each image's shard and source partition (a partition-scoped
// pipeline's state, ADR 0024). Versions 2-4 are read as one image per shard, in shard order,
// of no partition; and a checkpoint that is just that (an unscoped pipeline's) is still
// written as version 4, which the previous release reads.
// 6: after those, each source partition's record counts (a partition-scoped pipeline's
// Pipeline::SourceCounts(), ADR 0024 "Counts"); written only when there are any, else as 5.
inline constexpr uint32_t kCheckpointFormatVersion = 6;
inline constexpr uint32_t kOldestReadableCheckpointVersion = 2;
inline constexpr std::string_view kCheckpointFile = "seismo.ckpt";

struct CheckpointData {
  int64_t written_at_ms = 0;
  int64_t bucket_ms = 0;  // a checkpoint is only compatible with the same bucket width
  RecordCounts counts;
  std::map<std::pair<std::string, int32_t>, int64_t> kafka_offsets;  // (topic, partition) -> next offset
  std::map<std::string, int64_t> file_lines;                         // path -> lines consumed
  std::vector<ShardImage> shards;                                    // each with its ShardImage::shard
  // Per image of `shards` (same index), the source partition (source name, partition;
  // -1 for a file) whose state it is: a partition-scoped pipeline's (Pipeline::PartitionsOf).
  // Empty, or nullopt each, for an unscoped one.
  std::vector<std::optional<std::pair<std::string, int32_t>>> partitions;
  // Partition-scoped: each source partition's share of `counts` (Pipeline::SourceCounts()).
  std::map<std::pair<std::string, int32_t>, RecordCounts> source_counts;
  std::string alerts;  // the alert engine's serialised state ("" = none)
};

// Shard images' keys are read from and interned into `symbols`.
std::string EncodeCheckpoint(const CheckpointData& data, const Symbols& symbols);
// kCorrupt with a reason for anything that is not a complete, valid checkpoint
// of a format version this build reads.
Result<CheckpointData> DecodeCheckpoint(std::string_view bytes, Symbols& symbols);

struct CheckpointWriteOptions {
  // Test seam: sleep this long after writing the first half of the temp file,
  // so a test can act (SIGTERM, SIGKILL) while a checkpoint is being written.
  std::chrono::milliseconds pause_midway_for_testing{0};
};

// Writes atomically into `dir` (created if missing). On failure the previous
// checkpoint is untouched and the temp file removed.
Status WriteCheckpoint(const std::string& dir, const CheckpointData& data, const Symbols& symbols,
                       const CheckpointWriteOptions& options = {});

// The checkpoint in `dir`: nullopt when there is none. A bad one is left where
// it is and reported through `problem` ("<path>: <why>"; nullopt is returned too).
// Its keys are interned into `symbols`.
std::optional<CheckpointData> LoadCheckpoint(const std::string& dir, int64_t bucket_ms, Symbols& symbols,
                                            std::string* problem);

// Renames <dir>/seismo.ckpt to seismo.ckpt.bad-<ms> (or -<ms>-<n> when that name
// is taken: never over another file) and returns the new path. kNotFound when
// there is no such file; kIoError when the rename failed (a read-only
// directory): the file is then still in place.
Result<std::string> SetAsideCheckpoint(const std::string& dir);

}  // namespace seismo
