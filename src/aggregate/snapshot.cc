#include "seismo/aggregate/snapshot.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <bit>
#include <cassert>

#include "seismo/aggregate/partition_counts.h"
#include "seismo/aggregate/row_changes.h"

namespace seismo {

std::vector<int64_t> SpansOf(const std::vector<int64_t>& windows_ms, int64_t retention_ms) {
  std::vector<int64_t> spans;
  for (int64_t w : windows_ms) {
    spans.push_back(w);
    spans.push_back(std::min(2 * w, retention_ms));
  }
  std::sort(spans.begin(), spans.end());
  spans.erase(std::unique(spans.begin(), spans.end()), spans.end());
  return spans;
}

void SortByHashThenAddress(TextIndexKeys& keyed) {
  // Hashes are uniform: a counting sort on their top bits leaves buckets of about eight,
  // each then sorted on its own. A tenth of one std::sort's time at a million rows.
  const size_t n = keyed.size();
  const int bits = std::clamp(static_cast<int>(std::bit_width(n)) - 3, 1, 20);
  const int shift = 64 - bits;
  std::vector<uint32_t> start((size_t{1} << bits) + 1, 0);
  for (const auto& k : keyed) ++start[(k.first >> shift) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  TextIndexKeys out(n);
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for (const auto& k : keyed) out[next[k.first >> shift]++] = k;
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    if (start[b + 1] - start[b] > 1) std::sort(out.begin() + start[b], out.begin() + start[b + 1]);
  }
  keyed = std::move(out);
}

std::optional<size_t> Snapshot::SpanIndex(int64_t span_ms) const {
  for (size_t i = 0; i < spans_ms.size(); ++i) {
    if (spans_ms[i] == span_ms) return i;
  }
  return std::nullopt;
}

int64_t Snapshot::StreamBucket() const {
  const int64_t q = stream_time_ms / bucket_ms;
  return (stream_time_ms % bucket_ms != 0 && stream_time_ms < 0) ? q - 1 : q;
}

int64_t Snapshot::SpanFirstBucket(size_t span) const { return StreamBucket() - spans_ms[span] / bucket_ms + 1; }

BucketRange Snapshot::SpanRange(size_t span) const {
  return BucketRange::Of(SpanFirstBucket(span), StreamBucket(), bucket_ms);
}

Values Snapshot::Span(const SeriesData& s, size_t span) const { return SumBuckets(s, SpanRange(span)); }

HyperLogLog Snapshot::SpanInstalls(const SeriesData& s, size_t span) const {
  return InstallsOfBuckets(s, SpanRange(span));
}

std::vector<BucketPoint> Snapshot::Points(const SeriesData& s) const {
  int64_t longest = 0;
  for (int64_t w : windows_ms) longest = std::max(longest, w);
  return PointsOf(s, StreamBucket() - longest / bucket_ms + 1, StreamBucket());
}

const std::vector<const SeriesData*>& Snapshot::sorted(Table t) const {
  const size_t i = static_cast<size_t>(t);
  std::call_once(sorted_->once[i], [&] {
    sorted_->rows[i] = rows_[i];
    // An empty snapshot (before the first publish) may have no Symbols: nothing to order.
    if (sorted_->rows[i].size() < 2 || symbols == nullptr) return;
    SortByKey(
        sorted_->rows[i], [](const SeriesData* s) -> const SeriesKey& { return s->key; }, *symbols);
  });
  return sorted_->rows[i];
}

namespace {

// The entries of `rows` in the index of `field`, in index order: each row's text's hash (0
// without the text) and its address.
TextIndexKeys SortedTextIndexKeys(const Symbols& symbols, std::span<const SeriesData* const> rows,
                                  size_t field) {
  TextIndexKeys keys;
  keys.reserve(rows.size());
  for (const SeriesData* row : rows) {
    const Sym text = row->key[field];
    keys.emplace_back(text == kNoId ? 0 : symbols.text().Hash(text), reinterpret_cast<uintptr_t>(row));
  }
  SortByHashThenAddress(keys);
  return keys;
}

}  // namespace

Snapshot::TextIndex& Snapshot::TextIndexOf(Table t, size_t field) const {
  MutexLock lock(text_indexes_->mu);
  auto& slot = text_indexes_->by_field[{t, field}];
  if (!slot) slot = std::make_unique<TextIndex>();
  return *slot;  // stable: entries are never removed
}

std::span<const SeriesData* const> Snapshot::RowsWithTextHash(Table t, size_t field,
                                                              uint64_t text_hash) const {
  if (symbols == nullptr) return {};
  TextIndex& index = TextIndexOf(t, field);
  std::call_once(index.once, [&] {
    const TextIndexKeys keyed = SortedTextIndexKeys(*symbols, rows_[static_cast<size_t>(t)], field);
    index.Reserve(keyed.size());
    for (const auto& e : keyed) index.Append(e);
    index.made.store(true, std::memory_order_release);
  });
  const auto [lo, hi] = std::equal_range(index.hashes.begin(), index.hashes.end(), text_hash);
  return {index.rows.data() + (lo - index.hashes.begin()), static_cast<size_t>(hi - lo)};
}

std::optional<std::span<const SeriesData* const>> Snapshot::RowsWithTextHashIfMade(Table t, size_t field,
                                                                                   uint64_t text_hash) const {
  if (symbols == nullptr) return std::nullopt;
  const TextIndex& index = TextIndexOf(t, field);
  if (!index.made.load(std::memory_order_acquire)) return std::nullopt;
  const auto [lo, hi] = std::equal_range(index.hashes.begin(), index.hashes.end(), text_hash);
  return std::span<const SeriesData* const>{index.rows.data() + (lo - index.hashes.begin()),
                                            static_cast<size_t>(hi - lo)};
}

bool Snapshot::IndexTextsFrom(const Snapshot& before, Table t, size_t field,
                              std::span<const SeriesData* const> removed,
                              std::span<const SeriesData* const> added) const {
  if (symbols == nullptr || before.symbols == nullptr || &before == this) return false;
  const TextIndex& was = before.TextIndexOf(t, field);
  if (!was.made.load(std::memory_order_acquire)) return false;
  // Most rows changed (another shard set's snapshot, a cluster's merged view): the full
  // build's sort is the cheaper one, and it holds no change lists beside the index.
  if (!CheaperThanAWalk(removed.size() + added.size(), was.hashes.size())) return false;
  TextIndex& index = TextIndexOf(t, field);
  bool merged = false;
  std::call_once(index.once, [&] {
    // The removed rows' entries (each one of before's) and the added rows', in index order.
    const TextIndexKeys gone = SortedTextIndexKeys(*before.symbols, removed, field);
    const TextIndexKeys come = SortedTextIndexKeys(*symbols, added, field);
    index.Reserve(was.hashes.size() + come.size());
    size_t g = 0, c = 0, matched = 0;
    for (size_t i = 0; i < was.hashes.size(); ++i) {
      const std::pair<uint64_t, uintptr_t> e{was.hashes[i], reinterpret_cast<uintptr_t>(was.rows[i])};
      while (c < come.size() && come[c] < e) index.Append(come[c++]);
      while (g < gone.size() && gone[g] < e) ++g;  // not in before's index: nothing to remove
      if (g < gone.size() && gone[g] == e) {
        ++g;
        ++matched;
        continue;
      }
      index.Append(e);
    }
    while (c < come.size()) index.Append(come[c++]);
    assert(matched == gone.size() && "a removed row before's index does not hold (ChangedRows' contract)");
    index.made.store(true, std::memory_order_release);
    merged = true;
  });
  return merged;
}

namespace {

// Sums two hours of one key.
std::shared_ptr<HourChunk> MergeHours(const HourChunk& a, const HourChunk& b) {
  auto out = std::make_shared<HourChunk>();
  out->hour = a.hour;
  const bool installs = !a.installs().empty() || !b.installs().empty();
  size_t i = 0, j = 0;
  while (i < a.buckets.size() || j < b.buckets.size()) {
    const bool take_a = j == b.buckets.size() || (i < a.buckets.size() && a.buckets[i] <= b.buckets[j]);
    const bool take_b = i == a.buckets.size() || (j < b.buckets.size() && b.buckets[j] <= a.buckets[i]);
    const int64_t bucket = take_a ? a.buckets[i] : b.buckets[j];
    Values v{};
    HyperLogLog h;
    if (take_a) {
      AddValues(v, a.values[i]);
      if (!a.installs().empty()) h.Merge(a.installs()[i]);
      ++i;
    }
    if (take_b) {
      AddValues(v, b.values[j]);
      if (!b.installs().empty()) h.Merge(b.installs()[j]);
      ++j;
    }
    out->PushBucket(bucket, v);
    if (installs) out->sketches().buckets.push_back(std::move(h));
  }
  if (a.has_sketches() || b.has_sketches()) {
    HourSketches& sketches = out->sketches();
    sketches.hour = a.hour_installs();
    sketches.hour.Merge(b.hour_installs());
  }
  return out;
}

}  // namespace

void AddSeries(SeriesData& into, const SeriesData& from) {
  if (!from.installs.empty()) into.installs.Merge(from.installs);
  into.first_ms = std::min(into.first_ms, from.first_ms);
  HourList hours;
  hours.reserve(into.hours.size() + from.hours.size());
  size_t i = 0, j = 0;
  while (i < into.hours.size() || j < from.hours.size()) {
    if (j == from.hours.size() || (i < into.hours.size() && into.hours[i]->hour < from.hours[j]->hour)) {
      hours.push_back(into.hours[i++]);
    } else if (i == into.hours.size() || from.hours[j]->hour < into.hours[i]->hour) {
      hours.push_back(from.hours[j++]);  // shared, never changed through a merged series
    } else {
      hours.push_back(MergeHours(*into.hours[i++], *from.hours[j++]));
    }
  }
  into.hours = std::move(hours);
  into.Retotal();
}

std::shared_ptr<Snapshot> MergeSnapshots(const std::vector<std::shared_ptr<const ShardSnapshot>>& shards,
                                         const Symbols& symbols, int64_t bucket_ms,
                                         const std::vector<int64_t>& windows_ms, int64_t retention_ms,
                                         bool routed_by_key, std::shared_ptr<const Symbols> symbols_owner) {
  auto out = std::make_shared<Snapshot>();
  out->symbols_owner_ = std::move(symbols_owner);
  out->bucket_ms = bucket_ms;
  out->windows_ms = windows_ms;
  out->spans_ms = SpansOf(windows_ms, retention_ms);
  out->symbols = &symbols;
  out->routed_by_key_ = routed_by_key;
  for (const auto& shard : shards) {
    if (!shard) continue;
    out->shards_.push_back(shard);
    out->stream_time_ms = std::max(out->stream_time_ms, shard->stream_time_ms);
    for (size_t t = 0; t < kTableCount; ++t) {
      out->table_time_ms[t] = std::max(out->table_time_ms[t], shard->table_time_ms[t]);
    }
    AddCounts(out->counters, shard->counters);
    out->memory_bytes += shard->memory_bytes;
  }
  for (size_t t = 0; t < kTableCount; ++t) {
    const Table table = static_cast<Table>(t);
    // Keys that may repeat across shards: where each sits in `rows`, and its merged
    // copy once a second series of it arrives.
    struct Seen {
      size_t row;
      SeriesData* merged;
    };
    absl::flat_hash_map<SeriesKey, Seen> seen;
    auto& rows = out->rows_[t];
    std::vector<size_t> repeatable;  // places in `rows`
    for (const auto& shard : out->shards_) {
      shard->ForEach(table, [&](const SeriesData& s) {
        if (!MayRepeatAcrossShards(table, s, routed_by_key)) {
          rows.push_back(&s);
          return;
        }
        auto [it, inserted] = seen.try_emplace(s.key, Seen{rows.size(), nullptr});
        if (inserted) {
          rows.push_back(&s);
          repeatable.push_back(rows.size() - 1);
          return;
        }
        Seen& x = it->second;
        if (x.merged == nullptr) {
          auto merged = std::make_shared<SeriesData>(*rows[x.row]);
          x.merged = merged.get();
          out->merged_.push_back(std::move(merged));
          rows[x.row] = x.merged;
        }
        AddSeries(*x.merged, s);
      });
    }
    auto& repeatable_rows = out->repeatable_rows_[t];
    repeatable_rows.reserve(repeatable.size());
    for (size_t row : repeatable) repeatable_rows.push_back(rows[row]);  // merged ones too
  }
  return out;
}

}  // namespace seismo
