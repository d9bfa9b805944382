// SeriesData: one series' values, laid out by hour (ADR 0021).
//
//   SeriesData ── key, content hash, fold level
//              ── installs sketch, first event time, total? (from the second hour on)
//              ── hours: ascending ─┬─ HourChunk { hour, buckets[], values[], spill? }
//                                   ├─ HourChunk ...            spill: sum (from the second
//                                   └─ HourChunk (usually the   bucket on), sketches
//                                                 one being written)
//
// A bucket belongs to the hour its start falls in. An hour's sum() is the sum of
// its buckets, so a window of W reads whole hours by their sums and only its two
// edge hours bucket by bucket. A series' total() is the sum of its hours'. Crash series keep an installs sketch per bucket
// (a window's distinct installs cannot be subtracted, only merged); the others do not.
//
// Installs sketches (ADR 0031):
//   kCrashes     series: the crashes' installs; buckets and hours: those of their crashes
//   kBuildUsage  series: every main ping's install (the build's active installs);
//                hours: the installs whose pings reported sub-process crashes (no bucket's)
//   kHangs       series: the pings' installs
//   kUsage       none
//
// Sharing: the shard that owns a series is its only writer. A published snapshot
// holds the same SeriesData and HourChunks through shared_ptr; the shard clones an
// object before changing it whenever a snapshot may hold it (copy on write), so a
// reader's objects never change and a publish copies nothing.
//
// Threading: readers see only const objects reached from a snapshot (any thread).
#pragma once

#include <absl/container/inlined_vector.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/hll.h"
#include "seismo/aggregate/series_key.h"

namespace seismo {

// Most hours of most series hold one bucket (a long tail of stacks seen once): an hour's
// first bucket is kept inside it, and only an hour with more allocates its lists.
inline constexpr size_t kInlineBuckets = 1;

// An hour's installs sketches, where its table keeps them (above).
struct HourSketches {
  HyperLogLog hour;                  // crashes: the buckets' merged (windows read whole hours);
                                     // build usage: sub-process crash reporters' (the only one)
  std::vector<HyperLogLog> buckets;  // per bucket (crashes only, else empty)
};

// What an hour keeps beside it, made on first use: its sum while it has more than one
// bucket, and its sketches where its table keeps them. Most hours (a long tail of stacks
// seen once, in one bucket) need neither, and are 40 bytes smaller for it; an hour back to
// one bucket without sketches gives it back.
struct HourSpill {
  Values sum{};  // the buckets' sum, while the hour has more than one
  std::unique_ptr<HourSketches> sketches;

  HourSpill() = default;
  HourSpill(const HourSpill& other)
      : sum(other.sum),
        sketches(other.sketches ? std::make_unique<HourSketches>(*other.sketches) : nullptr) {}
  HourSpill& operator=(const HourSpill&) = delete;
};

struct HourChunk {
  int64_t hour = 0;  // hour index: start = hour * kHourMs
  // Ascending bucket indices, and each one's values. Read them freely; change them only
  // through InsertBucket, AddToBucket and EraseFirstBucket, which keep sum() true.
  absl::InlinedVector<int64_t, kInlineBuckets> buckets;
  absl::InlinedVector<Values, kInlineBuckets> values;

  HourChunk() = default;
  HourChunk(const HourChunk& other);  // copies what is beside it too (copy on write)
  HourChunk& operator=(const HourChunk&) = delete;

  // The buckets' sum: windows read whole hours by it.
  const Values& sum() const;
  // A bucket of zeros at position i (ascending order is the caller's).
  void InsertBucket(size_t i, int64_t bucket);
  void AddToBucket(size_t i, const Values& v);
  // InsertBucket at the end, then AddToBucket.
  void PushBucket(int64_t bucket, const Values& v);
  // Drops the first bucket, its values and its sketch.
  void EraseFirstBucket();

  // HourSketches::hour; empty when the hour keeps none.
  const HyperLogLog& hour_installs() const;
  // HourSketches::buckets; empty when the hour keeps none.
  const std::vector<HyperLogLog>& installs() const;
  bool has_sketches() const { return spill_ != nullptr && spill_->sketches != nullptr; }
  // The writer's: the hour's sketches, made empty on first use.
  HourSketches& sketches();
  // Whether anything is kept beside the hour (its memory is counted).
  bool has_spill() const { return spill_ != nullptr; }

