#include "seismo/aggregate/shard_state.h"

#include "seismo/aggregate/shard_image.h"

#include <algorithm>


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

std::string OtherKey(Table table, std::string_view key) {
  size_t keep;  // number of leading fields that form the parent group
  if (table == Table::kHangs) {
    keep = 6;  // source, channel, os, build_date, process, thread
  } else if (table == Table::kCrashes) {
    keep = 7;  // channel, product, version, build_id, os, process, class
  } else {
    return "";
  }
  std::vector<std::string_view> f = SplitKey(key);
  if (f.size() <= keep) return "";
  std::string out;
  for (size_t i = 0; i < keep; ++i) {
    out.append(f[i]);
    out += kKeySep;
  }
  out.append(kOtherSeries);  // signature
  if (table == Table::kHangs) {
    out += kKeySep;
    out.append(kOtherSeries);  // stack
  }
  return out;
}

// ------------------------------------------------------------ internals

struct ShardState::Series {
  Table table;
  std::string key;
  int64_t first_ms = INT64_MAX;  // earliest event time applied (reset when buckets expire)
  bool is_other = false;
  SeriesValues total;
  std::vector<std::array<int64_t, kMaxValues>> span_sums;
  std::vector<int64_t> buckets;  // ascending bucket indices holding a value of this series
};

struct ShardState::Bucket {
  std::unordered_map<uint32_t, SeriesValues> values;
};

namespace {

constexpr size_t kSeriesOverhead = 160;  // bytes per series beyond its key (estimate)
constexpr size_t kEntryOverhead = 96;    // bytes per (bucket, series) value

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
}

ShardState::~ShardState() = default;

int64_t ShardState::BucketOf(int64_t ms) const {
  int64_t b = options_.bucket_ms;
  return ms >= 0 ? ms / b : -((-ms + b - 1) / b);
}

int64_t ShardState::SpanStart(size_t span) const {
  return BucketOf(stream_time_ms_) - spans_ms_[span] / options_.bucket_ms + 1;
}

size_t ShardState::series_count() const { return live_series_; }

size_t ShardState::MemoryBytes() const {
  size_t bytes = (seen_crash_docs_.size() + seen_previous_.size()) * 32;
  for (const auto& s : series_) {
    if (!s) continue;
    bytes += kSeriesOverhead + s->key.size() + s->span_sums.size() * sizeof(s->span_sums[0]) +
             s->buckets.size() * (kEntryOverhead + 8) + s->total.installs.MemoryBytes();
  }
  return bytes;
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
  s->is_other = (table == Table::kHangs || table == Table::kCrashes) &&
                key.size() >= kOtherSeries.size() &&
                std::string_view(key).substr(key.size() - kOtherSeries.size()) == kOtherSeries &&
                OtherKey(table, key) == key;
  if ((table == Table::kHangs || table == Table::kCrashes) && !s->is_other) ++foldable_series_;
  series_[id] = std::move(s);
  index.emplace(key, id);
  ++live_series_;
  return id;
}

void ShardState::Apply(const Delta& d) {
  ++counters_.deltas;
  if (d.time.ms > stream_time_ms_) AdvanceTo(d.time);
  int64_t& table_time = table_time_ms_[static_cast<size_t>(d.table)];
  table_time = std::max(table_time, d.time.ms);
  const int64_t b = BucketOf(d.time.ms);
  if (b <= BucketOf(stream_time_ms_) - options_.retention_ms / options_.bucket_ms) {
    ++counters_.late_dropped;
    return;
  }
  if (d.table == Table::kCrashes && d.doc_hash != 0) {
    // Two generations of half a retention each: an id is remembered for at
    // least half and at most one and a half retention periods.
    const int64_t half = std::max<int64_t>(1, options_.retention_ms / options_.bucket_ms / 2);
    const int64_t epoch = BucketOf(stream_time_ms_) / half;
    if (epoch != dedup_epoch_) {
      seen_previous_ = std::move(seen_crash_docs_);
      seen_crash_docs_.clear();
      if (epoch != dedup_epoch_ + 1) seen_previous_.clear();
      dedup_epoch_ = epoch;
    }
    if (seen_previous_.count(d.doc_hash) != 0 || !seen_crash_docs_.insert(d.doc_hash).second) {
      ++counters_.duplicates;
      return;
    }
  }
  // A key folded earlier comes back as a new, small series; if it stays
  // insignificant it is folded again. Remembering folded keys would cost
  // memory per distinct key, which is exactly what the budget bounds.
  const uint32_t id = SeriesFor(d.table, d.key);
  Series& s = *series_[id];
  SeriesValues& entry = buckets_[b].values[id];
  if (s.buckets.empty() || s.buckets.back() != b) InsertSorted(s.buckets, b);
  AddValues(entry.v, d.values);
  AddValues(s.total.v, d.values);
  s.first_ms = std::min(s.first_ms, d.time.ms);
  if (d.install_hash != 0) {
    entry.installs.Add(d.install_hash);
    s.total.installs.Add(d.install_hash);
  }
  for (size_t i = 0; i < spans_ms_.size(); ++i) {
    if (b >= span_start_[i]) AddValues(s.span_sums[i], d.values);
  }
  FoldIfOverBudget();
}

