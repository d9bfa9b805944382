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

// Number of fields of a table's keys.
size_t FieldCount(Table t);
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

}  // namespace seismo
