#include "seismo/query/hang_groups.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "seismo/query/heaviest.h"
#include "seismo/query/radix_sort.h"

namespace seismo {
namespace {

uint64_t OrderOf(uint32_t group, InternId id) { return (uint64_t{group} << 32) | id; }
uint64_t OrderOf(const IdSums::Entry& e) { return OrderOf(e.group, e.id); }

// The first place in [from, n) whose entry is not less than what is sought (less(i): entry
// i is less), found by steps doubling from `from`, then halving: the changes come in order,
// so each is near the one before.
template <typename Less>
size_t Gallop(size_t from, size_t n, Less&& less) {
  if (from >= n || !less(from)) return from;
  size_t lo = from, step = 1;  // less(lo)
  while (lo + step < n && less(lo + step)) {
    lo += step;
    step *= 2;
  }
  size_t a = lo + 1, b = std::min(n, lo + step);  // the place is in [a, b]: b is n or not less
  while (a < b) {
    const size_t m = a + (b - a) / 2;
    if (less(m)) {
      a = m + 1;
    } else {
      b = m;
    }
  }
  return a;
}

// Bytes of an absl::flat_hash_map's table: a slot and a control byte each, and a group of
// control bytes cloned at the end.
template <typename Map>
uint64_t TableBytes(const Map& m) {
  return m.capacity() * (sizeof(typename Map::value_type) + 1) + 32;
}

// At most the slots of a table that held `n` entries: it doubles when over 7/8 full.
constexpr uint64_t MaxSlots(uint64_t n) { return 16 * n / 7 + 32; }

void Negate(HangSums& s) {
  s.hang_us = -s.hang_us;
  s.hang_count = -s.hang_count;
}

}  // namespace

std::optional<HangGroups> HangGroups::Make(HangsBy by, int64_t window_ms, const Symbols* symbols, Sym source,
                                           std::span<const HangRow> rows, const Selection* selection) {
  return Fill(HangGroups(by, window_ms, symbols, source), rows, selection);
}

std::optional<HangGroups> HangGroups::MakeByStack(int64_t window_ms, const Symbols* symbols, Sym source,
                                                  std::span<const HangRow> rows, const Selection* selection) {
  HangGroups out(HangsBy::kThread, window_ms, symbols, source);
  out.by_stack_ = true;
  return Fill(std::move(out), rows, selection);
}

std::optional<HangGroups> HangGroups::Fill(HangGroups out, std::span<const HangRow> rows,
                                           const Selection* selection) {
  const HangsBy by = out.by_;
  const Sym source = out.source_;
  if (selection != nullptr) {
    out.also_ = selection->also;
    out.also_[Dim::kSource].reset();
  }
  if (source == kNoId) return out;
  auto ours = [&](const HangRow& r) {
    return r.key[hang_field::kSource] == source && (selection == nullptr || selection->keeps(r.key));
  };
  // An entry a row, sorted by (group number, id), then one entry a key with the rows it
  // took. Rows in stack order (HangRows) give stacks in order: then the sort is by group
  // number only, and stable.
  size_t n = 0;
  for (const HangRow& r : rows) n += ours(r) ? 1 : 0;
  std::vector<IdSums::Entry, HugePageAllocator<IdSums::Entry>> made;
  made.reserve(n);
  uint32_t max_group = 0;
  InternId max_id = 0;
  bool ids_ascending = true;
  for (const HangRow& r : rows) {
    if (!ours(r)) continue;
    const std::optional<uint32_t> g = out.NumberOf(r.key);
    if (!g) return std::nullopt;
    if (by != HangsBy::kSignature) {
      out.groups_[*g].sums.Add(r.sums);
      ++out.groups_[*g].rows;
    }
    const InternId id = out.IdOf(r.key);
    ids_ascending = ids_ascending && (made.empty() || id >= made.back().id);
    made.push_back({*g, id, r.sums});
    max_group = std::max(max_group, *g);
    max_id = std::max(max_id, id);
  }
  if (ids_ascending) {
    RadixSortBy(made, std::bit_width(max_group), [](const IdSums::Entry& e) { return uint64_t{e.group}; });
  } else {
    const int id_bits = std::bit_width(max_id);
    RadixSortBy(made, id_bits + std::bit_width(max_group),
                [id_bits](const IdSums::Entry& e) { return (uint64_t{e.group} << id_bits) | e.id; });
  }
  size_t distinct = 0;
  for (size_t i = 0; i < made.size(); ++i)
    distinct += i == 0 || OrderOf(made[i]) != OrderOf(made[i - 1]) ? 1 : 0;
  out.entries_.reserve(distinct);
  out.entry_rows_.reserve(distinct);
  for (const IdSums::Entry& e : made) {
    if (!out.entries_.empty() && OrderOf(out.entries_.back()) == OrderOf(e)) {
      out.entries_.back().sums.Add(e.sums);
      ++out.entry_rows_.back();
    } else {
      out.entries_.push_back(e);
      out.entry_rows_.push_back(1);
    }
  }
  return out;
}

std::optional<uint32_t> HangGroups::NumberOf(const SeriesKey& key) {
  HangGroupKey k = by_stack_ ? HangGroupKey{} : HangGroupOf(by_, key);
  if (by_ == HangsBy::kSignature) k[2] = kNoId;  // numbered by (process, thread)
  const auto [at, added] = number_of_.try_emplace(k, static_cast<uint32_t>(groups_.size()));
  if (added) {
    if (groups_.size() >= kMaxGroupNumbers) {
      number_of_.erase(at);
      return std::nullopt;
    }
    groups_.push_back({k, 0, HangSums{}});
  }
  return at->second;
}

bool HangGroups::Apply(const RowDelta& delta, const std::function<bool(const SeriesKey&)>& keeps) {
  if (source_ == kNoId) return true;
  // The changes, one a row; a group's own sums (by thread and by build date) changed here.
  std::vector<Change> changes;
  changes.reserve(delta.left.size() + delta.came.size());
  auto change = [&](const HangRow& r, bool left) {
    if (r.key[hang_field::kSource] != source_ || (keeps && !keeps(r.key))) return true;
    const std::optional<uint32_t> g = NumberOf(r.key);
    if (!g) return false;
    HangSums sums = r.sums;
    if (left) Negate(sums);
    if (by_ != HangsBy::kSignature) {
      Group& group = groups_[*g];
      if (left && group.rows == 0) return false;  // the row was in no group here
      group.sums.Add(sums);
      group.rows = left ? group.rows - 1 : group.rows + 1;
    }
    changes.push_back({*g, IdOf(r.key), sums, left ? -1 : 1});
    return true;
  };
  for (const HangRow& r : delta.left) {
    if (!change(r, true)) return false;
  }
  for (const HangRow& r : delta.came) {
    if (!change(r, false)) return false;
  }
  // One change a key, in the entries' order.
  std::sort(changes.begin(), changes.end(),
            [](const Change& a, const Change& b) { return OrderOf(a.group, a.id) < OrderOf(b.group, b.id); });
  size_t distinct = 0;
  for (const Change& c : changes) {
    if (distinct > 0 &&
        OrderOf(changes[distinct - 1].group, changes[distinct - 1].id) == OrderOf(c.group, c.id)) {
      changes[distinct - 1].sums.Add(c.sums);
      changes[distinct - 1].rows += c.rows;
    } else {
      changes[distinct++] = c;
    }
  }
  changes.resize(distinct);
  // Each change's entry, sought from the one before: changed in place; one whose rows are
  // all gone leaves; a key without one comes.
  std::vector<size_t> gone;                       // ascending places
  std::vector<std::pair<size_t, size_t>> coming;  // (place it goes before, change), ascending
  const size_t n = entries_.size();
  size_t at = 0;
  for (size_t c = 0; c < changes.size(); ++c) {
    const uint64_t sought = OrderOf(changes[c].group, changes[c].id);
    at = Gallop(at, n, [&](size_t i) { return OrderOf(entries_[i]) < sought; });
    if (at < n && OrderOf(entries_[at]) == sought) {
      const int64_t rows = int64_t{entry_rows_[at]} + changes[c].rows;
      if (rows < 0) return false;  // more rows left than it had
      entries_[at].sums.Add(changes[c].sums);
      entry_rows_[at] = static_cast<uint32_t>(rows);
      if (rows == 0) gone.push_back(at);
      ++at;
    } else {
      if (changes[c].rows <= 0) return false;  // a row left an entry that is not here
      coming.emplace_back(at, c);
    }
  }
  if (gone.empty() && coming.empty()) return true;
  // The entries that stay, moved up over those that go.
  size_t kept = gone.empty() ? n : gone.front();
  for (size_t i = kept, k = 0; i < n; ++i) {
    if (k < gone.size() && gone[k] == i) {
      ++k;
      continue;
    }
    entries_[kept] = entries_[i];
    entry_rows_[kept] = entry_rows_[i];
    ++kept;
  }
  // A coming entry's place among them: its place less the entries gone before it.
  for (size_t k = 0, g = 0; k < coming.size(); ++k) {
    while (g < gone.size() && gone[g] < coming[k].first) ++g;
    coming[k].first -= g;
  }
  // The coming entries merged in from the back: each entry moves once.
  const size_t size = kept + coming.size();
  if (size > entries_.capacity()) {
    entries_.reserve(size + size / 8);  // not twice: an entry grows the array by one
    entry_rows_.reserve(size + size / 8);
  }
  entries_.resize(size);
  entry_rows_.resize(size);
  size_t src = kept, dst = size;
  for (size_t k = coming.size(); k > 0; --k) {
    const size_t place = coming[k - 1].first;
    const Change& c = changes[coming[k - 1].second];
    while (src > place) {
      --src;
      --dst;
      entries_[dst] = entries_[src];
      entry_rows_[dst] = entry_rows_[src];
    }
    --dst;
    entries_[dst] = {c.group, c.id, c.sums};
    entry_rows_[dst] = static_cast<uint32_t>(c.rows);
  }
  return true;
}

bool HangGroups::Serves(HangsBy by, int64_t window_ms, const Filters& filters, const Symbols* symbols,
                        Sym source) const {
  return !by_stack_ && by == by_ && SameSelection(window_ms, filters, symbols, source);
}

bool HangGroups::ServesStacks(int64_t window_ms, const Filters& filters, const Symbols* symbols,
                              Sym source) const {
  return by_stack_ && SameSelection(window_ms, filters, symbols, source);
}

bool HangGroups::SameSelection(int64_t window_ms, const Filters& filters, const Symbols* symbols,
                               Sym source) const {
  if (window_ms != window_ms_ || symbols != symbols_ || source != source_) return false;
  for (size_t d = 0; d < kDimCount; ++d) {
    if (d != static_cast<size_t>(Dim::kSource) && filters.value[d] != also_.value[d]) return false;
  }
  return true;
}

int64_t HangGroups::NthHeaviest(size_t n) const {
  if (by_ == HangsBy::kSignature) {
    return seismo::NthHeaviest(entries_.begin(), entries_.end(), n,
                               [](const IdSums::Entry& e) { return e.sums.hang_us; });
  }
  // A number no row holds now is no group: it ranks below every group.
  return seismo::NthHeaviest(groups_.begin(), groups_.end(), n, [](const Group& g) {
    return g.rows > 0 ? g.sums.hang_us : std::numeric_limits<int64_t>::min();
  });
}

std::span<const IdSums::Entry> HangGroups::StacksOf(size_t g) const {
  if (by_ == HangsBy::kSignature) return {};
  auto before = [](const IdSums::Entry& e, uint64_t group) { return e.group < group; };
  const auto begin = std::lower_bound(entries_.begin(), entries_.end(), uint64_t{g}, before);
  const auto end = std::lower_bound(begin, entries_.end(), uint64_t{g} + 1, before);
  return std::span<const IdSums::Entry>(entries_.data() + (begin - entries_.begin()),
                                        static_cast<size_t>(end - begin));
}

uint64_t HangGroups::MemoryBytes() const {
  return groups_.capacity() * sizeof(Group) + TableBytes(number_of_) +
         HugePageBlockBytes(entries_.capacity() * sizeof(IdSums::Entry)) +
         HugePageBlockBytes(entry_rows_.capacity() * sizeof(uint32_t));
}

uint64_t HangGroups::KeptBytesFor(size_t rows, bool by_stack) {
  // Group numbers: one a row at most when made (more, met since: the warm-up makes them anew
  // past this bound); the array doubles, the table to MaxSlots. Entries: one a row at most,
  // an eighth more when they grow (Apply).
  const uint64_t numbers = by_stack ? 1 : std::min<uint64_t>(uint64_t{rows} + 1, kMaxGroupNumbers);
  const uint64_t m = uint64_t{rows} + rows / 8 + 1;
  return 2 * numbers * sizeof(Group) + MaxSlots(numbers) * (sizeof(SymsMap<3, uint32_t>::value_type) + 1) +
         32 + HugePageBlockBytes(m * sizeof(IdSums::Entry)) + HugePageBlockBytes(m * sizeof(uint32_t));
}

uint64_t HangGroups::ScratchBytesFor(size_t rows) {
  // Make: an entry a row and the radix sort's copy. Apply: the entries' old arrays while they
  // grow; the changes (at most what HangRows::Update lets change, HangRows::ChangeBound: an
  // eighth of the rows and 1 024; counted here at a quarter), and where they go.
  const uint64_t m = uint64_t{rows} + rows / 8 + 1;
  return 2 * HugePageBlockBytes(m * sizeof(IdSums::Entry)) + HugePageBlockBytes(m * sizeof(uint32_t)) +
         HugePageBlockBytes((sizeof(Change) + 3 * sizeof(size_t)) * (rows / 4 + 1024));
}

}  // namespace seismo
