// HangGroups: the groups of one /hangs answer (by signature, by thread or by build date), with
// their window sums, and by thread and by build date each group's sums by stack; or the flame
// graph's sums by stack alone (MakeByStack: one group). Kept by the warm-up from round to round
// beside its hang rows, and brought up to date from the rows that changed (ADR 0034 steps 2, 4
// and 5, issue 19).
//
//   HangRows::Update ──RowDelta──> Apply: the rows that left taken out of their entries, the
//                                  rows that came added; entries met by a galloping search
//                                  in the sorted array, moved once when entries come or go
//   HangsJson(q, kept) ──Serves(q)──> NthHeaviest, ForEachGroup, StacksOf(g)
//   flame graph (FlameCarry::by_stack) ──ServesStacks(q)──> Stacks()
//
// A round's /hangs answers summed every row into their groups: a walk of 10⁶ rows, a hash
// probe and an IdSums entry a row, and a sort, per answer. From the kept groups an answer
// costs a pass over the groups' hang times (by signature, one per group) and the shown groups'
// stacks; the round, the changed rows and one pass over each array when entries come or go.
//
// One sorted array for every grouping: entries (group number, id), the id a signature (by
// signature, whose group number is then a (process, thread)) or a stack (by thread, by build
// date, and by stack alone, with one group number), each with its sums and the rows holding it. Made from the
// rows by a radix sort (no hash probe a row: one was 400 ns at 10⁶, a TLB miss each).
//
// Exact: every sum is an integer, taken out and added back; an entry, and a group, is kept
// while rows hold it (it counts them), so the groups and stacks are those a walk of the rows
// finds (HangGroups.* tests, against the walk, over random rounds).
//
// Bounded: at most kMaxGroupNumbers group numbers (more: Make and Apply refuse, and the
// answers sum the rows as before). Memory: MemoryBytes() from the capacities, at most
// KeptBytesFor(rows) (tested over random rounds; the warm-up makes them anew when they
// outgrow it, as after the rows shrank); making or updating them takes at most
// ScratchBytesFor(rows) more while it runs. The warm-up holds the kept bytes from the answer
// budget between rounds (api.h WarmCarry), and makes them under the hold of the answer they
// are made for, which covers the scratch (ADR 0037).
//
// Threading: one thread at a time (the warm-up's), read by one round's answers in turn.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "seismo/core/huge_pages.h"
#include "seismo/core/syms_map.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/id_sums.h"
#include "seismo/query/params.h"

namespace seismo {

// A hang row's group in a /hangs answer by `by`: (process, thread, signature), (process,
// thread) or (build date, channel) — a build date's builds differ by channel, and so do their
// hang rates — with kNoId in the fields a grouping leaves out.
using HangGroupKey = Syms<3>;
inline HangGroupKey HangGroupOf(HangsBy by, const SeriesKey& k) {
  switch (by) {
    case HangsBy::kSignature:
      return {k[hang_field::kProcess], k[hang_field::kThread], k[hang_field::kSignature]};
    case HangsBy::kThread:
      return {k[hang_field::kProcess], k[hang_field::kThread], kNoId};
    case HangsBy::kBuildDate:
      return {k[hang_field::kBuildDate], k[hang_field::kChannel], kNoId};
  }
  return {};
}

class HangGroups {
 public:
  static constexpr size_t kMaxGroupNumbers = size_t{1} << 16;

  // The groups by `by` of `rows` (HangRows of window `window_ms`, every source) whose source
  // is `source` (an id of `symbols`; kNoId: no row's), as HangsJson groups the rows of a
  // query of that window with no filter but the source. Nothing when they would take more
  // than kMaxGroupNumbers group numbers.
  // A view in use with filters besides its source (ADR 0035): `selection` is those filters
  // (the query's HangFilters less the source: `also`) and the test of its rows (`keeps`, a
  // RowFilter of `also`, query/selection.h); the groups take the rows it keeps only, and serve
  // that query only. Without one, a query with no filter but the source.
  struct Selection {
    Filters also;
    std::function<bool(const SeriesKey&)> keeps;
  };
  static std::optional<HangGroups> Make(HangsBy by, int64_t window_ms, const Symbols* symbols, Sym source,
                                        std::span<const HangRow> rows, const Selection* selection = nullptr);
  // The rows' sums by stack alone (one group of every row of the source): what the flame graph
  // of that window and source sums its rows into (IdSums), kept instead (Stacks()).
  static std::optional<HangGroups> MakeByStack(int64_t window_ms, const Symbols* symbols, Sym source,
                                               std::span<const HangRow> rows,
                                               const Selection* selection = nullptr);

