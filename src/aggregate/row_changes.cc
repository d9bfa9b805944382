#include "seismo/aggregate/row_changes.h"

#include <algorithm>

namespace seismo {

RowChanges ChangedRows(const Snapshot& before, const Snapshot& after, Table t) {
  const size_t table = static_cast<size_t>(t);
  RowChanges out;
  if (&before == &after) return out;
  if (before.routed_by_key_ != after.routed_by_key_) {  // which rows repeat differs: all of them
    out.removed = before.rows_[table];
    out.added = after.rows_[table];
    return out;
  }
  // A series MergeSnapshots may have met in several shards has its row in repeatable_rows_
  // (its own or merged), never compared by slot.
  auto repeatable = [t](const Snapshot& snap, const SeriesData* s) {
    return MayRepeatAcrossShards(t, *s, snap.routed_by_key_);
  };
  // Compares the slots of one page in both (either may be null: not there).
  auto compare = [&](const SeriesPage* old_page, const SeriesPage* new_page) {
    if (old_page == new_page) return;
    for (size_t slot = 0; slot < kSeriesPage; ++slot) {
      const SeriesData* o = old_page != nullptr ? old_page->series[slot].get() : nullptr;
      const SeriesData* n = new_page != nullptr ? new_page->series[slot].get() : nullptr;
      if (o == n) continue;
      if (o != nullptr && !repeatable(before, o)) out.removed.push_back(o);
      if (n != nullptr && !repeatable(after, n)) out.added.push_back(n);
    }
  };
  // The number of a shard's k-th page (its place in the list where no number was kept).
  auto number = [table](const ShardSnapshot* shard, size_t k) -> uint64_t {
    if (shard == nullptr || k >= shard->pages[table].size()) return UINT64_MAX;
    const auto& numbers = shard->page_numbers[table];
    return numbers.size() == shard->pages[table].size() ? numbers[k] : k;
  };
  const size_t shards = std::max(before.shards_.size(), after.shards_.size());
  for (size_t i = 0; i < shards; ++i) {
    const ShardSnapshot* old_shard = i < before.shards_.size() ? before.shards_[i].get() : nullptr;
    const ShardSnapshot* new_shard = i < after.shards_.size() ? after.shards_[i].get() : nullptr;
    // Pages in ascending number on both sides, an empty page left out: merged by number.
    for (size_t a = 0, b = 0;;) {
      const uint64_t na = number(old_shard, a), nb = number(new_shard, b);
      if (na == UINT64_MAX && nb == UINT64_MAX) break;
      if (na == nb) {
        compare(old_shard->pages[table][a++].get(), new_shard->pages[table][b++].get());
      } else if (na < nb) {
        compare(old_shard->pages[table][a++].get(), nullptr);
      } else {
        compare(nullptr, new_shard->pages[table][b++].get());
      }
    }
  }
  const auto& old_repeatable = before.repeatable_rows_[table];
  const auto& new_repeatable = after.repeatable_rows_[table];
  out.removed.insert(out.removed.end(), old_repeatable.begin(), old_repeatable.end());
  out.added.insert(out.added.end(), new_repeatable.begin(), new_repeatable.end());
  return out;
}

}  // namespace seismo
