// BucketSums: the hang table's sums by bucket of one source (hang time, hang count): what the
// default /hangs/timeseries answer reads, kept by the warm-up from round to round and brought
// up to date from the rows that changed (ADR 0034, issue 19).
//
//   ChangedRows(before, after, kHangs) ──> Apply: each removed series' hours taken out, each
//       added one's put in, but an hour both hold (the same chunk: copy on write) is skipped
//   HangsTimeseriesJson(q, kept) ──Serves(q)──> AddTo(axis): the axis's buckets, no walk
//
// The answer walked every hang series of the source and summed its buckets in the window,
// 30–35 ms a round at 10⁶ series. A changed series' new copy shares its unchanged hours with
// the old one (ADR 0021): only the hours that differ are read, so a round costs the changed
// hours. The sums are by bucket, not by point of one axis, so they serve every window, and a
// window that moves needs nothing but the changed rows.
//
// Exact: every sum is an integer, taken out and added back; an hour is skipped only where it is
// the same object in the series removed and the series added, whose buckets count the same
// (BucketSums.* tests, against a walk, over random rounds with expiry and folding).
//
// Bounded: a dense array of the buckets from the first one any series holds to the last. Its
// span is known before it is made or brought (SpanOf, SpanWith), and BytesFor(span) bounds
// what it then takes, growing included; the warm-up holds that from its budget first, and
// keeps none past kMaxBuckets.
//
// Threading: one thread at a time (the warm-up's), read by one round's answer.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "seismo/aggregate/row_changes.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/query/params.h"
#include "seismo/query/selection.h"

namespace seismo {

class BucketSums {
 public:
  using Sums = std::array<int64_t, 2>;  // a bucket's first two values: hang_us, hang_count
  static constexpr uint64_t kBytesPerBucket = sizeof(Sums);
  // The warm-up keeps none past this many buckets (a year of one-minute buckets is 525 600).
  static constexpr size_t kMaxBuckets = size_t{1} << 20;

  // Buckets [first, last]; empty when last < first.
  struct Span {
    int64_t first = 0, last = -1;
    size_t size() const { return last < first ? 0 : static_cast<size_t>(last - first + 1); }
    void Add(int64_t b) {
      if (size() == 0) {
        first = last = b;
      } else {
        first = std::min(first, b);
        last = std::max(last, b);
      }
    }
  };
  // The buckets `snap`'s hang series of `source` (an id of its symbols; kNoId: none) hold.
  static Span SpanOf(const Snapshot& snap, Sym source);
  // At most the bytes sums spanning `buckets` take, and their growth to it while it runs
  // (MemoryBytes() stays within it; tested).
  static uint64_t BytesFor(size_t buckets) { return 2 * kBytesPerBucket * (buckets + buckets / 4 + 64); }

  // The sums of `snap`'s hang series of `source`; `span`: SpanOf(snap, source).
  static BucketSums Make(const Snapshot& snap, Sym source, Span span);

  // The span these sums can take while brought with `changes` (Apply's): theirs, and the
  // buckets of the series removed and added, from each one's first and last hours.
  Span SpanWith(const RowChanges& changes) const;
  // Brings the sums of `before` (made from it, or brought to it) to those of `after`, from
  // `changes` (ChangedRows(before, after, Table::kHangs)). False, the sums then neither
  // before's nor after's, where the two snapshots differ in symbols or bucket length, or where
  // the buckets would span more than `max_buckets` (SpanWith(changes) never is): drop them.
  bool Apply(const Snapshot& before, const Snapshot& after, const RowChanges& changes, size_t max_buckets);

  // Whether these are the sums a /hangs/timeseries query with these filters (HangFilters:
  // the source set) reads over a snapshot of these symbols, bucket length and source id.
  bool Serves(const Filters& filters, const Symbols* symbols, int64_t bucket_ms, Sym source) const;

  // Adds the buckets of `axis` to `into` (size axis.size()), as AddPoints does each series'.
  void AddTo(const TimeAxis& axis, std::vector<Sums>& into) const;

  uint64_t MemoryBytes() const { return sums_.capacity() * kBytesPerBucket; }
  size_t buckets() const { return sums_.size(); }

 private:
  BucketSums(const Symbols* symbols, int64_t bucket_ms, Sym source)
      : symbols_(symbols), bucket_ms_(bucket_ms), source_(source) {}
  // Adds (sign 1) or takes out (sign -1) one hour's buckets; false past max_buckets.
  bool AddHour(const HourChunk& hour, int64_t sign, size_t max_buckets);
  // Room for buckets [first, last]; false past max_buckets.
  bool Cover(int64_t first, int64_t last, size_t max_buckets);
  // Drops the buckets of zeros at both ends (those whose hours left every series), and the
  // array's room past a quarter more than it holds.
  void Trim();

  const Symbols* symbols_;
  int64_t bucket_ms_;
  Sym source_;
  int64_t first_ = 0;       // the bucket of sums_[0]
  std::vector<Sums> sums_;  // buckets first_, first_ + 1, ...
};

}  // namespace seismo
