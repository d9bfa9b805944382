#include "seismo/query/id_sums.h"

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

namespace seismo {

std::span<const IdSums::Entry> IdSums::Reduce() {
  // The key: the group above the id's bits.
  const int id_bits = std::bit_width(max_id_);
  const int key_bits = id_bits + std::bit_width(max_group_);
  auto key_of = [id_bits](const Entry& e) { return (uint64_t{e.group} << id_bits) | e.id; };
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  const int passes = (key_bits + kDigitBits - 1) / kDigitBits;
  // Every pass's digit counts in one read of the entries.
  std::vector<std::array<size_t, kBuckets>> counts(static_cast<size_t>(passes));
  for (const Entry& e : entries_) {
    const uint64_t key = key_of(e);
    for (int p = 0; p < passes; ++p)
      ++counts[static_cast<size_t>(p)][(key >> (p * kDigitBits)) & (kBuckets - 1)];
  }
  std::vector<Entry> scratch(entries_.size());
  for (int p = 0; p < passes; ++p) {
    std::array<size_t, kBuckets>& count = counts[static_cast<size_t>(p)];
    if (std::find(count.begin(), count.end(), entries_.size()) != count.end())
      continue;  // one digit: in order
    size_t at = 0;
    for (size_t& c : count) at += std::exchange(c, at);
    const int shift = p * kDigitBits;
    for (const Entry& e : entries_) scratch[count[(key_of(e) >> shift) & (kBuckets - 1)]++] = e;
    entries_.swap(scratch);
  }
  // Equal keys are adjacent: summed into the first.
  size_t out = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (out > 0 && entries_[out - 1].group == entries_[i].group && entries_[out - 1].id == entries_[i].id) {
      entries_[out - 1].sums.hang_us += entries_[i].sums.hang_us;
      entries_[out - 1].sums.hang_count += entries_[i].sums.hang_count;
    } else {
      entries_[out++] = entries_[i];
    }
  }
  entries_.resize(out);
  return entries_;
}

}  // namespace seismo
