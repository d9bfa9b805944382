// InternTable: byte strings interned to dense 32-bit ids, shared by every thread.
// The symbol table (dimension values, frames, signatures) and the stack table (a
// stack is the bytes of its frames' ids) are both InternTables (ADR 0021).
//
//   id ─> pages_[id >> 16][id & 0xffff] ─> Entry { hash, size, bytes }   immutable while live
//   (hash, bytes) ─> stripes_[hash % kStripes] { mutex, hash set of ids (hashed and compared by their
//   entries) }
//
// Interning a string that is already in the caller's InternCache takes no lock: the
// cache maps the string's hash to an id and the entry's bytes are compared. A miss
// takes one stripe's mutex. Two strings with equal bytes always get the same id, so
// ids compare like the strings' identities; the 64-bit Hash() of an id is the
// content hash of its bytes (Hash64), the same in every run, so routing by it is
// deterministic whatever order ids were given out in.
//
// Reclamation (mark and sweep): at a quiescent point, when no Intern is in flight and
// every InternCache is about to be revalidated, the owner marks the ids still in use
// and calls Sweep(). Unmarked ids leave the lookup maps at once; their entries stay
// readable, and their ids are not given out again, until every Pin taken before the
// sweep has been released. A published snapshot holds a Pin, so it can keep reading
// the ids it holds for as long as it lives. Permanent ids are never swept.
//
// Threading: Intern, Find, Text, Hash, Pin and the counters from any thread; Sweep
// from one thread at a quiescent point (see above). An InternCache belongs to one thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/core/mutex.h"

namespace seismo {

using InternId = uint32_t;
inline constexpr InternId kNoId = 0;  // never given out

class InternPin;

class InternTable {
 public:
  InternTable();
  ~InternTable();
  InternTable(const InternTable&) = delete;
  InternTable& operator=(const InternTable&) = delete;

  // The id of `bytes`, interning it when new. `hash` must be Hash64(bytes).
  InternId Intern(std::string_view bytes, uint64_t hash);
  InternId Intern(std::string_view bytes);
  // As Intern, and the id is never swept (fixed vocabulary: "unknown", "(other)", ...).
  InternId InternPermanent(std::string_view bytes);
  InternId InternPermanent(std::string_view bytes, uint64_t hash);
  // The id of `bytes` if interned (no insertion).
  std::optional<InternId> Find(std::string_view bytes) const;

  // The bytes and content hash of a live id (or of one a held Pin protects).
  std::string_view Bytes(InternId id) const;
  uint64_t Hash(InternId id) const;
  // Bytes a live id costs the table (its entry and its share of the index), as
  // MemoryBytes() counts them; 0 for an id not live.
  size_t EntryBytes(InternId id) const;
  // True when `id`'s bytes equal `bytes` (a cache hit's check).
  bool Equals(InternId id, std::string_view bytes) const;
  // Asks memory ahead for what Bytes(id) will read, in two steps, the second once the
  // first is in: the id's page slot, then the entry that slot names. Reads nothing else
  // (a reader walking many ids in no order memory foresees: the replay output).
  void PrefetchSlot(InternId id) const {
    const std::atomic<Entry*>* page = pages_[id >> kPageBits].load(std::memory_order_acquire);
    if (page != nullptr) __builtin_prefetch(&page[id & (kPageSize - 1)]);
  }
  void PrefetchEntry(InternId id) const { __builtin_prefetch(EntryOf(id)); }

  // Room for about `ids` ids in all, so that interning that many grows no index. Each
  // growth rehashes every id of a stripe, reading its entry (a cache miss each): a caller
  // that knows roughly how many strings are coming (a replay, by its input's size) saves it.
  // The room is in no MemoryBytes() (which counts the ids themselves).
  void Reserve(size_t ids);

  // Readers: entries swept after this call stay readable while the pin lives.
  std::shared_ptr<const InternPin> Pin();

  // One past the largest id ever given out (size of a mark bitmap).
  InternId IdBound() const { return next_id_.load(std::memory_order_acquire); }
  // Live ids and the bytes their entries hold.
  size_t size() const { return live_.load(std::memory_order_relaxed); }
  size_t MemoryBytes() const { return bytes_.load(std::memory_order_relaxed); }
  // Changes at every sweep: caches clear themselves when it moved.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Quiescent point only: drops every non-permanent id whose bit is clear in `live`
  // (bit i of word i / 64; ids beyond the bitmap count as unmarked). Returns the
  // number of ids dropped.
  size_t Sweep(const std::vector<uint64_t>& live);

