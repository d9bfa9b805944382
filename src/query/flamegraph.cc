#include "seismo/query/flamegraph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "seismo/core/json_writer.h"
#include "seismo/query/hangs_json.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

struct Sums {
  int64_t hang_us = 0;
  int64_t hang_count = 0;
};

// Distinct stacks of the selection (merged over every other dimension).
std::map<std::string_view, Sums> SelectedStacks(const Snapshot& snap, const Query& q) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  const std::string source = HangSource(snap, q);
  std::map<std::string_view, Sums> out;
  const std::string prefix = source + kKeySep;
  std::vector<std::string_view> f;
  for (const auto& [key, s] : snap.table(Table::kHangs)) {
    if (!key.starts_with(prefix)) continue;
    SplitKeyInto(key, f, 8);
    if (f.size() < 8 || !RowMatches(Table::kHangs, f, q.filters)) continue;
    const Values v = ValuesIn(s, win);
    if (v[0] == 0 && v[1] == 0) continue;
    Sums& st = out[f[7]];
    st.hang_us += v[0];
    st.hang_count += v[1];
  }
  return out;
}

struct Node {
  Sums sums;
  std::map<std::string_view, std::unique_ptr<Node>> children;
};

void WriteNode(JsonWriter& w, std::string_view name, const Node& n) {
  w.BeginObject();
  w.Key("name").String(name);
  w.Key("hang_ms").Double(static_cast<double>(n.sums.hang_us) / 1000.0);
  w.Key("hang_count").Int(n.sums.hang_count);
  w.Key("children").BeginArray();
  std::vector<std::pair<std::string_view, const Node*>> kids;
  kids.reserve(n.children.size());
  for (const auto& [k, child] : n.children) kids.emplace_back(k, child.get());
  std::stable_sort(kids.begin(), kids.end(),
                   [](const auto& a, const auto& b) { return a.second->sums.hang_us > b.second->sums.hang_us; });
  for (const auto& [k, child] : kids) WriteNode(w, k, *child);
  w.EndArray();
  w.EndObject();
}

}  // namespace

std::string FlamegraphTreeJson(const Snapshot& snap, const Query& q) {
  Node root;
  for (const auto& [stack, sums] : SelectedStacks(snap, q)) {
    Node* n = &root;
    auto add = [&sums](Node* node) {
      node->sums.hang_us += sums.hang_us;
      node->sums.hang_count += sums.hang_count;
    };
    add(n);
    for (std::string_view frame : SplitStack(stack)) {
      auto& child = n->children[frame];
      if (!child) child = std::make_unique<Node>();
      n = child.get();
      add(n);
    }
  }
  JsonWriter w;
  WriteNode(w, "(root)", root);
  return w.Take();
}

std::string FlamegraphCollapsed(const Snapshot& snap, const Query& q) {
  std::string out;
  for (const auto& [stack, sums] : SelectedStacks(snap, q)) {
    bool first = true;
    for (std::string_view frame : SplitStack(stack)) {
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
