// Typed keys: their order is the order of their texts, field by field (the order of
// every output), and their content hash depends on the texts only.
#include "seismo/aggregate/series_key.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "seismo/sim/synth.h"
#include "support/keys.h"

namespace seismo {
namespace {

// The order rows had when keys were strings joined by \x1f (stacks by \x1e): for texts
// of printable characters it is the order of the tuples.
bool JoinedLess(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto join = [](const std::vector<std::string>& f) {
    std::string s;
    for (size_t i = 0; i < f.size(); ++i) s += (i ? "\x1f" : "") + f[i];
    return s;
  };
  return join(a) < join(b);
}

TEST(SeriesKey, OrderIsTheOrderOfTheTextsLikeAModel) {
  Symbols sym;
  Rng r(3);
  auto text = [&] {
    static const char* words[] = {"", "a", "ab", "abc", "b", "Gecko", "Gecko_Child", "z", "(other)"};
    return std::string(words[r.Below(9)]);
  };
  struct Row {
    std::vector<std::string> fields;
    SeriesKey key;
  };
  std::vector<Row> rows;
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::string> f = {"bhr", text(), text(), text(), text(), text(), text()};
    std::string stack;
    for (uint64_t k = r.Below(4); k > 0; --k) stack += (stack.empty() ? "" : "\x1e") + text() + "f";
    f.push_back(stack);
    rows.push_back({f, test::Key(sym, Table::kHangs, {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]})});
  }
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    const Row& a = rows[i];
    const Row& b = rows[i + 1];
    EXPECT_EQ(KeyLess(a.key, b.key, sym), JoinedLess(a.fields, b.fields)) << i;
    EXPECT_EQ(a.key == b.key, a.fields == b.fields);
  }
}

// SortByKey (ranks of the texts) gives the order std::sort with KeyLess gives, on keys of
// every table mixed, with texts interned in an order unrelated to theirs.
TEST(SeriesKey, SortByKeyOrdersAsKeyLessDoes) {
  Symbols sym;
  Rng r(11);
  auto text = [&] {
    static const char* words[] = {"",      "a",           "ab", "abc",     "b",
                                  "Gecko", "Gecko_Child", "z",  "(other)", "\xc3\xa9"};
    return std::string(words[r.Below(10)]) + std::string(r.Below(3), 'q');
  };
  std::vector<SeriesKey> keys;
  for (int i = 0; i < 3000; ++i) {
    const auto table = static_cast<Table>(r.Below(kTableCount));
    std::vector<std::string> f;
    for (size_t k = 0; k < FieldCount(table); ++k) f.push_back(text());
    if (table == Table::kHangs) {
      f.back().clear();
      for (uint64_t k = r.Below(4); k > 0; --k) f.back() += (f.back().empty() ? "" : "\x1e") + text() + "f";
    }
    keys.push_back(test::Key(sym, table, f));
  }
  std::vector<const SeriesKey*> by_ranks, by_texts;
  for (const SeriesKey& k : keys) by_ranks.push_back(&k);
  by_texts = by_ranks;
  SortByKey(
      by_ranks, [](const SeriesKey* k) -> const SeriesKey& { return *k; }, sym);
  std::stable_sort(by_texts.begin(), by_texts.end(),
                   [&](const SeriesKey* a, const SeriesKey* b) { return KeyLess(*a, *b, sym); });
  ASSERT_EQ(by_ranks.size(), by_texts.size());
  for (size_t i = 0; i < by_ranks.size(); ++i) EXPECT_EQ(*by_ranks[i], *by_texts[i]) << i;
}

TEST(SeriesKey, ContentHashDependsOnTheTextsNotOnTheIds) {
  Symbols one, two;
  two.Intern("padding so that ids differ");
  const SeriesKey a = test::Key(one, Table::kCrashes, {"beta", "Firefox", "1", "2026", "Linux", "gpu", "gpu", "s"});
  const SeriesKey b = test::Key(two, Table::kCrashes, {"beta", "Firefox", "1", "2026", "Linux", "gpu", "gpu", "s"});
  EXPECT_NE(a, b);
  EXPECT_EQ(KeyContentHash(a, one), KeyContentHash(b, two));
  const SeriesKey c = test::Key(one, Table::kCrashes, {"beta", "Firefox", "1", "2026", "Linux", "gpu", "s", "gpu"});
  EXPECT_NE(KeyContentHash(a, one), KeyContentHash(c, one));
}

}  // namespace
}  // namespace seismo