 private:
  friend class InternPin;
  struct Entry;
  struct IdHash;
  struct IdEq;
  struct Stripe;
  static constexpr size_t kPageBits = 16;
  static constexpr size_t kPageSize = size_t{1} << kPageBits;
  static constexpr size_t kMaxPages = size_t{1} << (32 - kPageBits);
  static constexpr size_t kStripes = 64;

  friend class InternCache;
  Entry* EntryOf(InternId id) const {
    // acquire: pairs with the release stores of the page pointer and of the slot.
    std::atomic<Entry*>* page = pages_[id >> kPageBits].load(std::memory_order_acquire);
    return page == nullptr ? nullptr : page[id & (kPageSize - 1)].load(std::memory_order_acquire);
  }
  // The id of `bytes` and its entry, inserted when new.
  std::pair<InternId, const Entry*> Insert(std::string_view bytes, uint64_t hash, bool permanent);
  static bool EntryEquals(const Entry* e, std::string_view bytes);
  InternId AllocateId();
  void ReleasePin(uint64_t epoch);
  void ReclaimLocked() REQUIRES(pin_mutex_);

  // Pages are created once and never moved or freed before the table (release on
  // publish, acquire in EntryOf).
  std::atomic<std::atomic<Entry*>*> pages_[kMaxPages] = {};
  Mutex page_mutex_;  // serialises creating pages
  std::unique_ptr<Stripe[]> stripes_;
  std::atomic<InternId> next_id_{1};
  Mutex free_mutex_;
  std::vector<InternId> free_ids_ GUARDED_BY(free_mutex_);
  std::atomic<size_t> free_count_{0};  // free_ids_.size(): no lock taken while it is 0
  std::atomic<size_t> live_{0};
  std::atomic<size_t> bytes_{0};
  std::atomic<uint64_t> generation_{0};

  // Pins and entries waiting for them (ADR 0021, "Reclamation").
  struct Retired {
    uint64_t epoch;
    std::vector<std::pair<InternId, Entry*>> entries;
  };
  Mutex pin_mutex_;
  uint64_t epoch_ GUARDED_BY(pin_mutex_) = 0;
  std::vector<std::pair<uint64_t, size_t>> pins_ GUARDED_BY(pin_mutex_);  // (epoch, live pins)
  std::vector<Retired> retired_ GUARDED_BY(pin_mutex_);
};

// Keeps entries swept after its creation readable (see InternTable::Pin).
class InternPin {
 public:
  InternPin(InternTable* table, uint64_t epoch) : table_(table), epoch_(epoch) {}
  ~InternPin();
  InternPin(const InternPin&) = delete;
  InternPin& operator=(const InternPin&) = delete;

 private:
  InternTable* table_;
  uint64_t epoch_;
};

// A thread's lock-free front of an InternTable: a direct-mapped array of
// (hash, id). Ownership: one thread. Call Revalidate() before each batch of work
// (it clears the cache when the table was swept since).
class InternCache {
 public:
  explicit InternCache(InternTable* table, size_t slots = size_t{1} << 14);

  // Clears the cache when the table was swept since; true then.
  bool Revalidate();
  InternId Intern(std::string_view bytes, uint64_t hash);
  InternId Intern(std::string_view bytes);
  // A batch of Interns (a stack's frames) asks memory ahead for what each will read, in
  // two steps: the slot of `hash` (the cache is larger than a core's own), then, once
  // that is in, the entry the slot names (whose bytes a hit compares). Reads nothing else.
  void PrefetchSlot(uint64_t hash) const { __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]); }
  void PrefetchEntry(uint64_t hash) const {
    const Slot& slot = slots_[hash & (slots_.size() - 1)];
    if (slot.hash == hash) __builtin_prefetch(slot.entry);
  }
  InternTable& table() const { return *table_; }

 private:
  // The entry is kept beside its id: a hit compares its bytes without finding it again
  // (an entry lives as long as its id: a sweep, which may retire it, clears the cache).
  struct Slot {
    uint64_t hash = 0;
    InternId id = kNoId;
    const InternTable::Entry* entry = nullptr;
  };
  InternTable* table_;
  std::vector<Slot> slots_;
  uint64_t generation_;
};

}  // namespace seismo
