#include "seismo/query/build_date_sums.h"

namespace seismo {

BuildDateSums::BuildDateSums(std::span<const HangRow> rows, int64_t window_ms, const Symbols* symbols)
    : window_ms_(window_ms), symbols_(symbols) {
  for (const HangRow& r : rows) Add(r, 1);  // (true: adding never refuses)
}

bool BuildDateSums::Add(const HangRow& r, int64_t sign) {
  const BuildDateKey key = BuildDateOf(r.key);
  if (sign < 0 && !sums_.contains(key)) return false;
  Sums& s = sums_[key];
  s.hang_us += sign * r.sums.hang_us;
  s.hang_count += sign * r.sums.hang_count;
  s.rows += sign;
  if (s.rows == 0) sums_.erase(key);
  return true;
}

bool BuildDateSums::Apply(const RowDelta& delta) {
  // The rows that came first: a changed row leaves and comes back in one entry, which must
  // not leave between the two.
  for (const HangRow& r : delta.came) Add(r, 1);
  for (const HangRow& r : delta.left) {
    if (!Add(r, -1)) return false;
  }
  return true;
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
