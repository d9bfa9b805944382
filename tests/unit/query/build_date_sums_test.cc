// BuildDateSums (the warm-up's /builds hang sums by build date, ADR 0034, issue 19): brought
// from round to round with what the hang rows' update changed, they are the sums a walk of the
// rows finds, entry for entry; the /builds answer reading them is byte for byte the answer
// that walks the table; and they serve only the query they were made for.
#include "seismo/query/build_date_sums.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "query_fixture.h"
#include "seismo/aggregate/row_changes.h"
#include "seismo/query/builds_json.h"

namespace seismo {
namespace {

using testing::kHour;
using testing::kMin;
using testing::Q;
using testing::World;

// (hang_us, hang_count, rows) by (source, channel, build date) ids.
using Entries = std::map<BuildDateKey, std::tuple<int64_t, int64_t, int64_t>>;

Entries Walk(std::span<const HangRow> rows) {
  Entries out;
  for (const HangRow& r : rows) {
    auto& [us, count, n] = out[BuildDateOf(r.key)];
    us += r.sums.hang_us;
    count += r.sums.hang_count;
    ++n;
  }
  return out;
}

Entries Held(const BuildDateSums& kept) {
  Entries out;
  for (const auto& [key, s] : kept.sums()) out[key] = {s.hang_us, s.hang_count, s.rows};
  return out;
}

// Over rounds of new keys, changed keys, keys outside the window, quiet rounds, build dates
// that come and go, and series folded into "(other)" (rows that leave), on one and two
// shards: the sums brought with each update's delta are a walk's, and the /builds answers
// reading them are the answers that walk the table.
class BuildDateSumsOverShards : public ::testing::TestWithParam<size_t> {};

TEST_P(BuildDateSumsOverShards, BroughtFromWhatChangedAreTheSumsOfAWalk) {
  World w(/*max_series=*/250, /*shards=*/GetParam());
  testing::Lcg next(5);
  auto usage = [&] {  // in the window whatever stream time
    for (int d = 0; d < 8; ++d) {
      const std::string date = "202611" + std::to_string(10 + d);
      w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin, "release", date);
      w.Usage("main", "Linux", kHour, 10 * kMin, "release", date);
      w.BuildUsage("Linux", kHour, 3, 0, 10 * kMin, date + "090501");
    }
  };
  usage();
  // Build dates 10..13 at first, 10..17 later: entries come; a date whose rows all leave goes.
  auto hangs = [&](int n, uint64_t keys, int dates) {
    for (int i = 0; i < n; ++i) {
      const uint64_t k = next(keys);
      const int d = static_cast<int>(k % static_cast<uint64_t>(dates));
      w.Hang(
          k % 4 == 0 ? "main" : "bhr", "Linux", "parent", "T" + std::to_string(k % 3),
          {"root", "f" + std::to_string(k)}, static_cast<int64_t>(1000 * (1 + next(3))), 1,
          next(4) == 0 ? static_cast<int64_t>(70 + next(2000)) * kMin : static_cast<int64_t>(next(59)) * kMin,
          k % 5 == 0 ? "beta" : "release", "202611" + std::to_string(10 + d));
    }
  };
  hangs(300, 200, 4);
  std::shared_ptr<const Snapshot> before = w.Build();
  HangRows rows(*before, kHour, Filters{});
  BuildDateSums kept(rows.rows(), kHour, before->symbols);
  ASSERT_EQ(Held(kept), Walk(rows.rows()));
  size_t entries_came = 0, entries_went = 0;
  size_t updated = 0;  // rounds brought with the delta (the others: the window moved)
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    w.Advance(round % 7 == 3 ? 90 * kMin : 0);  // rows leave the window, brought across its move
    if (round % 7 == 3) usage();
    hangs(round % 4 == 0 ? 0 : round % 4 == 1 ? 2 : 70, round < 15 ? 200 : 700, round < 15 ? 4 : 8);
    const std::shared_ptr<const Snapshot> after = w.Build();
    const Entries held_before = Held(kept);
    RowDelta delta;
    if (rows.Update(*before, *after, ChangedRows(*before, *after, Table::kHangs), &delta)) {
      ASSERT_TRUE(kept.Serves(kHour, Filters{}, after->symbols));
      ASSERT_TRUE(kept.Apply(delta));
      ++updated;
    } else {
      rows = HangRows(*after, kHour, Filters{});
      kept = BuildDateSums(rows.rows(), kHour, after->symbols);
    }
    const Entries walked = Walk(rows.rows());
    ASSERT_EQ(Held(kept), walked);
    for (const auto& [key, sums] : walked) entries_came += held_before.contains(key) ? 0 : 1;
    for (const auto& [key, sums] : held_before) entries_went += walked.contains(key) ? 0 : 1;
    EXPECT_LE(kept.MemoryBytes(), 4096u) << "an entry per build date";
    for (const char* query : {"window=1h", "window=1h&limit=3"}) {
      const Query q = Q(Endpoint::kBuilds, query);
      const std::string answer = BuildsJson(*after, q, {}, &rows, &kept);
      EXPECT_EQ(answer, BuildsJson(*after, q)) << query;
      // Hangs in the window (not after a quiet round that moved it); the three newest builds
      // have none before round 15.
      if (q.limit > 3 && round % 4 >= 2) {
        EXPECT_TRUE(std::regex_search(answer, std::regex("\"hang_ms_per_hour\":[1-9]")))
            << "hang rates: " << answer;
      }
    }
    before = after;
  }
  EXPECT_GE(updated, 20u);
  EXPECT_GE(entries_came, 4u) << "build dates came";
  EXPECT_GE(entries_went, 1u) << "build dates went";
}

