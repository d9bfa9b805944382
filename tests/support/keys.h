// Test support: series keys and deltas from text, and a state's totals by text, so
// tests can speak in dimension values and frames while the state holds interned ids.
#pragma once

#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/series_data.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"

namespace seismo::test {

// A key of `table` from its fields' texts, in table order; a hang's stack field is its
// frames joined by '\x1e' ("" = the empty stack).
SeriesKey Key(Symbols& symbols, Table table, std::initializer_list<std::string_view> fields);
SeriesKey Key(Symbols& symbols, Table table, std::span<const std::string_view> fields);
SeriesKey Key(Symbols& symbols, Table table, const std::vector<std::string>& fields);

// A delta of `key` at `t_ms` with `values` (its content hash and route set).
Delta MakeDelta(Symbols& symbols, Table table, std::initializer_list<std::string_view> fields,
                int64_t t_ms = 0, Values values = {});

// A key's text: its fields joined by '\x1f' (a stack's frames by '\x1e').
std::string KeyText(const SeriesKey& key, const Symbols& symbols);

struct TextTotal {
  Values total{};
  HyperLogLog installs;
  int64_t first_ms = INT64_MAX;
};
// Every series of table `t`, by KeyText (series of one key summed).
std::map<std::string, TextTotal> Totals(const ShardState& state, Table t, const Symbols& symbols);
std::map<std::string, TextTotal> Totals(const Snapshot& snapshot, Table t);

}  // namespace seismo::test

namespace seismo::test {

// One snapshot holding the series of several others (each may name its texts through
// its own Symbols: two daemons in one test), re-interned into a Symbols it owns;
// series of one key are summed. Counters are summed; stream time is the latest.
std::shared_ptr<const Snapshot> Combine(const std::vector<std::shared_ptr<const Snapshot>>& parts,
                                        const AggregateOptions& options);

}  // namespace seismo::test
