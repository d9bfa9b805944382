#include "seismo/aggregate/fold.h"

#include <array>
#include <span>

namespace seismo {
namespace {

std::span<const size_t> Keeps(Table table) {
  static constexpr std::array<size_t, 3> kHangs = {6, 4, 1};
  static constexpr std::array<size_t, 3> kCrashes = {7, 5, 0};
  static constexpr std::array<size_t, 1> kUsage = {1};
  static constexpr std::array<size_t, 1> kBuildUsage = {0};
  switch (table) {
    case Table::kHangs:
      return kHangs;
    case Table::kCrashes:
      return kCrashes;
    case Table::kUsage:
      return kUsage;
    case Table::kBuildUsage:
      return kBuildUsage;
  }
  return {};
}

uint32_t OtherField(const SeriesKey& key, size_t i, const Symbols& symbols) {
  return IsStackField(key.table, i) ? symbols.other_stack() : symbols.other();
}

}  // namespace

int FoldLevels(Table table) { return static_cast<int>(Keeps(table).size()); }

SeriesKey FoldKey(const SeriesKey& key, int level, const Symbols& symbols) {
  const size_t keep = Keeps(key.table)[static_cast<size_t>(level) - 1];
  SeriesKey out = key;
  for (size_t i = keep; i < FieldCount(key.table); ++i) out.f[i] = OtherField(key, i, symbols);
  return out;
}

int FoldLevel(const SeriesKey& key, const Symbols& symbols) {
  const size_t n = FieldCount(key.table);
  if (key.f[n - 1] != OtherField(key, n - 1, symbols)) return 0;  // the common case
  for (int level = FoldLevels(key.table); level > 0; --level) {
    if (FoldKey(key, level, symbols) == key) return level;
  }
  return 0;
}

}  // namespace seismo