void ShardState::AdvanceTo(EventTime t) {
  if (t.ms <= stream_time_ms_) return;
  const bool first = stream_time_ms_ == INT64_MIN;
  stream_time_ms_ = t.ms;
  for (size_t i = 0; i < spans_ms_.size(); ++i) {
    int64_t new_start = SpanStart(i);
    if (!first) {
      for (auto it = buckets_.lower_bound(span_start_[i]); it != buckets_.end() && it->first < new_start; ++it) {
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
  if ((s.table == Table::kHangs || s.table == Table::kCrashes) && !s.is_other) --foldable_series_;
  series_[id].reset();
  free_ids_.push_back(id);
  --live_series_;
}

void ShardState::Fold(uint32_t id) {
  Series& x = *series_[id];
  std::string other_key = OtherKey(x.table, x.key);
  if (other_key.empty() || x.is_other) return;
  uint32_t oid = SeriesFor(x.table, other_key);
  Series& o = *series_[oid];
  Series& xs = *series_[id];  // SeriesFor may have grown series_; re-read
  for (int64_t b : xs.buckets) {
    auto& values = buckets_[b].values;
    auto it = values.find(id);
    if (it == values.end()) continue;
    values[oid].Add(it->second);
    values.erase(it);
    InsertSorted(o.buckets, b);
  }
  o.total.Add(xs.total);
  o.first_ms = std::min(o.first_ms, xs.first_ms);
  for (size_t i = 0; i < spans_ms_.size(); ++i) AddValues(o.span_sums[i], xs.span_sums[i]);
  xs.buckets.clear();
  ++counters_.folded;
  ReleaseIfEmpty(id);
}

void ShardState::FoldIfOverBudget() {
  const size_t memory_budget =
      static_cast<size_t>(options_.memory_limit / std::max<size_t>(options_.shards, 1));
  bool over_count = foldable_series_ > options_.max_series;
  // Memory is estimated only every 4096 deltas: the estimate walks every series.
  bool over_memory = (counters_.deltas & 4095) == 0 && MemoryBytes() > memory_budget;
  if (!over_count && !over_memory) return;
  size_t target = over_memory ? foldable_series_ * 7 / 10 : options_.max_series * 9 / 10;
  // Least significant first: smallest first value (hang time or crash count), then key.
  std::vector<uint32_t> candidates;
  for (uint32_t id = 0; id < series_.size(); ++id) {
    const auto& s = series_[id];
    if (s && !s->is_other && (s->table == Table::kHangs || s->table == Table::kCrashes)) {
      candidates.push_back(id);
    }
  }
  size_t to_fold = candidates.size() > target ? candidates.size() - target : 0;
  std::nth_element(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(to_fold), candidates.end(),
                   [&](uint32_t a, uint32_t b) {
                     const Series& sa = *series_[a];
                     const Series& sb = *series_[b];
                     if (sa.total.v[0] != sb.total.v[0]) return sa.total.v[0] < sb.total.v[0];
                     return sa.key < sb.key;
                   });
  for (size_t i = 0; i < to_fold; ++i) Fold(candidates[i]);
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
    SeriesValues& entry = buckets_[e.bucket].values[id];
    InsertSorted(s.buckets, e.bucket);
    AddValues(entry.v, e.v);
    entry.installs.Merge(e.installs);
    AddValues(s.total.v, e.v);
    s.total.installs.Merge(e.installs);
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