 private:
  HourSpill& spill();
  std::unique_ptr<HourSpill> spill_;
};

static_assert(sizeof(HourChunk) == 88, "an hour's size: see ShardState::HourBytes and seismo_bench memory");

// A series' hours; one of them (most series' only one) without a heap block of its own.
using HourList = absl::InlinedVector<std::shared_ptr<HourChunk>, 1>;

struct SeriesData {
  SeriesKey key;
  int level = 0;       // fold level (fold.h); beside the 36-byte key, in its padding
  uint64_t hash = 0;   // KeyContentHash(key)
  HyperLogLog installs;  // distinct installs ever applied; empty when none known
  int64_t first_ms = INT64_MAX;  // earliest event time still retained
  // Ascending hour. Change the list only through Retotal or EmptyHourCameOrWent (after), and
  // the values in it through AddToTotal and SubtractFromTotal (beside the hour's own), which
  // keep total() true.
  HourList hours;

  SeriesData() = default;
  SeriesData(const SeriesData& other);
  SeriesData& operator=(const SeriesData&) = delete;

  Table table() const { return key.table; }
  // Within the retention: the sum of the hours' sums.
  const Values& total() const;
  // The writer's, after values were added to or taken from one of the hours.
  void AddToTotal(const Values& v);
  void SubtractFromTotal(const Values& v);
  // The writer's, after hours were added or dropped.
  void Retotal();
  // The writer's, after one hour with no values was added or dropped (no walk of the hours).
  void EmptyHourCameOrWent();
  // Whether the total is kept beside the series (its memory is counted).
  bool keeps_total() const { return total_ != nullptr; }

 private:
  // The total while there are two hours or more (with one, it is that hour's sum): most
  // series live in one hour, and are 32 bytes smaller for it.
  std::unique_ptr<Values> total_;
};
static_assert(sizeof(SeriesData) == 104,
              "a series' size: see ShardState::SeriesBytes and seismo_bench memory");

// One point of a series' time series: its first two values.
struct BucketPoint {
  int64_t bucket = 0;  // bucket index: start = bucket * bucket_ms
  std::array<int64_t, 2> v{};
};

// One hour of a series: every value.
struct HourPoint {
  int64_t bucket = 0;  // hour index: start = bucket * 3 600 000
  Values v{};
};

// Readers' helpers (pure functions of a const series).
//
// The hour of a bucket (floor; any bucket index, no overflow).
__extension__ using Int128 = __int128;  // gcc and clang; __extension__: not ISO C++
inline int64_t HourOfBucket(int64_t bucket, int64_t bucket_ms) {
  // The product fits in 64 bits but for buckets ~10^11 years out: a 64-bit division by a
  // constant then, where a 128-bit one is a library call (a window's sum of every series
  // makes two).
  if (int64_t ms64 = 0; !__builtin_mul_overflow(bucket, bucket_ms, &ms64)) return FloorDiv(ms64, kHourMs);
  const Int128 ms = static_cast<Int128>(bucket) * bucket_ms;
  const Int128 q = ms / kHourMs;
  return static_cast<int64_t>(ms % kHourMs != 0 && ms < 0 ? q - 1 : q);
}
// A range of buckets [from, to] (indices, inclusive) and the hours strictly inside it, whose
// sums a window reads whole. Made once per window, not once per series: a window's sum over
// every series of a table would otherwise divide again for each.
struct BucketRange {
  int64_t from = 0;
  int64_t to = -1;
  int64_t first_full = 0;  // hours strictly inside [from, to]
  int64_t last_full = -1;

  static BucketRange Of(int64_t from, int64_t to, int64_t bucket_ms) {
    if (from > to) return {};
    return {from, to, HourOfBucket(from, bucket_ms) + 1, HourOfBucket(to, bucket_ms) - 1};
  }
};
// Sum of the buckets in a range.
Values SumBuckets(const SeriesData& s, const BucketRange& r);
// Sum of the buckets in [from, to] (bucket indices, inclusive).
inline Values SumBuckets(const SeriesData& s, int64_t from, int64_t to, int64_t bucket_ms) {
  return SumBuckets(s, BucketRange::Of(from, to, bucket_ms));
}
// Distinct installs of the buckets in [from, to] (crash series; empty otherwise).
HyperLogLog InstallsOfBuckets(const SeriesData& s, const BucketRange& r);
// Every retained hour's sketch merged (build usage: the installs that reported sub-process
// crashes).
HyperLogLog InstallsOfHours(const SeriesData& s);
// Buckets in [from, to], ascending.
std::vector<BucketPoint> PointsOf(const SeriesData& s, int64_t from, int64_t to);
// Every hour, ascending.
std::vector<HourPoint> HourlyOf(const SeriesData& s);
// Number of buckets holding a value.
size_t BucketCount(const SeriesData& s);
// The sketch an image's entry (shard_image.h) or a fold carries for bucket `i` of an hour:
// a crash bucket's own; a build-usage hour's on its first bucket (restoring merges it into
// the same hour); none otherwise.
const HyperLogLog* BucketImageInstalls(const HourChunk& c, size_t i);

}  // namespace seismo
