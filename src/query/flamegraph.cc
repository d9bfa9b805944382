#include "seismo/query/flamegraph.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "seismo/core/json_writer.h"
#include "seismo/query/hangs_json.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

struct Sums {
  int64_t hang_us = 0;
  int64_t hang_count = 0;
};

// Distinct stacks of the selection (merged over every other dimension), in no order.
std::vector<std::pair<StackId, Sums>> SelectedStacks(const Snapshot& snap, const Query& q) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  absl::flat_hash_map<StackId, Sums> stacks;
  RowFilter filter(snap, Table::kHangs, HangFilters(q, HangSource(snap, q)));
  for (const SeriesData* s : snap.table(Table::kHangs)) {
    if (!filter.Matches(s->key)) continue;
    const Values v = ValuesIn(snap, *s, win);
    if (v[0] == 0 && v[1] == 0) continue;
    Sums& st = stacks[s->key[hang_field::kStack]];
    st.hang_us += v[0];
    st.hang_count += v[1];
  }
  return {stacks.begin(), stacks.end()};
}

// A stack is as deep as a document makes it (hundreds of thousands of frames fit in
// one): building, writing and freeing the tree never recurse, so a deep stack cannot
// overflow an HTTP worker's stack.
struct Node {
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node() {
    std::vector<std::unique_ptr<Node>> pending;
    auto take_children = [&pending](Node& n) {
      for (auto& [name, child] : n.children) pending.push_back(std::move(child));
      n.children.clear();
    };
    take_children(*this);
    while (!pending.empty()) {
      std::unique_ptr<Node> n = std::move(pending.back());
      pending.pop_back();
      take_children(*n);
    }  // each node is freed childless
  }

  Sums sums;
  std::map<std::string_view, std::unique_ptr<Node>> children;
};

// Children by hang time, largest first (ties keep name order).
std::vector<std::pair<std::string_view, const Node*>> SortedChildren(const Node& n) {
  std::vector<std::pair<std::string_view, const Node*>> kids;
  kids.reserve(n.children.size());
  for (const auto& [k, child] : n.children) kids.emplace_back(k, child.get());
  std::stable_sort(kids.begin(), kids.end(),
                   [](const auto& a, const auto& b) { return a.second->sums.hang_us > b.second->sums.hang_us; });
  return kids;
}

void WriteTree(JsonWriter& w, const Node& root) {
  struct Open {
    std::vector<std::pair<std::string_view, const Node*>> children;
    size_t next = 0;
  };
  auto open = [&w](std::string_view name, const Node& n) {
    w.BeginObject();
    w.Key("name").String(name);
    w.Key("hang_ms").Double(static_cast<double>(n.sums.hang_us) / 1000.0);
    w.Key("hang_count").Int(n.sums.hang_count);
    w.Key("children").BeginArray();
    return Open{SortedChildren(n)};
  };
  std::vector<Open> path;
  path.push_back(open("(root)", root));
  while (!path.empty()) {
    Open& top = path.back();
    if (top.next == top.children.size()) {
      w.EndArray();
      w.EndObject();
      path.pop_back();
      continue;
    }
    const auto [name, child] = top.children[top.next++];
    path.push_back(open(name, *child));  // `top` is not used past this point
  }
}

}  // namespace

std::string FlamegraphTreeJson(const Snapshot& snap, const Query& q) {
  Node root;
  for (const auto& [stack, stack_sums] : SelectedStacks(snap, q)) {
    Node* n = &root;
    auto add = [&sums = stack_sums](Node* node) {  // init-capture: clang 14 cannot capture a binding
      node->sums.hang_us += sums.hang_us;
      node->sums.hang_count += sums.hang_count;
    };
    add(n);
    for (Sym frame : snap.symbols->Frames(stack)) {
      auto& child = n->children[snap.Text(frame)];
      if (!child) child = std::make_unique<Node>();
      n = child.get();
      add(n);
    }
  }
  JsonWriter w;
  WriteTree(w, root);
  return w.Take();
}

std::string FlamegraphCollapsed(const Snapshot& snap, const Query& q) {
  std::vector<std::pair<StackId, Sums>> stacks = SelectedStacks(snap, q);
  std::sort(stacks.begin(), stacks.end(), [&snap](const auto& a, const auto& b) {
    return CompareStacks(a.first, b.first, *snap.symbols) < 0;
  });
  std::string out;
  for (const auto& [stack, sums] : stacks) {
    bool first = true;
    for (Sym frame_id : snap.symbols->Frames(stack)) {
      const std::string_view frame = snap.Text(frame_id);
      if (!first) out.push_back(';');
      first = false;
      for (char c : frame) out.push_back(c == ';' || c == '\n' || c == '\r' ? ' ' : c);
    }
    if (first) out += "(empty stack)";
    out.push_back(' ');
    out += std::to_string(std::llround(static_cast<double>(sums.hang_us) / 1000.0));
    out.push_back('\n');
  }
  return out;
}

}  // namespace seismo
