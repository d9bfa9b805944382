// Delta: the unit of work a parse thread hands to a shard — "add these numbers
// to this series". A ParsedDocument becomes several deltas (usage, hangs, crash),
// each routed by its key's content hash (a crash with a document id by the id's
// hash, so every copy of it meets the same shard's memory of ids).
//
// A Delta is a plain value of fixed size (~120 bytes): its key is a SeriesKey of
// interned ids (series_key.h) and its hash is computed once, in the parse worker.
//
// Meaning of Delta::values per table:
//
//   kUsage       [usage_ms, pings]
//   kBuildUsage  [usage_ms, pings, gpu, plugin, gmplugin]
//   kHangs       [hang_us, hang_count]
//   kCrashes     [count, startup_count]
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seismo/aggregate/series_key.h"
#include "seismo/aggregate/stack_memo.h"
#include "seismo/core/time.h"
#include "seismo/parse/document.h"

namespace seismo {

inline constexpr size_t kMaxValues = 5;
using Values = std::array<int64_t, kMaxValues>;

// Element-wise sums of two series' values.
inline void AddValues(Values& to, const Values& from) {
  for (size_t i = 0; i < kMaxValues; ++i) to[i] += from[i];
}
inline void SubtractValues(Values& to, const Values& from) {
  for (size_t i = 0; i < kMaxValues; ++i) to[i] -= from[i];
}

// Per-table event times, all "none yet".
inline std::array<int64_t, kTableCount> MakeTableTimes() {
  std::array<int64_t, kTableCount> t;
  t.fill(INT64_MIN);
  return t;
}

struct Delta {
  SeriesKey key;
  // The partition slot of the document's source (a partition-scoped pipeline keeps one state
  // per slot: ADR 0024); 0 otherwise. In the key's padding: the delta keeps its size.
  uint16_t slot = 0;
  uint64_t hash = 0;  // KeyContentHash(key)
  EventTime time;
  Values values{};
  // InstallHash of the install behind the delta, 0 = unknown: kCrashes the crash's install,
  // kHangs the ping's clientId, kBuildUsage the main ping's clientId (kUsage deltas: 0).
  uint64_t install_hash = 0;
  uint64_t doc_hash = 0;    // kCrashes: hash of the document id for de-duplication, 0 = none
  uint64_t route_hash = 0;  // which shard applies it: `hash`, or doc_hash for crashes with an id

  Table table() const { return key.table; }
};
static_assert(sizeof(Delta) == 120);

// Number of meaningful values in a table's rows.
size_t ValueCount(Table t);

// The distinct-installs sketch hash of an install id (clientId, install_time); 0 for "".
// One salt for every document kind, so a crash ping and a main ping of one install agree.
uint64_t InstallHash(std::string_view install_id);

// Turns parsed documents into deltas, interning every key field through its own
// caches. Ownership: one per parse thread; borrows `symbols`. Call Revalidate()
// before each chunk (the tables may have been swept since the last one).
class DeltaEncoder {
 public:
  explicit DeltaEncoder(Symbols* symbols);

  void Revalidate();
  // Appends the document's deltas at event time `t` to `out`.
  void Encode(const ParsedDocument& doc, EventTime t, std::vector<Delta>& out);

  // A Sym and its content hash, through the text cache.
  struct Field {
    Sym id;
    uint64_t hash;
  };
  Field Text(std::string_view text);
  // A stack's id and content hash: from the memo when it keeps the stack (stack_memo.h),
  // else each frame through the text cache, then the stack through the stack cache.
  Field Stack(std::span<const std::string_view> frames);
  Symbols& symbols() const { return *symbols_; }

 private:
  Symbols* symbols_;
  InternCache text_;
  InternCache stacks_;
  StackMemo memo_;                     // stacks met again, by their frames' texts
  std::vector<Sym> frame_ids_;         // scratch
  std::vector<uint64_t> frame_hashes_;  // scratch
};

}  // namespace seismo
