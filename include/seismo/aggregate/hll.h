// HyperLogLog distinct-count sketch (precision 12: 4096 registers, standard
// error 1.04/sqrt(4096) ~ 1.6 %). Small sets are kept sparse (a sorted list of
// register updates) and converted to dense registers when that would be larger,
// so a series with a handful of installs costs a few bytes, not 4 KiB.
// Mergeable: Merge() is commutative and associative, so per-shard, per-bucket
// sketches combine in any order to the same result.
//
// Threading: not thread-safe; owned by one shard (or by a merged snapshot).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace seismo {

// 16 bytes in its owner (every series and every hour holds one, most of them empty): one
// owned block, sparse entries or the dense registers, with its size and capacity beside it.
class HyperLogLog {
 public:
  static constexpr int kPrecision = 12;
  static constexpr uint32_t kRegisters = 1u << kPrecision;

  HyperLogLog() = default;
  HyperLogLog(const HyperLogLog& o);
  HyperLogLog& operator=(const HyperLogLog& o);
  HyperLogLog(HyperLogLog&& o) noexcept;
  HyperLogLog& operator=(HyperLogLog&& o) noexcept;
  ~HyperLogLog() = default;

  // `hash` is a well-mixed 64-bit hash of the item (e.g. Hash64 of the install id).
  void Add(uint64_t hash);
  void Merge(const HyperLogLog& other);
  double Estimate() const;
  bool empty() const { return size_ == 0; }
  size_t MemoryBytes() const { return size_t{capacity_} * sizeof(uint32_t); }

  // Serialisation for checkpoints: registers as (index, rank) pairs or dense bytes; each is
  // empty unless the sketch has that form.
  std::span<const uint8_t> dense() const;
  std::span<const uint32_t> sparse() const;
  // `sparse` sorted by index with distinct indices (entry = index << 8 | rank), or `dense`
  // of kRegisters ranks; at most one of them non-empty.
  static HyperLogLog FromParts(std::span<const uint32_t> sparse, std::span<const uint8_t> dense);

 private:
  static constexpr uint32_t kDense = UINT32_MAX;  // size_ of a dense sketch
  static constexpr uint32_t kDenseWords = kRegisters / sizeof(uint32_t);

  bool is_dense() const { return size_ == kDense; }
  uint8_t* registers() { return reinterpret_cast<uint8_t*>(words_.get()); }
  const uint8_t* registers() const { return reinterpret_cast<const uint8_t*>(words_.get()); }
  void Set(uint32_t index, uint8_t rank);
  void Densify();
  void Reserve(uint32_t words);  // capacity_ >= words, entries kept

  std::unique_ptr<uint32_t[]> words_;  // sparse: entries sorted by index; dense: the registers' bytes
  uint32_t size_ = 0;                  // sparse entries, or kDense
  uint32_t capacity_ = 0;              // words allocated
};
static_assert(sizeof(HyperLogLog) == 16);

}  // namespace seismo
