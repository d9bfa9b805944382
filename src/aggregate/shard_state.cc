#include "seismo/aggregate/shard_state.h"

#include <algorithm>

#include "seismo/aggregate/shard_image.h"

namespace seismo {

// ------------------------------------------------------------ SeriesValues

void SeriesValues::Add(const SeriesValues& o) {
  for (size_t i = 0; i < kMaxValues; ++i) v[i] += o.v[i];
  if (!o.installs.empty()) installs.Merge(o.installs);
}

void SeriesValues::Subtract(const std::array<int64_t, kMaxValues>& o) {
  for (size_t i = 0; i < kMaxValues; ++i) v[i] -= o[i];
}

bool SeriesValues::IsZero() const {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

// ------------------------------------------------------------ internals

struct ShardState::Series {
  Table table;
  std::string key;
  int64_t first_ms = INT64_MAX;  // earliest event time applied (reset when buckets expire)
  int level = 0;                 // fold level of the key (fold.h)
  SeriesValues total;
  std::vector<std::array<int64_t, kMaxValues>> span_sums;
  std::vector<int64_t> buckets;  // ascending bucket indices holding a value of this series
};

struct ShardState::Bucket {
  std::unordered_map<uint32_t, SeriesValues> values;
};

namespace {

// Heap cost estimates (glibc: 16-byte granules, 8 bytes of header per chunk).
constexpr size_t HeapChunk(size_t n) { return n == 0 ? 0 : (n + 8 + 15) / 16 * 16; }
constexpr size_t StringHeap(size_t len) { return len < 16 ? 0 : HeapChunk(len + 1); }
// A bucket entry: an unordered_map node (next pointer, id, SeriesValues) plus its
// slot in the bucket array; its sketch is counted separately.
constexpr size_t kEntryBytes = HeapChunk(8 + 8 + sizeof(SeriesValues)) + 8;
// An index entry: node (next, std::string, id, cached hash) plus bucket slot.
constexpr size_t kIndexBytes = HeapChunk(8 + sizeof(std::string) + 8 + 8) + 8;
// A remembered crash id: an unordered_set node plus its bucket slot.
constexpr size_t kIdBytes = HeapChunk(16) + 8;

void InsertSorted(std::vector<int64_t>& v, int64_t b) {
  if (v.empty() || v.back() < b) {
    v.push_back(b);
    return;
  }
  auto it = std::lower_bound(v.begin(), v.end(), b);
  if (it == v.end() || *it != b) v.insert(it, b);
}

void AddValues(std::array<int64_t, kMaxValues>& to, const std::array<int64_t, kMaxValues>& from) {
  for (size_t i = 0; i < kMaxValues; ++i) to[i] += from[i];
}

}  // namespace

ShardState::ShardState(AggregateOptions options) : options_(std::move(options)) {
  if (options_.bucket_ms <= 0) options_.bucket_ms = 60'000;
  for (int64_t w : options_.windows_ms) {
    spans_ms_.push_back(w);
    spans_ms_.push_back(std::min(2 * w, options_.retention_ms));
  }
  std::sort(spans_ms_.begin(), spans_ms_.end());
  spans_ms_.erase(std::unique(spans_ms_.begin(), spans_ms_.end()), spans_ms_.end());
  span_start_.assign(spans_ms_.size(), INT64_MIN);
  state_budget_ = static_cast<size_t>(ShardStateBudget(options_));
}

ShardState::~ShardState() = default;

int64_t ShardState::BucketOf(int64_t ms) const {
  // Floor division; INT64_MIN ("no stream time yet") must not be negated.
  const int64_t b = options_.bucket_ms;
  const int64_t q = ms / b;
  return (ms % b != 0 && ms < 0) ? q - 1 : q;
}

int64_t ShardState::SpanStart(size_t span) const {
  return BucketOf(stream_time_ms_) - spans_ms_[span] / options_.bucket_ms + 1;
}

size_t ShardState::series_count() const { return live_series_; }

size_t ShardState::SeriesBytes(const Series& s) const {
  // The bucket list is counted as it grows (capacity), not here.
  return HeapChunk(sizeof(Series)) + 8 /* series_ slot */ +
         2 * StringHeap(s.key.size()) /* key, index copy */ + kIndexBytes +
         HeapChunk(spans_ms_.size() * sizeof(s.span_sums[0]));
}

size_t ShardState::MemoryBytes() const {
  return static_cast<size_t>(memory_bytes_) + (seen_crash_docs_.size() + seen_previous_.size()) * kIdBytes;
}

size_t ShardState::RecountMemoryBytes() const {
  size_t bytes = (seen_crash_docs_.size() + seen_previous_.size()) * kIdBytes;
  for (uint32_t id = 0; id < series_.size(); ++id) {
    const auto& s = series_[id];
    if (!s) continue;
    bytes += SeriesBytes(*s) + s->buckets.capacity() * sizeof(int64_t) + s->total.installs.MemoryBytes();
    for (int64_t b : s->buckets) bytes += kEntryBytes + buckets_.at(b).values.at(id).installs.MemoryBytes();
  }
  return bytes;
}

void ShardState::AddInstall(HyperLogLog& h, uint64_t hash) {
  const size_t before = h.MemoryBytes();
  h.Add(hash);
  memory_bytes_ += static_cast<int64_t>(h.MemoryBytes()) - static_cast<int64_t>(before);
}

void ShardState::MergeInstalls(HyperLogLog& into, const HyperLogLog& from) {
  if (from.empty()) return;
  const size_t before = into.MemoryBytes();
  into.Merge(from);
  memory_bytes_ += static_cast<int64_t>(into.MemoryBytes()) - static_cast<int64_t>(before);
}

uint32_t ShardState::SeriesFor(Table table, const std::string& key) {
  auto& index = index_[static_cast<size_t>(table)];
  auto it = index.find(key);
  if (it != index.end()) return it->second;
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<uint32_t>(series_.size());
    series_.emplace_back();
  }
  auto s = std::make_unique<Series>();
  s->table = table;
  s->key = key;
  s->span_sums.resize(spans_ms_.size());
  s->level = FoldLevel(table, key);
  memory_bytes_ += static_cast<int64_t>(SeriesBytes(*s));
  series_[id] = std::move(s);
  index.emplace(key, id);
  ++live_series_;
  return id;
}

void ShardState::Apply(const Delta& d) { Apply(d, EventTime{std::max(stream_time_ms_, d.time.ms)}); }

void ShardState::Apply(const Delta& d, EventTime stream_time) {
  ++counters_.deltas;
  AdvanceTo(stream_time);
  int64_t& table_time = table_time_ms_[static_cast<size_t>(d.table)];
  table_time = std::max(table_time, d.time.ms);
  const int64_t b = BucketOf(d.time.ms);
  const int64_t kept_buckets = options_.retention_ms / options_.bucket_ms;
  if (stream_time.ms != INT64_MIN && b <= BucketOf(stream_time.ms) - kept_buckets) {
    ++counters_.late_dropped;
    return;
  }
  if (d.table == Table::kCrashes && d.doc_hash != 0 && SeenBefore(d.doc_hash)) {
    ++counters_.duplicates;
    return;
  }
  // Not late against its own chunk, but a later chunk's batch came first and this
  // shard has expired the bucket: by now it would be expired anyway. (Its id is
  // remembered above, so that which copy of a document counts does not depend on it.)
  if (stream_time_ms_ != INT64_MIN && b <= BucketOf(stream_time_ms_) - kept_buckets) return;
  // A key folded earlier comes back as a new, small series; if it stays
  // insignificant it is folded again. Remembering folded keys would cost
  // memory per distinct key, which is exactly what the budget bounds.
  const uint32_t id = SeriesFor(d.table, d.key);
  Series& s = *series_[id];
  auto [slot, created] = buckets_[b].values.try_emplace(id);
  SeriesValues& entry = slot->second;
  if (created) {
    memory_bytes_ += static_cast<int64_t>(kEntryBytes);
    const size_t capacity = s.buckets.capacity();
    InsertSorted(s.buckets, b);
    memory_bytes_ += static_cast<int64_t>((s.buckets.capacity() - capacity) * sizeof(int64_t));
  }
  AddValues(entry.v, d.values);
  AddValues(s.total.v, d.values);
  s.first_ms = std::min(s.first_ms, d.time.ms);
  if (d.install_hash != 0) {
    AddInstall(entry.installs, d.install_hash);
    AddInstall(s.total.installs, d.install_hash);
  }
  for (size_t i = 0; i < spans_ms_.size(); ++i) {
    if (b >= span_start_[i]) AddValues(s.span_sums[i], d.values);
  }
  FoldIfOverBudget();
}

bool ShardState::SeenBefore(uint64_t doc_hash) {
  // Two generations of half a retention each: an id is remembered for at least
  // half and at most one and a half retention periods...
  const int64_t half = std::max<int64_t>(1, options_.retention_ms / options_.bucket_ms / 2);
  const int64_t epoch = BucketOf(stream_time_ms_) / half;
  if (epoch != dedup_epoch_) {
    seen_previous_ = std::move(seen_crash_docs_);
    seen_crash_docs_.clear();
    if (epoch != dedup_epoch_ + 1) seen_previous_.clear();  // both generations expired
    dedup_epoch_ = epoch;
  }
  // ... unless the ids outgrow their share of the budget (an eighth): then the
  // older generation goes early.
  const size_t max_ids = std::max<size_t>(1024, state_budget_ / 8 / kIdBytes);
  if (seen_crash_docs_.size() + seen_previous_.size() >= max_ids) {
    counters_.dedup_forgotten += seen_previous_.size();
    seen_previous_ = std::move(seen_crash_docs_);
    seen_crash_docs_.clear();
  }
  return seen_previous_.count(doc_hash) != 0 || !seen_crash_docs_.insert(doc_hash).second;
}

void ShardState::AdvanceTo(EventTime t) {
  if (t.ms <= stream_time_ms_) return;
  const bool first = stream_time_ms_ == INT64_MIN;
  stream_time_ms_ = t.ms;
  for (size_t i = 0; i < spans_ms_.size(); ++i) {
    int64_t new_start = SpanStart(i);
    if (!first) {
      for (auto it = buckets_.lower_bound(span_start_[i]); it != buckets_.end() && it->first < new_start;
           ++it) {
        for (const auto& [id, v] : it->second.values) {
          auto& sums = series_[id]->span_sums[i];
          for (size_t k = 0; k < kMaxValues; ++k) sums[k] -= v.v[k];
        }
      }
    }
    span_start_[i] = new_start;
  }
  // Retention: buckets at or before this index are dropped.
  const int64_t expired = BucketOf(stream_time_ms_) - options_.retention_ms / options_.bucket_ms;
  while (!buckets_.empty() && buckets_.begin()->first <= expired) {
    auto node = buckets_.extract(buckets_.begin());
    for (auto& [id, v] : node.mapped().values) {
      Series& s = *series_[id];
      memory_bytes_ -= static_cast<int64_t>(kEntryBytes + v.installs.MemoryBytes());
      s.total.Subtract(v.v);
      auto pos = std::lower_bound(s.buckets.begin(), s.buckets.end(), node.key());
      if (pos != s.buckets.end() && *pos == node.key()) s.buckets.erase(pos);
      if (!s.buckets.empty()) s.first_ms = std::max(s.first_ms, s.buckets.front() * options_.bucket_ms);
      ReleaseIfEmpty(id);
    }
  }
}

void ShardState::ReleaseIfEmpty(uint32_t id) {
  Series& s = *series_[id];
  if (!s.buckets.empty()) return;
  index_[static_cast<size_t>(s.table)].erase(s.key);
  memory_bytes_ -= static_cast<int64_t>(SeriesBytes(s) + s.buckets.capacity() * sizeof(int64_t) +
                                        s.total.installs.MemoryBytes());
  series_[id].reset();
  free_ids_.push_back(id);
  --live_series_;
}

void ShardState::Fold(uint32_t id) {
  Series& x = *series_[id];
  if (x.level >= FoldLevels(x.table)) return;
  const uint32_t oid = SeriesFor(x.table, FoldKey(x.table, x.key, x.level + 1));
  Series& o = *series_[oid];
  Series& xs = *series_[id];  // SeriesFor may have grown series_; re-read
  for (int64_t b : xs.buckets) {
    auto& values = buckets_[b].values;
    auto it = values.find(id);
    if (it == values.end()) continue;
    auto [slot, created] = values.try_emplace(oid);
    if (created) {
      const size_t capacity = o.buckets.capacity();
      InsertSorted(o.buckets, b);
      memory_bytes_ += static_cast<int64_t>((o.buckets.capacity() - capacity) * sizeof(int64_t));
    } else {
      memory_bytes_ -= static_cast<int64_t>(kEntryBytes);  // two entries become one
    }
    // Re-read: try_emplace may have rehashed `values`.
    SeriesValues& from = values.find(id)->second;
    AddValues(slot->second.v, from.v);
    MergeInstalls(slot->second.installs, from.installs);
    memory_bytes_ -= static_cast<int64_t>(from.installs.MemoryBytes());
    values.erase(id);
  }
  AddValues(o.total.v, xs.total.v);
  MergeInstalls(o.total.installs, xs.total.installs);
  o.first_ms = std::min(o.first_ms, xs.first_ms);
  for (size_t i = 0; i < spans_ms_.size(); ++i) AddValues(o.span_sums[i], xs.span_sums[i]);
  xs.buckets.clear();
  ++counters_.folded;
  ReleaseIfEmpty(id);
}

void ShardState::FoldIfOverBudget() {
  if (live_series_ > options_.max_series) {
    FoldOnce(options_.max_series * 9 / 10);
  } else if (MemoryBytes() > state_budget_) {
    FoldOnce(live_series_ * 7 / 10);
  }
}

void ShardState::FoldOnce(size_t target) {
  // Least significant first: the smallest share of its own table's total (so hang
  // microseconds, crash counts and usage milliseconds compete fairly), usage
  // series weighted ten times (folding usage takes rates away from whole groups).
  // A series that folds into an "(other)" series that does not exist yet only
  // moves up (a distinct thread becomes a distinct "(other)"): passes repeat until
  // the count is under the target. Terminal series never fold, and there are at
  // most a few of them, so this ends.
  for (int pass = 0; pass < 8 && live_series_ > target; ++pass) {
    struct Candidate {
      double share;
      uint32_t id;
    };
    std::array<double, kTableCount> totals{};
    std::vector<Candidate> candidates;
    candidates.reserve(live_series_);
    for (uint32_t id = 0; id < series_.size(); ++id) {
      const auto& s = series_[id];
      if (!s || s->level >= FoldLevels(s->table)) continue;
      totals[static_cast<size_t>(s->table)] += static_cast<double>(std::max<int64_t>(s->total.v[0], 0));
      candidates.push_back({0, id});
    }
    for (Candidate& c : candidates) {
      const Series& s = *series_[c.id];
      const double total = totals[static_cast<size_t>(s.table)];
      const double weight = s.table == Table::kUsage || s.table == Table::kBuildUsage ? 10 : 1;
      c.share = total > 0 ? weight * static_cast<double>(std::max<int64_t>(s.total.v[0], 0)) / total : 0;
    }
    const size_t to_fold = std::min(live_series_ - target, candidates.size());
    if (to_fold == 0) return;
    auto less = [&](const Candidate& a, const Candidate& b) {
      if (a.share != b.share) return a.share < b.share;
      const Series& x = *series_[a.id];
      const Series& y = *series_[b.id];
      if (x.level != y.level) return x.level < y.level;
      return x.key < y.key;
    };
    std::nth_element(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(to_fold - 1),
                     candidates.end(), less);
    for (size_t i = 0; i < to_fold; ++i) {
      if (series_[candidates[i].id]) Fold(candidates[i].id);
    }
  }
}

ShardImage ShardState::Image() const {
  ShardImage image;
  image.stream_time_ms = stream_time_ms_;
  image.counters = counters_;
  image.dedup_epoch = dedup_epoch_;
  image.seen_docs.assign(seen_crash_docs_.begin(), seen_crash_docs_.end());
  image.seen_previous.assign(seen_previous_.begin(), seen_previous_.end());
  for (uint32_t id = 0; id < series_.size(); ++id) {
    const auto& s = series_[id];
    if (!s) continue;
    SeriesImage out;
    out.table = s->table;
    out.key = s->key;
    out.first_ms = s->first_ms;
    for (int64_t b : s->buckets) {
      const SeriesValues& v = buckets_.at(b).values.at(id);
      out.entries.push_back({b, v.v, v.installs});
    }
    image.series.push_back(std::move(out));
  }
  return image;
}

void ShardState::RestoreBegin(const ShardImage& image, bool with_dedup, bool with_counters) {
  if (image.stream_time_ms != INT64_MIN) AdvanceTo(EventTime{image.stream_time_ms});
  if (with_counters) {
    counters_.deltas += image.counters.deltas;
    counters_.duplicates += image.counters.duplicates;
    counters_.late_dropped += image.counters.late_dropped;
    counters_.folded += image.counters.folded;
    counters_.dedup_forgotten += image.counters.dedup_forgotten;
  }
  if (with_dedup) {
    dedup_epoch_ = image.dedup_epoch;
    seen_crash_docs_.insert(image.seen_docs.begin(), image.seen_docs.end());
    seen_previous_.insert(image.seen_previous.begin(), image.seen_previous.end());
  }
}

void ShardState::RestoreSeries(const SeriesImage& in) {
  const uint32_t id = SeriesFor(in.table, in.key);
  Series& s = *series_[id];
  s.first_ms = std::min(s.first_ms, in.first_ms);
  const int64_t expired = BucketOf(stream_time_ms_) - options_.retention_ms / options_.bucket_ms;
  for (const SeriesImage::Entry& e : in.entries) {
    if (stream_time_ms_ != INT64_MIN && e.bucket <= expired) continue;  // retention shrank since
    auto [slot, created] = buckets_[e.bucket].values.try_emplace(id);
    SeriesValues& entry = slot->second;
    if (created) {
      memory_bytes_ += static_cast<int64_t>(kEntryBytes);
      const size_t capacity = s.buckets.capacity();
      InsertSorted(s.buckets, e.bucket);
      memory_bytes_ += static_cast<int64_t>((s.buckets.capacity() - capacity) * sizeof(int64_t));
    }
    AddValues(entry.v, e.v);
    MergeInstalls(entry.installs, e.installs);
    AddValues(s.total.v, e.v);
    MergeInstalls(s.total.installs, e.installs);
    for (size_t i = 0; i < spans_ms_.size(); ++i) {
      if (e.bucket >= span_start_[i]) AddValues(s.span_sums[i], e.v);
    }
  }
  ReleaseIfEmpty(id);
}

SeriesTable ShardState::Totals(Table t) const {
  SeriesTable out;
  for (const auto& [key, id] : index_[static_cast<size_t>(t)]) out[key] = series_[id]->total;
  return out;
}

std::unique_ptr<ShardSnapshot> ShardState::Snapshot() const {
  auto snap = std::make_unique<ShardSnapshot>();
  snap->stream_time_ms = stream_time_ms_;
  snap->table_time_ms = table_time_ms_;
  snap->spans_ms = spans_ms_;
  snap->counters = counters_;
  snap->memory_bytes = MemoryBytes();
  int64_t longest = 0;
  for (int64_t w : options_.windows_ms) longest = std::max(longest, w);
  const int64_t points_from = BucketOf(stream_time_ms_) - longest / options_.bucket_ms + 1;
  snap->series.reserve(live_series_);
  for (uint32_t id = 0; id < series_.size(); ++id) {
    const auto& s = series_[id];
    if (!s) continue;
    ShardSnapshot::Series out;
    out.table = s->table;
    out.key = s->key;
    out.total = s->total;
    out.spans.resize(spans_ms_.size());
    for (size_t i = 0; i < spans_ms_.size(); ++i) out.spans[i].v = s->span_sums[i];
    out.first_ms = s->first_ms;
    for (auto it = s->buckets.begin(); it != s->buckets.end(); ++it) {
      const SeriesValues& v = buckets_.at(*it).values.at(id);
      if (*it >= points_from) out.points.push_back({*it, {v.v[0], v.v[1]}});
      const int64_t hour = *it * options_.bucket_ms / 3'600'000;
      if (out.hourly.empty() || out.hourly.back().bucket != hour) out.hourly.push_back({hour, {}});
      AddValues(out.hourly.back().v, v.v);
      if (s->table == Table::kCrashes && !v.installs.empty()) {
        for (size_t i = 0; i < spans_ms_.size(); ++i) {
          if (*it >= span_start_[i]) out.spans[i].installs.Merge(v.installs);
        }
      }
    }
    snap->series.push_back(std::move(out));
  }
  return snap;
}

}  // namespace seismo
