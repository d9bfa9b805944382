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
  // Whether MergeSnapshots may have met the series in several shards: then its row is
  // in repeatable_rows_ (its own or merged), never compared by slot.
  auto repeatable = [t](const Snapshot& snap, const SeriesData* s) {
    return !snap.routed_by_key_ || t == Table::kCrashes || s->level > 0;
  };
  using Pages = std::vector<std::shared_ptr<const SeriesPage>>;
  static const Pages kNoPages;
  const size_t shards = std::max(before.shards_.size(), after.shards_.size());
  for (size_t i = 0; i < shards; ++i) {
    const Pages& old_pages = i < before.shards_.size() ? before.shards_[i]->pages[table] : kNoPages;
    const Pages& new_pages = i < after.shards_.size() ? after.shards_[i]->pages[table] : kNoPages;
    const size_t pages = std::max(old_pages.size(), new_pages.size());
    for (size_t p = 0; p < pages; ++p) {
      const SeriesPage* old_page = p < old_pages.size() ? old_pages[p].get() : nullptr;
      const SeriesPage* new_page = p < new_pages.size() ? new_pages[p].get() : nullptr;
      if (old_page == new_page) continue;
      for (size_t slot = 0; slot < kSeriesPage; ++slot) {
        const SeriesData* o = old_page != nullptr ? old_page->series[slot].get() : nullptr;
        const SeriesData* n = new_page != nullptr ? new_page->series[slot].get() : nullptr;
        if (o == n) continue;
        if (o != nullptr && !repeatable(before, o)) out.removed.push_back(o);
        if (n != nullptr && !repeatable(after, n)) out.added.push_back(n);
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
