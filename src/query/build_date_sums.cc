#include "seismo/query/build_date_sums.h"

namespace seismo {

BuildDateSums::BuildDateSums(std::span<const HangRow> rows, int64_t window_ms, const Symbols* symbols)
    : window_ms_(window_ms), symbols_(symbols) {
  for (const HangRow& r : rows) Add(r, 1);
}

void BuildDateSums::Add(const HangRow& r, int64_t sign) {
  const BuildDateKey key = BuildDateOf(r.key);
  Sums& s = sums_[key];
  s.hang_us += sign * r.sums.hang_us;
  s.hang_count += sign * r.sums.hang_count;
  s.rows += sign;
  if (s.rows == 0) sums_.erase(key);
}

void BuildDateSums::Apply(const RowDelta& delta) {
  for (const HangRow& r : delta.left) Add(r, -1);
  for (const HangRow& r : delta.came) Add(r, 1);
}

bool BuildDateSums::Serves(int64_t window_ms, const Filters& filters, const Symbols* symbols) const {
  if (window_ms != window_ms_ || symbols != symbols_) return false;
  for (const auto& f : filters.value) {
    if (f) return false;
  }
  return true;
}

uint64_t BuildDateSums::MemoryBytes() const {
  // A flat_hash_map slot of (key, sums) and its control byte.
  return sums_.capacity() * (sizeof(std::pair<BuildDateKey, Sums>) + 1);
}

}  // namespace seismo
