#include "seismo/aggregate/crash_ids.h"

#include <algorithm>
#include <iterator>

namespace seismo {
namespace {

void AddSorted(std::vector<uint64_t>& into, const std::vector<uint64_t>& ids) {
  if (ids.empty()) return;
  const auto middle = static_cast<ptrdiff_t>(into.size());
  into.insert(into.end(), ids.begin(), ids.end());
  std::sort(into.begin() + middle, into.end());
  std::inplace_merge(into.begin(), into.begin() + middle, into.end());
  into.erase(std::unique(into.begin(), into.end()), into.end());
}

}  // namespace

void AddCrashIds(CrashIds& into, const ShardImage& image) {
  if (image.dedup_epoch == INT64_MIN) return;  // it never remembered an id
  if (!image.seen_docs.empty()) AddSorted(into[image.dedup_epoch], image.seen_docs);
  if (!image.seen_previous.empty()) AddSorted(into[image.dedup_epoch - 1], image.seen_previous);
}

}  // namespace seismo