  // Brings the groups from the rows before an update of theirs to the rows after it. False
  // where a row that left is not here (a delta of other rows), or past kMaxGroupNumbers:
  // drop the groups then (they are neither before's nor after's). `keeps`: the selection's
  // test, for groups made with one (the same filters).
  bool Apply(const RowDelta& delta, const std::function<bool(const SeriesKey&)>& keeps = {});

  // Whether these are the groups of a /hangs query by `by` in window `window_ms` whose filters
  // (HangFilters: the source set) are the source and the selection's (none without one), over
  // a snapshot whose symbols are `symbols` and in which the source's text is `source`.
  bool Serves(HangsBy by, int64_t window_ms, const Filters& filters, const Symbols* symbols,
              Sym source) const;
  // The same for groups made by MakeByStack and a flame graph's query (none else serves one).
  bool ServesStacks(int64_t window_ms, const Filters& filters, const Symbols* symbols, Sym source) const;
  // Made by MakeByStack: every stack of the rows with its sums, in stack id order, as
  // IdSums::Reduce gives them for one group.
  std::span<const IdSums::Entry> Stacks() const {
    assert(by_stack_);
    return entries_;
  }

  // The n-th largest hang time of the groups (query/heaviest.h NthHeaviest): only groups at
  // or above it can be among the n first.
  int64_t NthHeaviest(size_t n) const;
  // fn(const HangGroupKey&, const HangSums&, size_t g) for each group, in no particular
  // order; g is what StacksOf takes.
  template <typename Fn>
  void ForEachGroup(Fn&& fn) const {
    if (by_ == HangsBy::kSignature) {
      for (size_t i = 0; i < entries_.size(); ++i) {
        const HangGroupKey& thread = groups_[entries_[i].group].key;
        fn(HangGroupKey{thread[0], thread[1], entries_[i].id}, entries_[i].sums, i);
      }
      return;
    }
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].rows > 0) fn(groups_[g].key, groups_[g].sums, g);
    }
  }
  // Group g's stacks, in stack id order (by thread and by build date; none by signature).
  std::span<const IdSums::Entry> StacksOf(size_t g) const;

  uint64_t MemoryBytes() const;
  // At most what groups of at most `rows` rows keep (MemoryBytes), and what making or
  // updating them takes beside that while it runs.
  // `by_stack`: groups made by MakeByStack (one group number).
  static uint64_t KeptBytesFor(size_t rows, bool by_stack = false);
  static uint64_t ScratchBytesFor(size_t rows);

 private:
  struct Group {
    HangGroupKey key;  // by signature: (process, thread, kNoId)
    uint32_t rows = 0;
    HangSums sums;  // by thread and by build date
  };
  // A row's sums into (or, negative, out of) one entry.
  struct Change {
    uint32_t group;
    InternId id;
    HangSums sums;
    int64_t rows;
  };

  HangGroups(HangsBy by, int64_t window_ms, const Symbols* symbols, Sym source)
      : by_(by), window_ms_(window_ms), symbols_(symbols), source_(source) {}
  // The entries and groups of `rows` (Make and MakeByStack).
  static std::optional<HangGroups> Fill(HangGroups out, std::span<const HangRow> rows,
                                        const Selection* selection);
  bool SameSelection(int64_t window_ms, const Filters& filters, const Symbols* symbols, Sym source) const;
  // A key's group number (by signature, its (process, thread)'s), a new one for a key never
  // met; nullopt past kMaxGroupNumbers.
  std::optional<uint32_t> NumberOf(const SeriesKey& key);
  InternId IdOf(const SeriesKey& key) const {
    return by_ == HangsBy::kSignature && !by_stack_ ? key[hang_field::kSignature] : key[hang_field::kStack];
  }

  HangsBy by_;
  bool by_stack_ = false;  // MakeByStack's: one group (by_ is kThread, its key no thread)
  int64_t window_ms_;
  const Symbols* symbols_;
  Sym source_;
  Filters also_;  // the selection's filters (Selection::also): none but for a view's
  // By number, in the order met; a number stays its key's until the groups are made anew.
  // By thread and by build date with the group's rows and sums (rows 0: none now).
  std::vector<Group> groups_;
  SymsMap<3, uint32_t> number_of_;
  // (group number, id) ascending, one entry each, with the rows holding it.
  std::vector<IdSums::Entry, HugePageAllocator<IdSums::Entry>> entries_;
  std::vector<uint32_t, HugePageAllocator<uint32_t>> entry_rows_;
};

}  // namespace seismo