INSTANTIATE_TEST_SUITE_P(Shards, BuildDateSumsOverShards, ::testing::Values(size_t{1}, size_t{2}));

// The sums answer only the window and symbols they were made for, with no filter; another
// query walks the rows (and gets the walk's answer).
TEST(BuildDateSums, ServeOnlyTheirWindowWithoutFilters) {
  World w;
  w.Usage("bhr", "Linux", kHour, 10 * kMin);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "Sig1"}, 2000, 1, 5 * kMin);
  w.Hang("main", "Windows_NT", "parent", "Gecko", {"root", "Sig2"}, 3000, 1, 5 * kMin);
  const auto snap = w.Build();
  const HangRows rows(*snap, kHour, Filters{});
  const BuildDateSums kept(rows.rows(), kHour, snap->symbols);
  EXPECT_TRUE(kept.Serves(kHour, Filters{}, snap->symbols));
  EXPECT_FALSE(kept.Serves(24 * kHour, Filters{}, snap->symbols)) << "another window";
  EXPECT_FALSE(kept.Serves(kHour, Filters{}, nullptr)) << "another snapshot's ids";
  for (Dim d : {Dim::kSource, Dim::kOs, Dim::kThread}) {
    Filters f;
    f[d] = "x";
    EXPECT_FALSE(kept.Serves(kHour, f, snap->symbols)) << "a filter";
  }
  // A delta whose row that left is in no entry is refused.
  BuildDateSums other = kept;
  RowDelta bad;
  bad.left.push_back({rows.rows().front().key, {1, 1}});
  bad.left.back().key.f[hang_field::kBuildDate] = kNoId;
  EXPECT_FALSE(other.Apply(bad));
  for (const char* query :
       {"window=1h&os=Linux", "window=1h&source=main", "window=24h", "window=1h&thread=Gecko"}) {
    const Query q = Q(Endpoint::kBuilds, query);
    EXPECT_EQ(BuildsJson(*snap, q, {}, &rows, &kept), BuildsJson(*snap, q)) << query;
  }
}

}  // namespace
}  // namespace seismo
