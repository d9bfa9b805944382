#include "seismo/query/stack_order.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>

#include "seismo/aggregate/row_changes.h"
#include "seismo/query/radix_sort.h"

namespace seismo {
namespace {

using OrderEntry = StackOrder::Entry;
using OrderEntries = std::vector<OrderEntry, HugePageAllocator<OrderEntry>>;

constexpr uint32_t kNowhere = UINT32_MAX;
constexpr size_t kRadixRunsFrom = 4096;  // a run's keys sorted by a radix sort from this many
constexpr size_t kReadAhead = 16;        // stacks a walk asks memory for before it reads them

// Room for `n` items, with an eighth more when it has to grow: a vector's own growth doubles,
// past what BytesFor counts.
template <typename V>
void Room(V& v, size_t n) {
  if (v.capacity() < n) v.reserve(n + n / 8);
}

// Frame order of two frames: by text, then by id (two ids of one text, should there be any).
// Reads the texts only of two different ids.
bool FrameBefore(Sym a, Sym b, const Symbols& symbols) {
  if (a == b) return false;
  const std::string_view ta = symbols.Text(a), tb = symbols.Text(b);
  if (ta != tb) return ta < tb;
  return a < b;
}

// Frame order of two stacks: frame by frame from the root, a stack before the stacks it is a
// prefix of.
bool FramesBefore(const OrderEntry& a, const OrderEntry& b, const Symbols& symbols) {
  const uint32_t n = std::min(a.size, b.size);
  uint32_t i = 0;
  while (i < n && a.frames[i] == b.frames[i]) ++i;
  if (i == n) return a.size < b.size;
  return FrameBefore(a.frames[i], b.frames[i], symbols);
}

constexpr uint32_t kUnknown = UINT32_MAX;  // an entry's `common` before it is compared

OrderEntry OrderEntryOf(const IdSums::Entry& e, const Symbols& symbols) {
  const std::span<const Sym> f = symbols.Frames(e.id);
  return {f.data(), static_cast<uint32_t>(f.size()), e.id, kUnknown, e.sums.hang_us, e.sums.hang_count};
}

uint32_t Common(const OrderEntry& a, const OrderEntry& b) {
  const uint32_t n = std::min(a.size, b.size);
  uint32_t m = 0;
  while (m < n && a.frames[m] == b.frames[m]) ++m;
  return m;
}

// A frame among its siblings, to sort them by text: 8 bytes of its text from the offset where
// the siblings' texts first differ (`chunk`, big-endian, so that an integer compare of them is
// that of the bytes; past its end, zeros), its id, and the run [lo, hi) of its
// stacks in SortByFrames' keys. kNoId for the stacks that end at the run's depth.
struct FrameGroup {
  uint64_t chunk = 0;
  Sym frame = kNoId;
  uint32_t lo = 0, hi = 0;
};

// Sorts `groups` in frame order: by their frames' texts, then ids. Past the bytes every text
// shares (names of one namespace share long prefixes), 8 bytes of each are read into its
// group, and the sort compares those, and whole texts (FrameBefore) only where they tie: not
// two texts elsewhere in memory at every step of the sort.
void SortByText(std::span<FrameGroup> groups, const Symbols& symbols) {
  if (groups.size() < 2) return;
  const InternTable& texts = symbols.text();
  // Each text is two reads elsewhere in memory (its id's slot, then its entry): asked ahead.
  auto ask_ahead = [&](size_t i) {
    if (i + 2 * kReadAhead < groups.size()) texts.PrefetchSlot(groups[i + 2 * kReadAhead].frame);
    if (i + kReadAhead < groups.size()) texts.PrefetchEntry(groups[i + kReadAhead].frame);
  };
  const std::string_view first = symbols.Text(groups[0].frame);
  size_t shared = first.size();  // bytes every text shares with the first
  for (size_t i = 0; i < groups.size(); ++i) {
    ask_ahead(i);
    const std::string_view text = symbols.Text(groups[i].frame);
    size_t m = 0;
    const size_t n = std::min(shared, text.size());
    while (m < n && text[m] == first[m]) ++m;
    shared = m;
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    ask_ahead(i);
    FrameGroup& g = groups[i];
    const std::string_view text = symbols.Text(g.frame);
    unsigned char bytes[8] = {};
    std::memcpy(bytes, text.data() + shared, std::min<size_t>(text.size() - shared, sizeof(bytes)));
    g.chunk = 0;
    for (const unsigned char c : bytes) g.chunk = g.chunk << 8 | c;
  }
  std::sort(groups.begin(), groups.end(), [&symbols](const FrameGroup& a, const FrameGroup& b) {
    return a.chunk != b.chunk ? a.chunk < b.chunk : FrameBefore(a.frame, b.frame, symbols);
  });
}

// Sorts `entries` in frame order: runs of stacks that share their first `depth` frames are
// grouped by the next one (those that end there first) with a sort of the frame ids (a radix
// sort for many), and the groups put in the order of their frames' texts, until each run is
// one stack. A run whose stacks all go on with the same frames skips them in one pass. A
// group's text is read when its run is sorted: a node's children, not its stacks.
void SortByFrames(OrderEntries& entries, const Symbols& symbols) {
  struct Run {
    size_t lo, hi, depth;
  };
  std::vector<Run> runs;
  if (entries.size() > 1) runs.push_back({0, entries.size(), 0});
  // A stack's next frame (kNoId where it ends: no id is 0) in the high half, its place in the
  // run in the low.
  std::vector<uint64_t, HugePageAllocator<uint64_t>> keyed;
  auto frame_of = [](uint64_t k) { return static_cast<Sym>(k >> 32); };
  std::vector<FrameGroup, HugePageAllocator<FrameGroup>> groups;
  OrderEntries scratch;
  keyed.reserve(entries.size());  // the first run is every stack: no growth past it
  groups.reserve(entries.size());  // at most one a stack (ScratchBytesFor counts no doubling)
  while (!runs.empty()) {
    const Run r = runs.back();
    runs.pop_back();
    keyed.clear();
    bool grouped = true;
    Sym max_frame = 0;
    const OrderEntry& ref = entries[r.lo];
    size_t shared = ref.size - std::min<size_t>(ref.size, r.depth);  // frames every stack shares with ref
    for (size_t i = r.lo; i < r.hi; ++i) {
      if (i + kReadAhead < r.hi) {
        const OrderEntry& ahead = entries[i + kReadAhead];
        __builtin_prefetch(ahead.frames + std::min<size_t>(r.depth, ahead.size));
      }
      const OrderEntry& e = entries[i];
      const Sym frame = r.depth < e.size ? e.frames[r.depth] : kNoId;
      if (!keyed.empty() && frame < frame_of(keyed.back())) grouped = false;
      max_frame = std::max(max_frame, frame);
      keyed.push_back(uint64_t{frame} << 32 | (i - r.lo));
      size_t m = 0;
      while (m < shared && r.depth + m < e.size && e.frames[r.depth + m] == ref.frames[r.depth + m]) ++m;
      shared = m;
    }
    if (shared > 0) {  // every stack goes on with the same `shared` frames: one run, deeper
      runs.push_back({r.lo, r.hi, r.depth + shared});
      continue;
    }
    if (!grouped) {
      if (keyed.size() >= kRadixRunsFrom) {
        RadixSortBy(keyed, std::bit_width(max_frame), [&frame_of](uint64_t k) { return frame_of(k); });
      } else {
        std::sort(keyed.begin(), keyed.end());  // by frame, then place
      }
    }
    // The groups by frame id, those that end here first; then by their frames' texts.
    groups.clear();
    for (size_t i = 0; i < keyed.size();) {
      const size_t lo = i;
      const Sym frame = frame_of(keyed[i]);
      while (i < keyed.size() && frame_of(keyed[i]) == frame) ++i;
      FrameGroup g;
      g.frame = frame;
      g.lo = static_cast<uint32_t>(lo);
      g.hi = static_cast<uint32_t>(i);
      groups.push_back(g);
    }
    const size_t ends = groups[0].frame == kNoId ? 1 : 0;
    SortByText(std::span<FrameGroup>(groups.data() + ends, groups.size() - ends), symbols);
    scratch.resize(keyed.size());
    size_t out = 0;
    for (const FrameGroup& g : groups) {
      if (g.frame != kNoId && g.hi - g.lo > 1)
        runs.push_back({r.lo + out, r.lo + out + g.hi - g.lo, r.depth + 1});
      for (size_t k = g.lo; k < g.hi; ++k) scratch[out++] = entries[r.lo + static_cast<uint32_t>(keyed[k])];
    }
    std::copy(scratch.begin(), scratch.end(), entries.begin() + static_cast<ptrdiff_t>(r.lo));
  }
}

}  // namespace

bool StackOrder::Update(std::span<const IdSums::Entry> by_stack, const Symbols& symbols,
                        std::shared_ptr<const void> keep) {
  try {
    const bool carried = symbols_ == &symbols && !entries_.empty() && MergeIn(by_stack, symbols);
    if (!carried) MakeAnew(by_stack, symbols);
    symbols_ = &symbols;
    keep_ = std::move(keep);  // the previous snapshot goes only now: the merge read its stacks
    return carried;
  } catch (...) {
    Clear();  // half merged: made anew next time
    throw;
  }
}

void StackOrder::Clear() {
  // Swapped with empty ones: their memory goes back now (an assignment of {} keeps it).
  decltype(entries_)().swap(entries_);
  decltype(shapes_)().swap(shapes_);
  decltype(us_before_)(1, 0).swap(us_before_);
  decltype(count_before_)(1, 0).swap(count_before_);
  decltype(position_)().swap(position_);
  symbols_ = nullptr;
  keep_.reset();
}

uint64_t StackOrder::MemoryBytes() const {
  auto bytes = [](const auto& v) {
    return static_cast<uint64_t>(HugePageBlockBytes(v.capacity() * sizeof(v[0])));
  };
  return bytes(entries_) + bytes(shapes_) + bytes(us_before_) + bytes(count_before_) + bytes(position_);
}

uint64_t StackOrder::BytesFor(size_t stacks, size_t id_bound) {
  // The entries, their shapes and both running sums, with an eighth more room (Room); the
  // places by id, and half as many while they grow beside their old block (Positions' Room);
  // each array's last huge page, partly used.
  constexpr uint64_t kKept = sizeof(OrderEntry) + sizeof(Shape) + 2 * sizeof(int64_t);
  return static_cast<uint64_t>(stacks) * (kKept + kKept / 8) +
         static_cast<uint64_t>(id_bound) * (sizeof(uint32_t) + sizeof(uint32_t) / 2) + 5 * kHugePageBytes;
}

uint64_t StackOrder::ScratchBytesFor(size_t stacks) {
  // Made anew: the keys and the radix sort's copy of them, the groups of a run by frame (at
  // most one a stack) and a copy of the entries (SortByFrames), and its runs waiting (each of
  // two stacks or more, none within another: at most half the stacks, 24 bytes each, in a list
  // that doubles). Merged: the entries' new block when they grow (an eighth more), the stacks
  // that came (at most a quarter and 1 024, CheaperThanAWalk: MergeIn stops gathering past it)
  // in a list that doubles, with their places; an array of Index's at a time grows beside its
  // old block. Less than made anew; each a block partly used.
  constexpr uint64_t kMaking = 2 * sizeof(uint64_t) + sizeof(FrameGroup) + sizeof(OrderEntry) + 24;
  return static_cast<uint64_t>(stacks) * kMaking + 2048 * (sizeof(OrderEntry) + sizeof(size_t)) +
         5 * kHugePageBytes;
}

void StackOrder::MakeAnew(std::span<const IdSums::Entry> by_stack, const Symbols& symbols) {
  entries_.clear();
  entries_.reserve(by_stack.size());
  for (const IdSums::Entry& e : by_stack) entries_.push_back(OrderEntryOf(e, symbols));
  SortByFrames(entries_, symbols);
  Positions(by_stack);
  Index(0);
}

void StackOrder::Positions(std::span<const IdSums::Entry> by_stack) {
  if (by_stack.empty()) return;
  const size_t size = std::max<size_t>(position_.size(), by_stack.back().id + 1);
  Room(position_, size);
  position_.resize(size, kNowhere);
}

bool StackOrder::MergeIn(std::span<const IdSums::Entry> by_stack, const Symbols& symbols) {
  const size_t n = entries_.size();
  Positions(by_stack);
  // Each stack of this round: its new sums where the order has it, else it came.
  std::vector<bool> stays(n, false);
  OrderEntries came;
  size_t kept = 0;
  for (const IdSums::Entry& e : by_stack) {
    const uint32_t p = position_[e.id];
    if (p < n && entries_[p].id == e.id) {
      entries_[p].hang_us = e.sums.hang_us;
      entries_[p].hang_count = e.sums.hang_count;
      stays[p] = true;
      ++kept;
    } else {
      if (!CheaperThanAWalk(came.size() + 1, n)) return false;  // refused below anyway: no more scratch
      came.push_back(OrderEntryOf(e, symbols));
    }
  }
  if (came.empty() && kept == n) {
    Index(n);  // the running sums only
    return true;
  }
  if (!CheaperThanAWalk(came.size() + (n - kept), n)) return false;
  SortByFrames(came, symbols);
  // Each stack that came: its place among the order's stacks, those leaving included (their
  // frames are readable while keep_ lives). Ascending, as `came` is.
  std::vector<size_t> place(came.size());
  auto from = entries_.begin();
  for (size_t k = 0; k < came.size(); ++k) {
    from = std::lower_bound(
        from, entries_.end(), came[k],
        [&symbols](const OrderEntry& a, const OrderEntry& b) { return FramesBefore(a, b, symbols); });
    place[k] = static_cast<size_t>(from - entries_.begin());
  }
  // The stacks leaving go, in place; the places move down with the stacks after them.
  size_t out = 0, k = 0;
  size_t first_moved = n;  // the first entry whose place changes
  for (size_t i = 0; i < n; ++i) {
    while (k < place.size() && place[k] == i) place[k++] = out;
    if (!stays[i]) {
      first_moved = std::min(first_moved, out);
      continue;
    }
    entries_[out] = entries_[i];
    if (i > 0 && !stays[i - 1]) entries_[out].common = kUnknown;  // its neighbour left
    ++out;
  }
  while (k < place.size()) place[k++] = out;
  // The stacks that came merge in from the back, each entry moved up once.
  const size_t total = out + came.size();
  Room(entries_, total);
  entries_.resize(total);
  size_t src = out, dst = total;
  for (size_t a = came.size(); a-- > 0;) {
    while (src > place[a]) entries_[--dst] = entries_[--src];
    if (dst < total) entries_[dst].common = kUnknown;  // its neighbour came
    entries_[--dst] = came[a];
  }
  if (!came.empty()) first_moved = std::min(first_moved, place[0]);
  Index(first_moved);
  return true;
}

void StackOrder::Index(size_t from) {
  const size_t n = entries_.size();
  for (size_t i = from; i < n; ++i) {
    OrderEntry& e = entries_[i];
    position_[e.id] = static_cast<uint32_t>(i);
    if (e.common == kUnknown) {
      if (i + kReadAhead < n) __builtin_prefetch(entries_[i + kReadAhead].frames);
      e.common = i == 0 ? 0 : Common(entries_[i - 1], e);
    }
    // Distinct stacks (distinct ids of one table): no entry repeats the one before it, which
    // a node's grouping relies on (flame_tree.cc).
    assert(i == 0 || e.common < e.size || e.common < entries_[i - 1].size);
  }
  Room(shapes_, n);
  Room(us_before_, n + 1);
  Room(count_before_, n + 1);
  shapes_.resize(n);
  for (size_t i = from; i < n; ++i) shapes_[i] = {entries_[i].common, entries_[i].size};
  us_before_.resize(n + 1);
  count_before_.resize(n + 1);
  us_before_[0] = count_before_[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    us_before_[i + 1] = us_before_[i] + entries_[i].hang_us;
    count_before_[i + 1] = count_before_[i] + entries_[i].hang_count;
  }
}

}  // namespace seismo
