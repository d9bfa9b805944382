#include "seismo/aggregate/series_data.h"

#include <algorithm>

namespace seismo {

HourChunk::HourChunk(const HourChunk& other)
    : hour(other.hour),
      sum(other.sum),
      buckets(other.buckets),
      values(other.values),
      sketches_(other.sketches_ ? std::make_unique<HourSketches>(*other.sketches_) : nullptr) {}

const HyperLogLog& HourChunk::hour_installs() const {
  static const HyperLogLog* const kNone = new HyperLogLog();  // never freed: any thread, any time
  return sketches_ ? sketches_->hour : *kNone;
}

const std::vector<HyperLogLog>& HourChunk::installs() const {
  static const std::vector<HyperLogLog>* const kNone = new std::vector<HyperLogLog>();
  return sketches_ ? sketches_->buckets : *kNone;
}

HourSketches& HourChunk::sketches() {
  if (!sketches_) sketches_ = std::make_unique<HourSketches>();
  return *sketches_;
}

Values SumBuckets(const SeriesData& s, const BucketRange& r) {
  Values out{};
  const int64_t from = r.from;
  const int64_t to = r.to;
  if (from > to) return out;
  for (const auto& c : s.hours) {
    if (c->hour >= r.first_full && c->hour <= r.last_full) {
      AddValues(out, c->sum);
      continue;
    }
    if (c->buckets.empty() || c->buckets.back() < from || c->buckets.front() > to) continue;
    if (c->buckets.front() >= from && c->buckets.back() <= to) {  // every bucket inside: the sum
      AddValues(out, c->sum);
      continue;
    }
    for (size_t i = 0; i < c->buckets.size(); ++i) {
      if (c->buckets[i] >= from && c->buckets[i] <= to) AddValues(out, c->values[i]);
    }
  }
  return out;
}

HyperLogLog InstallsOfBuckets(const SeriesData& s, const BucketRange& r) {
  HyperLogLog out;
  const int64_t from = r.from;
  const int64_t to = r.to;
  if (from > to) return out;
  for (const auto& c : s.hours) {
    if (c->installs().empty() || c->buckets.back() < from || c->buckets.front() > to) continue;
    if (c->hour >= r.first_full && c->hour <= r.last_full) {
      out.Merge(c->hour_installs());
      continue;
    }
    for (size_t i = 0; i < c->buckets.size(); ++i) {
      if (c->buckets[i] >= from && c->buckets[i] <= to && !c->installs()[i].empty())
        out.Merge(c->installs()[i]);
    }
  }
  return out;
}

HyperLogLog InstallsOfHours(const SeriesData& s) {
  HyperLogLog out;
  for (const auto& c : s.hours) out.Merge(c->hour_installs());
  return out;
}

std::vector<BucketPoint> PointsOf(const SeriesData& s, int64_t from, int64_t to) {
  std::vector<BucketPoint> out;
  for (const auto& c : s.hours) {
    if (c->buckets.empty() || c->buckets.back() < from || c->buckets.front() > to) continue;
    for (size_t i = 0; i < c->buckets.size(); ++i) {
      if (c->buckets[i] >= from && c->buckets[i] <= to) {
        out.push_back({c->buckets[i], {c->values[i][0], c->values[i][1]}});
      }
    }
  }
  return out;
}

std::vector<HourPoint> HourlyOf(const SeriesData& s) {
  std::vector<HourPoint> out;
  out.reserve(s.hours.size());
  for (const auto& c : s.hours) out.push_back({c->hour, c->sum});
  return out;
}

size_t BucketCount(const SeriesData& s) {
  size_t n = 0;
  for (const auto& c : s.hours) n += c->buckets.size();
  return n;
}

}  // namespace seismo
