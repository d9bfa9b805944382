// /api/v1/hangs/flamegraph: the hang stacks of a selection merged into one
// call tree, root first (SPEC §4 "Flame graphs").
//
//   (root) 100 ms ─┬─ main 70 ms ── Tick 70 ms
//                  └─ idle 30 ms
//
// A node's numbers include everything below it. `tree` is nested JSON with
// children ordered by hang ms descending (then name); `collapsed` is the
// folded-stack text that flame-graph tools read: one "a;b;c <ms>" line per
// distinct stack, ms rounded to an integer, lines in stack order. A frame's
// own ';' and line breaks become ' ' so each line stays parseable.
//
// Bounded (query/answer_bound.h, ADR 0025): past `limits.max_nodes` nodes or
// `limits.max_bytes` bytes the smallest subtrees fold into "(other)" nodes, so every
// node's numbers stay exact, and the root says `"truncated": true`; `collapsed` then has
// a line per node where stacks end ("...;(other) <ms>" for a fold), and sums the lines
// past max_bytes into one last "(truncated) <ms>" line.
//
// Threading: pure functions on an immutable Snapshot, but for a FlameCarry's order, which the
// call brings up to date (the warm-up thread's own).
#pragma once

#include <memory>
#include <string>

#include "seismo/aggregate/snapshot.h"
#include "seismo/query/answer_bound.h"
#include "seismo/query/params.h"

namespace seismo {

class HangGroups;  // query/hang_groups.h
class HangRows;    // query/hang_rows.h
class StackOrder;  // query/stack_order.h

// What a warm-up round gives its flame graph (ADR 0034): the order of the stacks the round
// before selected, brought to this round's selected stacks (StackOrder::Update) and read
// instead of sorting them; and the snapshot asked about, which the order keeps until the
// next round.
struct FlameCarry {
  StackOrder* order = nullptr;
  // The rows' sums by stack kept from round to round (hang_groups.h MakeByStack), read when
  // they serve the query instead of summing the rows; or none.
  const HangGroups* by_stack = nullptr;
  bool by_stack_read = false;  // set: they served it
  std::shared_ptr<const Snapshot> snap;
  bool carried = false;  // set: the order was brought from the previous round's
};

// `shared`: the hang rows of the round's answers (read when they serve the query, HangRows::Serves).
std::string FlamegraphTreeJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits = {},
                               const HangRows* shared = nullptr, FlameCarry* carry = nullptr);
std::string FlamegraphCollapsed(const Snapshot& snap, const Query& q, const AnswerLimits& limits = {},
                                const HangRows* shared = nullptr, FlameCarry* carry = nullptr);

}  // namespace seismo
