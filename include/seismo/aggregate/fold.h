// Folding keys: where a series goes when a shard is over its budget.
//
// Every table has a chain of fold levels; level L keeps the first keep[L] fields
// of a key and replaces the others by "(other)" (a hang's stack by the stack
// ["(other)"]). Level 0 is the key itself; the last level is terminal (at most one
// series per source, or one in all):
//
//   table        fields (SPEC §6.4 order)                  keep[] for levels 1, 2, 3
//   kHangs       source channel os build_date process       6 (signature and stack)
//                thread signature stack                      4 (and process, thread)
//                                                            1 (everything but source)
//   kCrashes     channel product version build_id os         7 (signature)
//                process class signature                     5 (and process, class)
//                                                            0 (everything)
//   kUsage       source channel os build_date                1 (everything but source)
//   kBuildUsage  channel product version build_id os         0 (everything)
//
// A folded series adds its values to its fold key, so every total stays exact
// whatever the input's cardinality (ADR 0010). Pure functions, any thread.
#pragma once

#include <string_view>

#include "seismo/aggregate/series_key.h"

namespace seismo {

inline constexpr std::string_view kOtherSeries = "(other)";

// Number of fold levels above 0 (the terminal level).
int FoldLevels(Table table);

// `key` at fold level `level` (0 < level <= FoldLevels): the kept fields, then
// "(other)" for each field beyond them.
SeriesKey FoldKey(const SeriesKey& key, int level, const Symbols& symbols);

// The highest level whose fold key is `key` itself (0 for an ordinary key).
int FoldLevel(const SeriesKey& key, const Symbols& symbols);

// Level-1 fold key (the "(other)" series of a key's parent group).
inline SeriesKey OtherKey(const SeriesKey& key, const Symbols& symbols) { return FoldKey(key, 1, symbols); }

}  // namespace seismo
