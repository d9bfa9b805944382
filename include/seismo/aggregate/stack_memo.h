// StackMemo: a parse thread's memory of the stacks it met more than once lately, by the texts
// of their frames, so that such a stack's id is found with one sequential compare instead of
// a lookup per frame (ADR 0046).
//
//   DeltaEncoder::Stack ── frames' hashes ── StackContentHash ──> Find ── kept, same texts ──> id
//                                                                  └──── else: intern each frame,
//                                                                        then the stack; Offer
//
// Interning a stack looks up each frame in the thread's intern cache: a slot and an entry far
// apart in memory, and a compare, per frame (a padded main ping's stacks have ~25 frames, and
// most stacks come again and again). The memo keeps, for stacks seen twice, the frames' texts
// one after another (each a 4-byte length, then its bytes) in a ring of bytes, and a slot per
// content hash naming the stack's id: a stack met again is recognised by comparing its texts
// with the kept ones, byte for byte. A hit is exact: the texts are compared, not the hash.
//
// Admission: a stack's first Offer in its slot only notes its hash; a second one, while the
// slot still notes it, keeps its texts (a hash of 0 counts as noted: kept at its first). A stack met once
// (most of a corpus of distinct stacks) costs no copy. Stacks over kMaxStackBytes of texts are not kept.
//
// Bounded: kSlots slots (32 B each) and kRingBytes of texts, 1 MiB in all (MemoryBytes), the
// ring taken at the first stack kept. Texts are written at the ring's head; a kept stack whose bytes the head
// has since come round to is forgotten (its slot no longer finds it), never read half-written.
//
// The ids are the stack table's: Clear() must be called whenever the symbol tables may have
// been swept (DeltaEncoder::Revalidate does when its intern caches were cleared), as a stale id
// would otherwise be given out for texts interned anew.
//
// Threading: one thread (the parse worker owning the DeltaEncoder).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "seismo/core/symbols.h"

namespace seismo {

class StackMemo {
 public:
  static constexpr size_t kSlots = 2048;
  // 1 MiB in all with the slots (FixedMemoryReserve counts it per parse thread).
  static constexpr size_t kRingBytes = (size_t{1} << 20) - kSlots * 4 * sizeof(uint64_t);
  static constexpr size_t kMaxStackBytes = 4096;  // of texts and their lengths

  StackMemo() : slots_(kSlots) {}

  // The id of the stack with content hash `hash` (StackContentHash) and these frames, when
  // kept; kNoId otherwise.
  StackId Find(uint64_t hash, std::span<const std::string_view> frames) const;
  // Tells the memo that the stack of `hash` and `frames` is `id` (just interned): noted the
  // first time, its texts kept the second (see above).
  void Offer(uint64_t hash, std::span<const std::string_view> frames, StackId id);
  // Forgets every stack (not the ring's memory).
  void Clear();

  // Bytes it may hold: the slots and the ring.
  static constexpr size_t MemoryBytes() { return kSlots * sizeof(Slot) + kRingBytes; }

 private:
  struct Slot {
    uint64_t hash = 0;   // of the stack kept (id != kNoId)
    uint64_t seen = 0;   // of the last stack offered here and not kept
    uint64_t start = 0;  // where its texts begin, counted in bytes ever written to the ring
    uint32_t bytes = 0;
    StackId id = kNoId;
  };
  static_assert(sizeof(Slot) == 4 * sizeof(uint64_t));

  Slot& SlotOf(uint64_t hash) { return slots_[hash & (kSlots - 1)]; }
  const Slot& SlotOf(uint64_t hash) const { return slots_[hash & (kSlots - 1)]; }
  // Whether a slot's texts are still in the ring as written.
  bool Intact(const Slot& s) const { return written_ <= s.start + kRingBytes; }

  std::vector<Slot> slots_;
  std::unique_ptr<char[]> ring_;
  uint64_t written_ = 0;  // bytes ever written, each stack's at one piece (none wraps)
};
static_assert(StackMemo::MemoryBytes() == size_t{1} << 20);

}  // namespace seismo
