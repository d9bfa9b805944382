#include "seismo/query/flamegraph.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "seismo/core/huge_pages.h"
#include "seismo/core/json_writer.h"
#include "seismo/query/flame_tree.h"
#include "seismo/query/hang_groups.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/hangs_json.h"
#include "seismo/query/id_sums.h"
#include "seismo/query/selection.h"
#include "seismo/query/stack_order.h"

namespace seismo {
namespace {

// The snapshot's symbols; an empty snapshot (before the first publish) has none.
const Symbols& SymbolsOf(const Snapshot& snap) {
  static const Symbols kNoSymbols;
  return snap.symbols != nullptr ? *snap.symbols : kNoSymbols;
}

// The selection's call tree within the answer's bounds (query/flame_tree.h): its distinct
// stacks, merged over every other dimension. From the carried order when there is one.
FlameTree SelectedTree(const Snapshot& snap, const Query& q, const AnswerLimits& limits,
                       const HangRows* shared, FlameCarry* carry) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  const std::string source = HangSource(snap, q);
  const Filters filters = HangFilters(q, source);
  IdSums sums;
  std::span<const IdSums::Entry> by_stack;
  if (carry != nullptr && carry->by_stack != nullptr &&
      carry->by_stack->ServesStacks(win.window_ms, filters, snap.symbols, SourceId(snap, source))) {
    by_stack = carry->by_stack->Stacks();
    carry->by_stack_read = true;
  } else {
    // Where an order is updated beside them, at their size: its scratch and theirs are within
    // the answer's (api.h AnswerBytesFor, ADR 0037). The warm-up's rows serve its query.
    if (carry != nullptr && carry->order != nullptr && shared != nullptr) sums.Reserve(shared->rows().size());
    ForEachHangRow(snap, win, filters, shared,
                   [&sums](const SeriesKey& k, const HangSums& v) { sums.Add(0, k[hang_field::kStack], v); });
    by_stack = sums.Reduce();
  }
  if (carry != nullptr && carry->order != nullptr) {
    carry->carried = carry->order->Update(by_stack, SymbolsOf(snap), carry->snap);
    return BuildFlameTree(*carry->order, SymbolsOf(snap), limits);
  }
  std::vector<FlameStack, HugePageAllocator<FlameStack>> stacks;  // read out of order (huge_pages.h)
  stacks.reserve(by_stack.size());
  for (const IdSums::Entry& e : by_stack) {
    stacks.push_back({snap.symbols->Frames(e.id), e.sums.hang_us, e.sums.hang_count});
  }
  return BuildFlameTree(stacks, SymbolsOf(snap), limits);
}

}  // namespace

std::string FlamegraphTreeJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits,
                               const HangRows* shared, FlameCarry* carry) {
  JsonWriter w;
  WriteFlameTree(w, SelectedTree(snap, q, limits, shared, carry), SymbolsOf(snap),
                 [](JsonWriter& out, const FlameNode& n) {
                   out.Key("hang_ms").Double(static_cast<double>(n.hang_us) / 1000.0);
                   out.Key("hang_count").Int(n.hang_count);
                 });
  return w.Take();
}

// One line per node where stacks end (an "(other)" node is one), in stack order: the
// tree is walked depth first with children in name order, a node's line before its
// children's. Lines past max_bytes are summed into one "(truncated)" line.
std::string FlamegraphCollapsed(const Snapshot& snap, const Query& q, const AnswerLimits& limits,
                                const HangRows* shared, FlameCarry* carry) {
  const FlameTree t = SelectedTree(snap, q, limits, shared, carry);
  const Symbols& symbols = SymbolsOf(snap);
  std::vector<std::vector<uint32_t>> by_name(t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    by_name[i] = t.nodes[i].children;
    std::sort(by_name[i].begin(), by_name[i].end(), [&t, &symbols](uint32_t a, uint32_t b) {
      return FlameNodeName(t.nodes[a], symbols, false) < FlameNodeName(t.nodes[b], symbols, false);
    });
  }
  std::string out, path;
  int64_t truncated_us = 0;
  bool truncated = false;
  auto line = [&](const FlameNode& n) {
    if (!n.ends_here) return;
    const std::string ms = std::to_string(std::llround(static_cast<double>(n.self_us) / 1000.0));
    const std::string_view text = path.empty() ? std::string_view("(empty stack)") : std::string_view(path);
    if (truncated || out.size() + text.size() + ms.size() + 2 + ByteBound::kTail > limits.max_bytes) {
      truncated = true;
      truncated_us += n.self_us;
      return;
    }
    out += text;
    out.push_back(' ');
    out += ms;
    out.push_back('\n');
  };
  struct Open {
    uint32_t node;
    size_t next = 0;
    size_t path_size = 0;  // the path's length before this node's frame
  };
  std::vector<Open> open{{0, 0, 0}};
  line(t.nodes[0]);
  while (!open.empty()) {
    Open& top = open.back();
    const std::vector<uint32_t>& kids = by_name[top.node];
    if (top.next == kids.size()) {
      path.resize(top.path_size);
      open.pop_back();
      continue;
    }
    const uint32_t child = kids[top.next++];
    const size_t before = path.size();
    if (!truncated) {  // past the bound only the sums are wanted
      if (!path.empty()) path.push_back(';');
      for (char c : FlameNodeName(t.nodes[child], symbols, false)) {
        path.push_back(c == ';' || c == '\n' || c == '\r' ? ' ' : c);
      }
    }
    open.push_back({child, 0, before});  // `top` is not used past this point
    line(t.nodes[child]);
  }
  if (truncated) {
    out += "(truncated) ";
    out += std::to_string(std::llround(static_cast<double>(truncated_us) / 1000.0));
    out.push_back('\n');
  }
  return out;
}

}  // namespace seismo
