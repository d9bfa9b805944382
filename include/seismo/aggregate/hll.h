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
#include <vector>

namespace seismo {

class HyperLogLog {
 public:
  static constexpr int kPrecision = 12;
  static constexpr uint32_t kRegisters = 1u << kPrecision;

  // `hash` is a well-mixed 64-bit hash of the item (e.g. Hash64 of the install id).
  void Add(uint64_t hash);
  void Merge(const HyperLogLog& other);
  double Estimate() const;
  bool empty() const { return sparse_.empty() && dense_.empty(); }
  size_t MemoryBytes() const { return sparse_.capacity() * 4 + dense_.capacity(); }

  // Serialisation for checkpoints: registers as (index, rank) pairs or dense bytes.
  const std::vector<uint8_t>& dense() const { return dense_; }
  const std::vector<uint32_t>& sparse() const { return sparse_; }
  static HyperLogLog FromParts(std::vector<uint32_t> sparse, std::vector<uint8_t> dense);

 private:
  void Set(uint32_t index, uint8_t rank);
  void Densify();

  std::vector<uint32_t> sparse_;  // sorted by index; entry = index << 8 | rank
  std::vector<uint8_t> dense_;    // kRegisters ranks once dense
};

}  // namespace seismo
