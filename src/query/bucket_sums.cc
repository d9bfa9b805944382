#include "seismo/query/bucket_sums.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <utility>

namespace seismo {

namespace {

// Adds the buckets a series' hours hold to `span`: its first hour's first, its last hour's last
// (hours ascend, and so do their buckets; an hour may hold none).
void AddSpan(const SeriesData& s, BucketSums::Span& span) {
  for (const auto& hour : s.hours) {
    if (hour->buckets.empty()) continue;
    span.Add(hour->buckets.front());
    break;
  }
  for (auto hour = s.hours.rbegin(); hour != s.hours.rend(); ++hour) {
    if ((*hour)->buckets.empty()) continue;
    span.Add((*hour)->buckets.back());
    break;
  }
}

}  // namespace

BucketSums::Span BucketSums::SpanOf(const Snapshot& snap, Sym source) {
  Span span;
  if (source == kNoId) return span;
  for (const SeriesData* s : snap.table(Table::kHangs)) {
    if (s->key[hang_field::kSource] == source) AddSpan(*s, span);
  }
  return span;
}

BucketSums BucketSums::Make(const Snapshot& snap, Sym source, Span span) {
  BucketSums out(snap.symbols, snap.bucket_ms, source);
  if (source == kNoId || span.size() == 0) return out;
  out.Cover(span.first, span.last, span.size());
  for (const SeriesData* s : snap.table(Table::kHangs)) {
    if (s->key[hang_field::kSource] != source) continue;
    for (const auto& hour : s->hours) out.AddHour(*hour, 1, span.size());
  }
  return out;
}

BucketSums::Span BucketSums::SpanWith(const RowChanges& changes) const {
  Span span;
  if (!sums_.empty()) {
    span.Add(first_);
    span.Add(first_ + static_cast<int64_t>(sums_.size()) - 1);
  }
  if (source_ == kNoId) return span;
  for (const auto* rows : {&changes.removed, &changes.added}) {
    for (const SeriesData* s : *rows) {
      if (s->key[hang_field::kSource] == source_) AddSpan(*s, span);
    }
  }
  return span;
}

bool BucketSums::Apply(const Snapshot& before, const Snapshot& after, const RowChanges& changes,
                       size_t max_buckets) {
  if (before.symbols != symbols_ || after.symbols != symbols_ || before.bucket_ms != bucket_ms_ ||
      after.bucket_ms != bucket_ms_) {
    return false;
  }
  if (source_ == kNoId) return true;  // no series is of it, in either
  auto ours = [this](const SeriesData* s) { return s->key[hang_field::kSource] == source_; };
  // A changed series is removed and added: its new copy shares the hours that did not change
  // with the old one (copy on write). Paired by key, only the hours that differ are read.
  // Pairing only saves reads: a removed series left unpaired has all its hours taken out.
  // Keys do not repeat in a snapshot (MergeSnapshots sums them), so two removed rows share
  // a hash only when two keys' hashes collide; the second is then left unpaired.
  absl::flat_hash_map<uint64_t, const SeriesData*> removed;  // by key hash
  std::vector<const SeriesData*> unpaired;
  removed.reserve(changes.removed.size());
  for (const SeriesData* s : changes.removed) {
    if (!ours(s)) continue;
    if (!removed.try_emplace(s->hash, s).second) unpaired.push_back(s);
  }
  auto all = [&](const SeriesData& s, int64_t sign) {
    for (const auto& hour : s.hours) {
      if (!AddHour(*hour, sign, max_buckets)) return false;
    }
    return true;
  };
  for (const SeriesData* s : changes.added) {
    if (!ours(s)) continue;
    auto it = removed.find(s->hash);
    if (it == removed.end() || it->second->key != s->key) {
      if (!all(*s, 1)) return false;
      continue;
    }
    const SeriesData& old = *it->second;
    removed.erase(it);
    // Both lists ascend by hour.
    auto a = old.hours.begin(), b = s->hours.begin();
    while (a != old.hours.end() || b != s->hours.end()) {
      if (b == s->hours.end() || (a != old.hours.end() && (*a)->hour < (*b)->hour)) {
        if (!AddHour(**a++, -1, max_buckets)) return false;
      } else if (a == old.hours.end() || (*b)->hour < (*a)->hour) {
        if (!AddHour(**b++, 1, max_buckets)) return false;
      } else {
        if (*a != *b && !(AddHour(**a, -1, max_buckets) && AddHour(**b, 1, max_buckets))) return false;
        ++a;
        ++b;
      }
    }
  }
  for (const auto& [hash, s] : removed) {
    if (!all(*s, -1)) return false;
  }
  for (const SeriesData* s : unpaired) {
    if (!all(*s, -1)) return false;
  }
  Trim();
  return true;
}

bool BucketSums::Serves(const Filters& filters, const Symbols* symbols, int64_t bucket_ms, Sym source) const {
  return symbols == symbols_ && bucket_ms == bucket_ms_ && source == source_ && filters.OnlySource();
}

void BucketSums::AddTo(const TimeAxis& axis, std::vector<Sums>& into) const {
  if (axis.last < axis.first || sums_.empty()) return;
  const int64_t from = std::max(axis.first, first_);
  const int64_t to = std::min(axis.last, first_ + static_cast<int64_t>(sums_.size()) - 1);
  for (int64_t b = from; b <= to; ++b) {
    const Sums& v = sums_[static_cast<size_t>(b - first_)];
    Sums& point = into[static_cast<size_t>(axis.IndexOf(b))];
    point[0] += v[0];
    point[1] += v[1];
  }
}

bool BucketSums::AddHour(const HourChunk& hour, int64_t sign, size_t max_buckets) {
  if (hour.buckets.empty()) return true;
  if (!Cover(hour.buckets.front(), hour.buckets.back(), max_buckets)) return false;
  for (size_t i = 0; i < hour.buckets.size(); ++i) {
    Sums& into = sums_[static_cast<size_t>(hour.buckets[i] - first_)];
    into[0] += sign * hour.values[i][0];
    into[1] += sign * hour.values[i][1];
  }
  return true;
}

bool BucketSums::Cover(int64_t first, int64_t last, size_t max_buckets) {
  const bool empty = sums_.empty();
  const int64_t from = empty ? first : std::min(first, first_);
  const int64_t to = empty ? last : std::max(last, first_ + static_cast<int64_t>(sums_.size()) - 1);
  if (static_cast<uint64_t>(to - from) >= max_buckets) return false;
  const auto size = static_cast<size_t>(to - from + 1);
  // Grown by an eighth at a time, never doubled (BytesFor): one bucket comes a round.
  if (size > sums_.capacity()) sums_.reserve(size + size / 8);
  if (empty) {
    first_ = from;
  } else if (from < first_) {
    sums_.insert(sums_.begin(), static_cast<size_t>(first_ - from), Sums{});
    first_ = from;
  }
  sums_.resize(size);
  return true;
}

void BucketSums::Trim() {
  auto zero = [](const Sums& v) { return v[0] == 0 && v[1] == 0; };
  while (!sums_.empty() && zero(sums_.back())) sums_.pop_back();
  const auto kept = std::find_if_not(sums_.begin(), sums_.end(), zero);
  first_ += kept - sums_.begin();
  sums_.erase(sums_.begin(), kept);
  if (sums_.capacity() > sums_.size() + sums_.size() / 4 + 64) sums_.shrink_to_fit();
}

}  // namespace seismo
