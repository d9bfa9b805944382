// Delta: the unit of work a parse thread hands to a shard — "add these numbers
// to this series". A ParsedDocument becomes several deltas (usage, hangs,
// crash), each routed by the hash of its series key.
//
// Tables and the meaning of Delta::values per table:
//
//   table        key (fields joined by kKeySep)                          values
//   kUsage       source, channel, os, build_date                         [usage_ms, pings]
//   kBuildUsage  channel, product, version, build_id, os                 [usage_ms, pings, gpu, plugin, gmplugin]
//   kHangs       source, channel, os, build_date, process, thread,       [hang_us, hang_count]
//                signature, stack
//   kCrashes     channel, product, version, build_id, os, process,       [count, startup_count]
//                class, signature
//
// A stack is its frames joined by kStackSep, except the stack of one empty frame
// [""], which is kOneEmptyFrame (joined, it would read as the empty stack []). Keys
// compare like tuples because the separators sort below every printable character.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/core/time.h"
#include "seismo/parse/document.h"

namespace seismo {

enum class Table : uint8_t { kUsage, kBuildUsage, kHangs, kCrashes };
inline constexpr size_t kTableCount = 4;
inline constexpr size_t kMaxValues = 5;

// Per-table event times, all "none yet".
inline std::array<int64_t, kTableCount> MakeTableTimes() {
  std::array<int64_t, kTableCount> t;
  t.fill(INT64_MIN);
  return t;
}

inline constexpr char kKeySep = '\x1f';
inline constexpr char kStackSep = '\x1e';
inline constexpr std::string_view kOneEmptyFrame = "\x1d";

struct Delta {
  Table table = Table::kUsage;
  std::string key;
  EventTime time;
  std::array<int64_t, kMaxValues> values{};
  // InstallHash of the install behind the delta, 0 = unknown: kCrashes the crash's install,
  // kHangs the ping's clientId, kBuildUsage the clientId of a main ping that reported
  // sub-process crashes (other usage deltas: 0).
  uint64_t install_hash = 0;
  uint64_t doc_hash = 0;      // kCrashes: hash of the document id for de-duplication, 0 = none
  uint64_t route_hash = 0;    // which shard applies it: Hash64(key), or doc_hash for crashes with an id
};

// Number of meaningful values in a table's rows.
size_t ValueCount(Table t);

// The distinct-installs sketch hash of an install id (clientId, install_time); 0 for "".
// One salt for every document kind, so a crash ping and a main ping of one install agree.
uint64_t InstallHash(std::string_view install_id);

// Turns a parsed document into deltas at event time `t`; calls `emit` for each.
void DocumentToDeltas(const ParsedDocument& doc, EventTime t,
                      const std::function<void(Delta&&)>& emit);

// Key encoding helpers.
std::string JoinKey(std::initializer_list<std::string_view> fields);
std::vector<std::string_view> SplitKey(std::string_view key);  // views into `key`
std::string JoinStack(const std::vector<std::string>& frames);
std::vector<std::string_view> SplitStack(std::string_view stack);

}  // namespace seismo
