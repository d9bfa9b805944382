// SeriesKey: a series' identity as a fixed-size record of interned ids, one codec
// for every table (ADR 0021). Fields, in the order rows are sorted and printed
// (SPEC §6.4), and how each is held:
//
//   table        fields                                                   f[]
//   kUsage       source channel os build_date                             4 Syms
//   kBuildUsage  channel product version build_id os                      5 Syms
//   kHangs       source channel os build_date process thread signature    7 Syms
//                stack                                                    + 1 StackId
//   kCrashes     channel product version build_id os process class        8 Syms
//                signature
//
//   ┌───────┬─────┬──────┬──────┬──────┬─────┬──────┬──────┬──────┬──────┐
//   │ table │ pad │ f[0] │ f[1] │ f[2] │ ... │ f[7] │   36 bytes, unused fields 0
//   └───────┴─────┴──────┴──────┴──────┴─────┴──────┴──────┴──────┴──────┘
//
// Equal keys have equal bytes (interning), so a key is hashed and compared as
// bytes. Its *content hash* (KeyHasher) is a function of the fields' texts only,
// the same in every run: routing and folding by it do not depend on the order ids
// were given out in. Order (KeyLess) is by the fields' texts, field by field, a
// stack frame by frame: the order of the rows in every output.
//
// Threading: plain values; the functions taking Symbols read it (any thread).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "seismo/core/symbols.h"

namespace seismo {

enum class Table : uint8_t { kUsage, kBuildUsage, kHangs, kCrashes };
inline constexpr size_t kTableCount = 4;
inline constexpr size_t kMaxKeyFields = 8;

// Field positions, per table.
namespace usage_field {
enum : uint8_t { kSource, kChannel, kOs, kBuildDate, kCount };
}
namespace build_field {
enum : uint8_t { kChannel, kProduct, kVersion, kBuildId, kOs, kCount };
}
namespace hang_field {
enum : uint8_t { kSource, kChannel, kOs, kBuildDate, kProcess, kThread, kSignature, kStack, kCount };
}
namespace crash_field {
enum : uint8_t { kChannel, kProduct, kVersion, kBuildId, kOs, kProcess, kClass, kSignature, kCount };
}

// Number of fields of a table's keys (at least 4 for every table).
constexpr size_t FieldCount(Table t) {
  constexpr std::array<uint8_t, kTableCount> kCounts = {usage_field::kCount, build_field::kCount,
                                                        hang_field::kCount, crash_field::kCount};
  return kCounts[static_cast<size_t>(t)];
}
// True for the one field that holds a StackId (kHangs' stack).
inline bool IsStackField(Table t, size_t i) { return t == Table::kHangs && i == hang_field::kStack; }

struct SeriesKey {
  Table table = Table::kUsage;
  uint8_t pad[3] = {0, 0, 0};
  std::array<uint32_t, kMaxKeyFields> f{};

  bool operator==(const SeriesKey& o) const = default;
  Sym operator[](size_t i) const { return f[i]; }

  // Abseil hashing of the key's bytes (absl::flat_hash_map<SeriesKey, V> works as is).
  // Where the content hash is at hand (a delta's), hash with that instead.
  template <typename H>
  friend H AbslHashValue(H h, const SeriesKey& k) {
    return H::combine_contiguous(std::move(h), reinterpret_cast<const unsigned char*>(&k), sizeof k);
  }
};
static_assert(sizeof(SeriesKey) == 36);
static_assert(std::has_unique_object_representations_v<SeriesKey>);

// Builds a key field by field while accumulating its content hash (the parse
// worker interns each field through its caches and knows each field's hash).
class KeyBuilder {
 public:
  explicit KeyBuilder(Table t) { key_.table = t; }
  KeyBuilder& Add(uint32_t id, uint64_t content_hash);
  const SeriesKey& key() const { return key_; }
  uint64_t hash() const { return hash_; }

 private:
  SeriesKey key_;
  size_t n_ = 0;
  uint64_t hash_ = 0x5e1e5;
};

// The content hash of a key, recomputed from the tables (what KeyBuilder gives).
uint64_t KeyContentHash(const SeriesKey& key, const Symbols& symbols);

// One field's text (a stack joined with `stack_sep`).
std::string FieldText(const SeriesKey& key, size_t i, const Symbols& symbols,
                      std::string_view stack_sep = "\x1e");

// Sets the bits of the key's ids in `text` and `stacks` (one bit per id, grown as
// needed): what a sweep of the intern tables must keep.
void MarkKeyIds(const SeriesKey& key, std::vector<uint64_t>& text, std::vector<uint64_t>& stacks);

// Total order of keys by their texts (see the header comment). Tables order first.
bool KeyLess(const SeriesKey& a, const SeriesKey& b, const Symbols& symbols);
int CompareFields(const SeriesKey& a, const SeriesKey& b, size_t i, const Symbols& symbols);
// Stacks by their frames' texts, frame by frame (a prefix first): -1, 0 or 1.
int CompareStacks(StackId a, StackId b, const Symbols& symbols);

// The texts of many keys' fields other than stacks, ranked in text order once, so that
// sorting the keys compares integers where KeyLess compares texts (SortByKey).
class FieldRanks {
 public:
  explicit FieldRanks(const Symbols& symbols) : symbols_(symbols) {}
  void Add(const SeriesKey& key);  // its texts (not its stack)
  void Rank();                     // after every Add
  uint32_t operator()(Sym id) const { return rank_.find(id)->second; }

 private:
  const Symbols& symbols_;
  std::vector<Sym> texts_;                   // distinct, as added
  absl::flat_hash_map<Sym, uint32_t> rank_;  // of the added ids only (ids go to millions)
};

// Sorts rows into KeyLess's order of their keys (`key_of(row)`): as std::sort with KeyLess,
// with one text comparison per distinct text instead of one per pair of rows, and the keys
// (their texts as ranks) sorted side by side in one array rather than where the rows are.
// Only keys equal up to their stack compare stacks' texts.
template <class Row, class KeyOf>
void SortByKey(std::vector<Row>& rows, KeyOf key_of, const Symbols& symbols) {
  FieldRanks ranks(symbols);
  for (const Row& r : rows) ranks.Add(key_of(r));
  ranks.Rank();
  struct Item {
    SeriesKey key;  // texts as their ranks; a stack as its id
    uint32_t row;
  };
  std::vector<Item> items;
  items.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    Item item{key_of(rows[i]), static_cast<uint32_t>(i)};
    for (size_t k = 0; k < FieldCount(item.key.table); ++k) {
      if (!IsStackField(item.key.table, k)) item.key.f[k] = ranks(item.key.f[k]);
    }
    items.push_back(item);
  }
  std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    if (a.key.table != b.key.table) return a.key.table < b.key.table;
    for (size_t k = 0; k < FieldCount(a.key.table); ++k) {
      if (a.key.f[k] == b.key.f[k]) continue;
      if (IsStackField(a.key.table, k)) return CompareStacks(a.key.f[k], b.key.f[k], symbols) < 0;
      return a.key.f[k] < b.key.f[k];
    }
    return false;
  });
  std::vector<Row> sorted;
  sorted.reserve(rows.size());
  for (const Item& item : items) sorted.push_back(std::move(rows[item.row]));
  rows = std::move(sorted);
}

}  // namespace seismo
