#include "seismo/aggregate/stack_memo.h"

#include <algorithm>
#include <cstring>

namespace seismo {

namespace {

// Bytes the texts of `frames` take in the ring: each a 4-byte length, then its bytes.
size_t TextBytes(std::span<const std::string_view> frames) {
  size_t n = 0;
  for (std::string_view f : frames) n += sizeof(uint32_t) + f.size();
  return n;
}

}  // namespace

StackId StackMemo::Find(uint64_t hash, std::span<const std::string_view> frames) const {
  const Slot& s = SlotOf(hash);
  if (s.id == kNoId || s.hash != hash || !Intact(s) || TextBytes(frames) != s.bytes) return kNoId;
  // As many bytes as kept: each frame's length and text lie inside them.
  const char* at = ring_.get() + s.start % kRingBytes;
  for (std::string_view f : frames) {
    uint32_t n = 0;
    std::memcpy(&n, at, sizeof n);
    at += sizeof n;
    if (n != f.size() || std::string_view(at, n) != f) return kNoId;  // an empty frame may have no data()
    at += n;
  }
  return s.id;
}

void StackMemo::Offer(uint64_t hash, std::span<const std::string_view> frames, StackId id) {
  Slot& s = SlotOf(hash);
  if (s.seen != hash) {
    s.seen = hash;
    return;
  }
  const size_t bytes = TextBytes(frames);
  if (bytes > kMaxStackBytes) return;
  if (!ring_) ring_ = std::make_unique_for_overwrite<char[]>(kRingBytes);
  // A stack's texts in one piece: past the ring's end, they start again at its beginning.
  if (written_ % kRingBytes + bytes > kRingBytes) written_ += kRingBytes - written_ % kRingBytes;
  char* at = ring_.get() + written_ % kRingBytes;
  for (std::string_view f : frames) {
    const auto n = static_cast<uint32_t>(f.size());
    std::memcpy(at, &n, sizeof n);
    at += sizeof n;
    if (n > 0) std::memcpy(at, f.data(), n);  // an empty frame may have no data()
    at += n;
  }
  s = Slot{hash, 0, written_, static_cast<uint32_t>(bytes), id};
  written_ += bytes;
}

void StackMemo::Clear() { std::fill(slots_.begin(), slots_.end(), Slot{}); }

}  // namespace seismo
