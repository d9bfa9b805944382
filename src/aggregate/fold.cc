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

size_t FieldCount(Table table) {
  switch (table) {
    case Table::kHangs:
      return 8;
    case Table::kCrashes:
      return 8;
    case Table::kUsage:
      return 4;
    case Table::kBuildUsage:
      return 5;
  }
  return 0;
}

}  // namespace

int FoldLevels(Table table) { return static_cast<int>(Keeps(table).size()); }

std::string FoldKey(Table table, std::string_view key, int level) {
  const size_t fields = FieldCount(table);
  const size_t keep = Keeps(table)[static_cast<size_t>(level) - 1];
  std::string out;
  out.reserve(key.size());
  size_t start = 0;
  for (size_t i = 0; i < fields; ++i) {
    if (i > 0) out += kKeySep;
    if (i < keep) {
      size_t end = key.find(kKeySep, start);
      if (end == std::string_view::npos) end = key.size();
      out.append(key.substr(start, end - start));
      start = end + 1;
    } else {
      out.append(kOtherSeries);
    }
  }
  return out;
}

int FoldLevel(Table table, std::string_view key) {
  if (key.find(kOtherSeries) == std::string_view::npos) return 0;  // the common case
  for (int level = FoldLevels(table); level > 0; --level) {
    if (FoldKey(table, key, level) == key) return level;
  }
  return 0;
}

std::string OtherKey(Table table, std::string_view key) {
  if (SplitKey(key).size() != FieldCount(table)) return "";
  return FoldKey(table, key, 1);
}

}  // namespace seismo
