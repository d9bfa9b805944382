#include "seismo/aggregate/series_data.h"

#include <algorithm>
#include <cassert>

namespace seismo {
namespace {

const Values kZero{};

}  // namespace

HourChunk::HourChunk(const HourChunk& other)
    : hour(other.hour),
      buckets(other.buckets),
      values(other.values),
      spill_(other.spill_ ? std::make_unique<HourSpill>(*other.spill_) : nullptr) {}

const Values& HourChunk::sum() const {
  if (values.size() > 1) return spill_->sum;
  return values.empty() ? kZero : values.front();
}

void HourChunk::InsertBucket(size_t i, int64_t bucket) {
  // From one bucket to two, the sum moves beside the hour (the new bucket is zero).
  if (values.size() == 1) spill().sum = values.front();
  buckets.insert(buckets.begin() + static_cast<ptrdiff_t>(i), bucket);
  values.insert(values.begin() + static_cast<ptrdiff_t>(i), Values{});
}

void HourChunk::AddToBucket(size_t i, const Values& v) {
  AddValues(values[i], v);
  if (values.size() > 1) AddValues(spill_->sum, v);
}

void HourChunk::PushBucket(int64_t bucket, const Values& v) {
  InsertBucket(buckets.size(), bucket);
  AddToBucket(buckets.size() - 1, v);
}

void HourChunk::EraseFirstBucket() {
  if (values.size() > 1) SubtractValues(spill_->sum, values.front());
  buckets.erase(buckets.begin());
  values.erase(values.begin());
  if (has_sketches() && !spill_->sketches->buckets.empty()) {
    spill_->sketches->buckets.erase(spill_->sketches->buckets.begin());
  }
  if (values.size() <= 1 && !has_sketches()) spill_.reset();  // nothing left to keep beside
}

const HyperLogLog& HourChunk::hour_installs() const {
  static const HyperLogLog* const kNone = new HyperLogLog();  // never freed: any thread, any time
  return has_sketches() ? spill_->sketches->hour : *kNone;
}

const std::vector<HyperLogLog>& HourChunk::installs() const {
  static const std::vector<HyperLogLog>* const kNone = new std::vector<HyperLogLog>();
  return has_sketches() ? spill_->sketches->buckets : *kNone;
}

HourSpill& HourChunk::spill() {
  if (!spill_) spill_ = std::make_unique<HourSpill>();
  return *spill_;
}

HourSketches& HourChunk::sketches() {
  HourSpill& s = spill();
  if (!s.sketches) s.sketches = std::make_unique<HourSketches>();
  return *s.sketches;
}

SeriesData::SeriesData(const SeriesData& other)
    : key(other.key),
      level(other.level),
      hash(other.hash),
      installs(other.installs),
      first_ms(other.first_ms),
      hours(other.hours),
      total_(other.total_ ? std::make_unique<Values>(*other.total_) : nullptr) {}

const Values& SeriesData::total() const {
  if (total_) return *total_;
  return hours.empty() ? kZero : hours.front()->sum();
}

void SeriesData::AddToTotal(const Values& v) {
  if (total_) AddValues(*total_, v);
}

void SeriesData::SubtractFromTotal(const Values& v) {
  if (total_) SubtractValues(*total_, v);
}

void SeriesData::EmptyHourCameOrWent() {
  // An empty hour changes no sum: only the step between one hour and two has work.
  if (hours.size() < 2) {
    total_.reset();
  } else if (!total_) {
    Retotal();
  }
#ifndef NDEBUG
  Values sum{};
  for (const auto& c : hours) AddValues(sum, c->sum());
  assert(total() == sum && "the hour that came or went held values: Retotal, not EmptyHourCameOrWent");
#endif
}

void SeriesData::Retotal() {
  if (hours.size() < 2) {
    total_.reset();
    return;
  }
  if (!total_) total_ = std::make_unique<Values>();
  *total_ = Values{};
  for (const auto& c : hours) AddValues(*total_, c->sum());
}

Values SumBuckets(const SeriesData& s, const BucketRange& r) {
  Values out{};
  const int64_t from = r.from;
  const int64_t to = r.to;
  if (from > to) return out;
  for (const auto& c : s.hours) {
    if (c->hour >= r.first_full && c->hour <= r.last_full) {
      AddValues(out, c->sum());
      continue;
    }
    if (c->buckets.empty() || c->buckets.back() < from || c->buckets.front() > to) continue;
    if (c->buckets.front() >= from && c->buckets.back() <= to) {  // every bucket inside: the sum
      AddValues(out, c->sum());
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
  for (const auto& c : s.hours) out.push_back({c->hour, c->sum()});
  return out;
}

size_t BucketCount(const SeriesData& s) {
  size_t n = 0;
  for (const auto& c : s.hours) n += c->buckets.size();
  return n;
}

const HyperLogLog* BucketImageInstalls(const HourChunk& c, size_t i) {
  if (!c.installs().empty()) return &c.installs()[i];
  if (i == 0 && !c.hour_installs().empty()) return &c.hour_installs();
  return nullptr;
}

}  // namespace seismo
