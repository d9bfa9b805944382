// IdSums (the /hangs answers' and the flame graph's sums by (group, id)): after Reduce, one
// entry per key, sorted by (group, id), each with the sums of every Add of that key, checked
// against a std::map over random keys of every width the radix sort takes passes for.
#include "seismo/query/id_sums.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

namespace seismo {
namespace {

using Model = std::map<std::pair<uint32_t, InternId>, HangSums>;

void ExpectEqualsModel(IdSums& sums, const Model& model) {
  const std::span<const IdSums::Entry> reduced = sums.Reduce();
  ASSERT_EQ(reduced.size(), model.size());
  auto m = model.begin();
  for (const IdSums::Entry& e : reduced) {
    EXPECT_EQ(std::pair(e.group, e.id), m->first);
    EXPECT_EQ(e.sums.hang_us, m->second.hang_us);
    EXPECT_EQ(e.sums.hang_count, m->second.hang_count);
    ++m;
  }
}

TEST(IdSums, EqualKeysAreSummedAndEntriesSortedByGroupThenId) {
  IdSums sums;
  sums.Add(1, 7, {10, 1});
  sums.Add(0, 9, {5, 2});
  sums.Add(1, 7, {20, 3});
  sums.Add(0, 2, {1, 1});
  sums.Add(1, 3, {4, 4});
  Model model{{{0, 2}, {1, 1}}, {{0, 9}, {5, 2}}, {{1, 3}, {4, 4}}, {{1, 7}, {30, 4}}};
  ExpectEqualsModel(sums, model);
}

TEST(IdSums, NothingAddedReducesToNothing) {
  IdSums sums;
  EXPECT_TRUE(sums.Reduce().empty());
}

// Ids up to 2^k and groups up to 2^g: keys of 1 to 40 bits, so from no pass to four, with
// passes skipped where every key has the same digit (one group, small ids).
TEST(IdSums, RandomKeysOfEveryWidthEqualAMapsSums) {
  std::mt19937_64 rng(19);
  for (int id_bits : {1, 5, 11, 12, 20, 32}) {
    for (int group_bits : {0, 1, 6}) {
      SCOPED_TRACE(testing::Message() << id_bits << " id bits, " << group_bits << " group bits");
      IdSums sums;
      Model model;
      const uint64_t id_max = (uint64_t{1} << id_bits) - 1;
      const uint64_t group_max = (uint64_t{1} << group_bits) - 1;
      for (int i = 0; i < 20'000; ++i) {
        // Few distinct ids for some rows: repeated keys.
        const uint64_t id_range = i % 3 == 0 ? std::min<uint64_t>(id_max, 40) : id_max;
        const auto id = static_cast<InternId>(1 + rng() % id_range);
        const auto group = static_cast<uint32_t>(rng() % (group_max + 1));
        const HangSums v{static_cast<int64_t>(rng() % 100'000), static_cast<int64_t>(rng() % 5)};
        sums.Add(group, id, v);
        model[{group, id}].Add(v);
      }
      ExpectEqualsModel(sums, model);
    }
  }
}

// Ids added in ascending order (HangRows' rows, in stack order) are sorted by group alone;
// an id below the one before it, or an Add after a Reduce, sorts by (group, id) again.
TEST(IdSums, IdsAddedInOrderAreSortedByGroupAloneAndOutOfOrderOnesFully) {
  std::mt19937_64 rng(23);
  for (int group_bits : {0, 1, 6, 13}) {
    for (const bool break_order : {false, true}) {
      SCOPED_TRACE(testing::Message() << group_bits << " group bits, order broken: " << break_order);
      IdSums sums;
      Model model;
      InternId id = 1;
      for (int i = 0; i < 20'000; ++i) {
        id += static_cast<InternId>(rng() % 3);  // repeats, then larger ids
        const auto group = static_cast<uint32_t>(rng() % ((uint64_t{1} << group_bits)));
        const HangSums v{static_cast<int64_t>(rng() % 100'000), static_cast<int64_t>(rng() % 5)};
        const InternId added = break_order && i == 15'000 ? 1 : id;
        sums.Add(group, added, v);
        model[{group, added}].Add(v);
      }
      ExpectEqualsModel(sums, model);
      // More after a Reduce: its entries are by (group, id), not by id, for several groups.
      for (InternId more : {InternId{5}, InternId{3}, id + 1}) {
        sums.Add(0, more, {1, 1});
        model[{0, more}].Add(HangSums{1, 1});
      }
      ExpectEqualsModel(sums, model);
    }
  }
}

// After a Reduce the entries are in (group, id) order, not in id order: an id added above the
// last entry's is still out of order for its group, and the next Reduce sorts fully. With one
// group they are in id order, and an id added above the last needs no sort.
TEST(IdSums, AfterAReduceOnlyOneGroupsEntriesCountAsInOrder) {
  IdSums sums;
  sums.Add(0, 1, {1, 1});
  sums.Add(1, 2, {1, 1});
  sums.Add(1, 3, {1, 1});
  sums.Add(0, 9, {1, 1});  // out of order: a full sort
  ASSERT_EQ(sums.Reduce().size(), 4u);
  sums.Add(0, 4, {2, 2});  // above the last entry's id (3), below group 0's 9
  ExpectEqualsModel(
      sums, {{{0, 1}, {1, 1}}, {{0, 4}, {2, 2}}, {{0, 9}, {1, 1}}, {{1, 2}, {1, 1}}, {{1, 3}, {1, 1}}});

  IdSums one;
  for (InternId id : {3, 1, 2}) one.Add(0, id, {1, 1});
  ASSERT_EQ(one.Reduce().size(), 3u);
  one.Add(0, 7, {1, 1});
  one.Add(0, 3, {5, 5});  // below 7: out of order again
  ExpectEqualsModel(one, {{{0, 1}, {1, 1}}, {{0, 2}, {1, 1}}, {{0, 3}, {6, 6}}, {{0, 7}, {1, 1}}});
}

}  // namespace
}  // namespace seismo
