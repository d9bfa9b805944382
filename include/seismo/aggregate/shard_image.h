// ShardImage: everything a ShardState holds, in a form that can be written
// to a checkpoint and restored into a ShardSet of any shard count (series are
// re-routed by key).
//
// Encoded, an image carries its own dictionary: the texts and stacks its keys
// use, each once, and keys as indices into it. Decoding interns them into the
// process's Symbols, so ids never leave the process:
//
//   header (stream time, counters, dedup ids)
//   ── a series set (EncodeSeriesSet; also the body of an aggregates-topic record, ADR 0023):
//   texts   n, then n strings
//   stacks  n, then per stack: frame count, frame text indices
//   series  n, then per series: table, field indices (a stack field indexes
//           stacks), first_ms, installs sketch, entries (bucket, values, and an
//           installs sketch for crashes and build usage — kWithUsageEntryInstalls)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "seismo/aggregate/hll.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/core/bytes.h"

namespace seismo {

struct SeriesImage {
  struct Entry {
    int64_t bucket = 0;
    Values v{};
    HyperLogLog installs;  // crashes: the bucket's; build usage: its hour's reporters' (series_data.h)
  };
  SeriesKey key;
  int64_t first_ms = 0;
  HyperLogLog installs;        // the series' distinct installs
  std::vector<Entry> entries;  // ascending buckets

  Table table() const { return key.table; }
};

// The image of one series: its key, first event time, installs, and an entry per bucket with
// the sketch BucketImageInstalls gives it (series_data.h). The one maker of series images.
SeriesImage ImageOf(const SeriesData& s);

struct ShardImage {
  // Where the state was taken from: its shard, and its partition slot in that shard (a
  // partition-scoped ShardSet's, ADR 0024; 0 otherwise). Set by ShardSet and by the
  // checkpoint's decoding; not part of EncodeShardImage (a checkpoint names the shard
  // and the partition beside the images).
  uint32_t shard = 0;
  uint16_t slot = 0;
  int64_t stream_time_ms = INT64_MIN;
  ShardCounters counters;
  int64_t dedup_epoch = INT64_MIN;
  std::vector<uint64_t> seen_docs;      // crash document ids, current generation
  std::vector<uint64_t> seen_previous;  // previous generation
  std::vector<SeriesImage> series;
};

void EncodeShardImage(const ShardImage& image, const Symbols& symbols, ByteWriter& w);
// False when the bytes are not a valid image (the reader then reports !ok()).
// `format` is the checkpoint format version: 2 held keys as joined strings, 2 and 3 no
// build-usage entry sketches (SeriesSetFormat::kCrashEntryInstalls).
bool DecodeShardImage(ByteReader& r, uint32_t format, Symbols& symbols, ShardImage& image);

// A set of series with the dictionary its keys need (the part of an image after its
// header): one encoder for checkpoints and the cluster stage's records. Decoding
// interns the texts into `symbols`; false when the bytes are not a valid set.
//
// kCrashEntryInstalls (checkpoint format 3, aggregates records 1): only crash entries
// carried a sketch, and a build-usage series' sketch held only the installs that
// reported sub-process crashes. Decoding it moves that sketch to the series' last entry
// (the reporters' side, series_data.h); the series' active installs start empty (ADR 0031).
enum class SeriesSetFormat : uint8_t { kCrashEntryInstalls, kWithUsageEntryInstalls };
void EncodeSeriesSet(std::span<const SeriesImage> series, const Symbols& symbols, ByteWriter& w);
bool DecodeSeriesSet(ByteReader& r, Symbols& symbols, std::vector<SeriesImage>& out,
                     SeriesSetFormat format = SeriesSetFormat::kWithUsageEntryInstalls);

// Encoding of a sketch (shared with other encoders of sketches).
void EncodeHll(const HyperLogLog& h, ByteWriter& w);
bool DecodeHll(ByteReader& r, HyperLogLog& h);

}  // namespace seismo
