#include "seismo/aggregate/hll.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

namespace seismo {
namespace {

// Sparse entries cost 4 bytes each; dense costs kRegisters bytes.
constexpr size_t kSparseLimit = HyperLogLog::kRegisters / 4;

}  // namespace

HyperLogLog::HyperLogLog(const HyperLogLog& o)
    : size_(o.size_), capacity_(o.size_ == kDense ? kDenseWords : o.size_) {
  if (capacity_ == 0) return;
  words_ = std::make_unique_for_overwrite<uint32_t[]>(capacity_);
  std::copy_n(o.words_.get(), capacity_, words_.get());
}

HyperLogLog& HyperLogLog::operator=(const HyperLogLog& o) {
  if (this != &o) *this = HyperLogLog(o);
  return *this;
}

HyperLogLog::HyperLogLog(HyperLogLog&& o) noexcept
    : words_(std::move(o.words_)),
      size_(std::exchange(o.size_, 0)),
      capacity_(std::exchange(o.capacity_, 0)) {}

HyperLogLog& HyperLogLog::operator=(HyperLogLog&& o) noexcept {
  words_ = std::move(o.words_);
  size_ = std::exchange(o.size_, 0);
  capacity_ = std::exchange(o.capacity_, 0);
  return *this;
}

std::span<const uint8_t> HyperLogLog::dense() const {
  return is_dense() ? std::span<const uint8_t>(registers(), kRegisters) : std::span<const uint8_t>();
}

std::span<const uint32_t> HyperLogLog::sparse() const {
  return is_dense() ? std::span<const uint32_t>() : std::span<const uint32_t>(words_.get(), size_);
}

void HyperLogLog::Reserve(uint32_t words) {
  if (words <= capacity_) return;
  auto grown = std::make_unique_for_overwrite<uint32_t[]>(words);
  if (size_ != 0) std::copy_n(words_.get(), size_, grown.get());
  words_ = std::move(grown);
  capacity_ = words;
}

void HyperLogLog::Add(uint64_t hash) {
  auto index = static_cast<uint32_t>(hash >> (64 - kPrecision));
  uint64_t rest = hash << kPrecision;
  auto rank = static_cast<uint8_t>(rest == 0 ? 64 - kPrecision + 1 : std::countl_zero(rest) + 1);
  Set(index, rank);
}

void HyperLogLog::Set(uint32_t index, uint8_t rank) {
  if (is_dense()) {
    registers()[index] = std::max(registers()[index], rank);
    return;
  }
  uint32_t* begin = words_.get();
  uint32_t* end = begin + size_;
  uint32_t* it =
      std::lower_bound(begin, end, index << 8, [](uint32_t a, uint32_t b) { return (a >> 8) < (b >> 8); });
  if (it != end && (*it >> 8) == index) {
    if ((*it & 0xff) < rank) *it = index << 8 | rank;
    return;
  }
  if (size_ + 1 > kSparseLimit) {
    Densify();
    registers()[index] = std::max(registers()[index], rank);
    return;
  }
  const auto at = static_cast<size_t>(it - begin);
  if (size_ == capacity_) Reserve(capacity_ == 0 ? 1 : capacity_ * 2);
  begin = words_.get();
  std::copy_backward(begin + at, begin + size_, begin + size_ + 1);
  begin[at] = index << 8 | rank;
  ++size_;
}

void HyperLogLog::Densify() {
  auto registers = std::make_unique<uint32_t[]>(kDenseWords);  // zeroed
  auto* bytes = reinterpret_cast<uint8_t*>(registers.get());
  for (uint32_t i = 0; i < size_; ++i) bytes[words_[i] >> 8] = static_cast<uint8_t>(words_[i] & 0xff);
  words_ = std::move(registers);
  size_ = kDense;
  capacity_ = kDenseWords;
}

void HyperLogLog::Merge(const HyperLogLog& other) {
  if (other.is_dense()) {
    if (!is_dense()) Densify();
    const uint8_t* from = other.registers();
    uint8_t* to = registers();
    for (uint32_t i = 0; i < kRegisters; ++i) to[i] = std::max(to[i], from[i]);
    return;
  }
  for (uint32_t e : other.sparse()) Set(e >> 8, static_cast<uint8_t>(e & 0xff));
}

double HyperLogLog::Estimate() const {
  constexpr double m = kRegisters;
  double sum = 0;
  uint32_t zeros = 0;
  if (!is_dense()) {
    // Sparse: registers not listed are zero.
    zeros = kRegisters - size_;
    sum = zeros;
    for (uint32_t e : sparse()) sum += std::ldexp(1.0, -static_cast<int>(e & 0xff));
  } else {
    for (uint8_t r : dense()) {
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

HyperLogLog HyperLogLog::FromParts(std::span<const uint32_t> sparse, std::span<const uint8_t> dense) {
  HyperLogLog h;
  if (dense.size() == kRegisters) {
    h.words_ = std::make_unique<uint32_t[]>(kDenseWords);
    std::copy(dense.begin(), dense.end(), h.registers());
    h.size_ = kDense;
    h.capacity_ = kDenseWords;
  } else if (!sparse.empty()) {
    h.Reserve(static_cast<uint32_t>(sparse.size()));
    std::copy(sparse.begin(), sparse.end(), h.words_.get());
    h.size_ = static_cast<uint32_t>(sparse.size());
  }
  return h;
}

}  // namespace seismo
