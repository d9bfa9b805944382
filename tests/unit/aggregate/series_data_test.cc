// HourChunk::sum() and SeriesData::total() are kept beside the values only once there is
// more than one bucket or hour: checked against a recount after every change, and through
// copies (copy on write).
#include "seismo/aggregate/series_data.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "seismo/core/hash.h"

namespace seismo {
namespace {

Values Recount(const HourChunk& c) {
  Values out{};
  for (const Values& v : c.values) AddValues(out, v);
  return out;
}

Values Recount(const SeriesData& s) {
  Values out{};
  for (const auto& c : s.hours) AddValues(out, Recount(*c));
  return out;
}

Values RandomValues(std::mt19937_64& rng) {
  Values v{};
  for (int64_t& x : v) x = static_cast<int64_t>(rng() % 1000);
  return v;
}

TEST(HourChunk, TheSumIsTheBucketsSumThroughInsertsAddsAndErasesLikeARecount) {
  std::mt19937_64 rng(7);
  for (int run = 0; run < 200; ++run) {
    HourChunk c;
    EXPECT_EQ(c.sum(), Values{});
    for (int step = 0; step < 40; ++step) {
      const uint64_t op = rng() % 4;
      if (op == 0 || c.buckets.empty()) {
        const size_t i = rng() % (c.buckets.size() + 1);  // order does not matter to the sum
        c.InsertBucket(i, static_cast<int64_t>(step));
      } else if (op == 1 && c.buckets.size() > 0) {
        c.EraseFirstBucket();
      } else {
        c.AddToBucket(rng() % c.buckets.size(), RandomValues(rng));
      }
      ASSERT_EQ(c.sum(), Recount(c)) << "run " << run << " step " << step;
      ASSERT_EQ(c.buckets.size(), c.values.size());
      const HourChunk copy(c);
      ASSERT_EQ(copy.sum(), c.sum());
    }
  }
}

TEST(HourChunk, ACopyKeepsItsOwnSumAndSketches) {
  HourChunk a;
  a.PushBucket(1, Values{1, 2});
  a.PushBucket(2, Values{10, 20});
  a.sketches().hour.Add(Hash64("install-a"));
  HourChunk b(a);
  b.AddToBucket(0, Values{100, 0});
  b.sketches().hour.Add(Hash64("install-b"));
  EXPECT_EQ(a.sum()[0], 11);
  EXPECT_EQ(b.sum()[0], 111);
  EXPECT_NEAR(a.hour_installs().Estimate(), 1.0, 0.01);
  EXPECT_NEAR(b.hour_installs().Estimate(), 2.0, 0.01);
}

TEST(HourChunk, AnHourKeepsNothingBesideItUntilItNeedsTo) {
  HourChunk c;
  c.PushBucket(5, Values{3});
  EXPECT_FALSE(c.has_spill());
  EXPECT_FALSE(c.has_sketches());
  c.PushBucket(6, Values{4});
  EXPECT_TRUE(c.has_spill()) << "two buckets: the sum is kept beside";
  EXPECT_FALSE(c.has_sketches()) << "a sum is not a sketch";
  EXPECT_TRUE(c.installs().empty());
  EXPECT_EQ(c.sum()[0], 7);
  c.EraseFirstBucket();
  EXPECT_EQ(c.sum()[0], 4);
  EXPECT_FALSE(c.has_spill()) << "back to one bucket, nothing beside";
  c.PushBucket(7, Values{5});
  c.sketches().hour.Add(Hash64("install"));
  c.EraseFirstBucket();
  EXPECT_TRUE(c.has_spill()) << "the sketches stay";
  EXPECT_EQ(c.sum()[0], 5);
}

TEST(SeriesData, TheTotalIsTheHoursSumThroughNewAndDroppedHoursLikeARecount) {
  std::mt19937_64 rng(11);
  for (int run = 0; run < 200; ++run) {
    SeriesData s;
    EXPECT_EQ(s.total(), Values{});
    int64_t next_hour = 0;
    for (int step = 0; step < 40; ++step) {
      const uint64_t op = rng() % 5;
      if (op == 0 || s.hours.empty()) {  // a new hour is empty, as the shard makes it
        auto c = std::make_shared<HourChunk>();
        c->hour = next_hour++;
        s.hours.push_back(std::move(c));
        s.EmptyHourCameOrWent();
      } else if (op == 1) {  // expiry: bucket by bucket, then the empty hour
        HourChunk& front = *s.hours.front();
        while (!front.buckets.empty()) {
          s.SubtractFromTotal(front.values.front());
          front.EraseFirstBucket();
        }
        s.hours.erase(s.hours.begin());
        s.EmptyHourCameOrWent();
      } else if (op == 2) {  // a whole hour dropped (a merge's rebuilt list)
        s.hours.erase(s.hours.begin());
        s.Retotal();
      } else {
        HourChunk& c = *s.hours[rng() % s.hours.size()];
        const Values v = RandomValues(rng);
        if (c.buckets.empty() || rng() % 2 == 0) c.InsertBucket(c.buckets.size(), step);
        c.AddToBucket(c.buckets.size() - 1, v);
        s.AddToTotal(v);
      }
      ASSERT_EQ(s.total(), Recount(s)) << "run " << run << " step " << step;
      EXPECT_EQ(s.keeps_total(), s.hours.size() > 1);
      const SeriesData copy(s);
      ASSERT_EQ(copy.total(), s.total());
    }
  }
}

TEST(SeriesData, ACopyKeepsItsOwnTotal) {
  SeriesData a;
  for (int64_t h = 0; h < 2; ++h) {
    auto c = std::make_shared<HourChunk>();
    c->hour = h;
    c->PushBucket(h * 60, Values{1});
    a.hours.push_back(std::move(c));
  }
  a.Retotal();
  SeriesData b(a);
  auto c = std::make_shared<HourChunk>(*b.hours[1]);  // copy on write, as the shard does
  c->AddToBucket(0, Values{5});
  b.hours[1] = std::move(c);
  b.AddToTotal(Values{5});
  EXPECT_EQ(a.total()[0], 2);
  EXPECT_EQ(b.total()[0], 7);
}

}  // namespace
}  // namespace seismo
