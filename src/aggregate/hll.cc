#include "seismo/aggregate/hll.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace seismo {
namespace {

// Sparse entries cost 4 bytes each; dense costs kRegisters bytes.
constexpr size_t kSparseLimit = HyperLogLog::kRegisters / 4;

}  // namespace

void HyperLogLog::Add(uint64_t hash) {
  auto index = static_cast<uint32_t>(hash >> (64 - kPrecision));
  uint64_t rest = hash << kPrecision;
  auto rank = static_cast<uint8_t>(rest == 0 ? 64 - kPrecision + 1 : std::countl_zero(rest) + 1);
  Set(index, rank);
}

void HyperLogLog::Set(uint32_t index, uint8_t rank) {
  if (!dense_.empty()) {
    dense_[index] = std::max(dense_[index], rank);
    return;
  }
  auto it = std::lower_bound(sparse_.begin(), sparse_.end(), index << 8,
                             [](uint32_t a, uint32_t b) { return (a >> 8) < (b >> 8); });
  if (it != sparse_.end() && (*it >> 8) == index) {
    if ((*it & 0xff) < rank) *it = index << 8 | rank;
    return;
  }
  sparse_.insert(it, index << 8 | rank);
  if (sparse_.size() > kSparseLimit) Densify();
}

void HyperLogLog::Densify() {
  dense_.assign(kRegisters, 0);
  for (uint32_t e : sparse_) dense_[e >> 8] = static_cast<uint8_t>(e & 0xff);
  sparse_.clear();
  sparse_.shrink_to_fit();
}

void HyperLogLog::Merge(const HyperLogLog& other) {
  if (!other.dense_.empty()) {
    if (dense_.empty()) Densify();
    for (uint32_t i = 0; i < kRegisters; ++i) dense_[i] = std::max(dense_[i], other.dense_[i]);
    return;
  }
  for (uint32_t e : other.sparse_) Set(e >> 8, static_cast<uint8_t>(e & 0xff));
}

double HyperLogLog::Estimate() const {
  constexpr double m = kRegisters;
  double sum = 0;
  uint32_t zeros = 0;
  auto reg = [&](uint32_t i) -> uint8_t {
    if (!dense_.empty()) return dense_[i];
    return 0;
  };
  if (dense_.empty()) {
    // Sparse: registers not listed are zero.
    zeros = kRegisters - static_cast<uint32_t>(sparse_.size());
    sum = zeros;
    for (uint32_t e : sparse_) sum += std::ldexp(1.0, -static_cast<int>(e & 0xff));
  } else {
    for (uint32_t i = 0; i < kRegisters; ++i) {
      uint8_t r = reg(i);
      if (r == 0) ++zeros;
      sum += std::ldexp(1.0, -static_cast<int>(r));
    }
  }
  const double alpha = 0.7213 / (1.0 + 1.079 / m);
  double estimate = alpha * m * m / sum;
  if (estimate <= 2.5 * m && zeros > 0) {
    estimate = m * std::log(m / zeros);  // linear counting for small cardinalities
  }
  return estimate;
}

HyperLogLog HyperLogLog::FromParts(std::vector<uint32_t> sparse, std::vector<uint8_t> dense) {
  HyperLogLog h;
  h.sparse_ = std::move(sparse);
  h.dense_ = std::move(dense);
  return h;
}

}  // namespace seismo
