#include "seismo/query/hangs_json.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <tuple>

#include "seismo/core/json_writer.h"
#include "seismo/core/time.h"
#include "seismo/query/replay_output.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

constexpr size_t kTopStacks = 5;

struct Sums {
  int64_t hang_us = 0;
  int64_t hang_count = 0;
};

struct Group {
  std::string process, thread, signature, build_date;
  Sums sums;
  std::unordered_map<std::string_view, Sums> stacks;  // encoded stack -> sums (views into snapshot keys)
};

// Usage (ms) of the selected (source, channel, os, build_date) groups, per build date.
std::map<std::string, int64_t> UsageByDate(const Snapshot& snap, const Query& q, const WindowSel& win,
                                           const std::string& source) {
  std::map<std::string, int64_t> out;
  for (const auto& [key, s] : snap.table(Table::kUsage)) {
    auto f = SplitKey(key);
    if (f.size() < 4 || f[0] != source || !RowMatches(Table::kUsage, f, q.filters)) continue;
    out[std::string(f[3])] += ValuesIn(s, win)[0];
  }
  return out;
}

void WriteRates(JsonWriter& w, const Sums& s, int64_t usage_ms) {
  w.Key("hang_ms").Double(static_cast<double>(s.hang_us) / 1000.0);
  w.Key("hang_count").Int(s.hang_count);
  w.Key("hang_ms_per_hour").OptDouble(PerUsageHour(s.hang_us, usage_ms));
  w.Key("hang_count_per_hour").OptDouble(PerUsageHour(s.hang_count * 1000, usage_ms));
}

}  // namespace

std::string HangSource(const Snapshot& snap, const Query& q) {
  if (q.filters[Dim::kSource]) return *q.filters[Dim::kSource];
  for (const auto& [key, s] : snap.table(Table::kUsage)) {
    if (key.starts_with(std::string("bhr") + kKeySep)) return "bhr";
  }
  return "main";
}

std::string HangsJson(const Snapshot& snap, const Query& q) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  const std::string source = HangSource(snap, q);
  const std::map<std::string, int64_t> usage_by_date = UsageByDate(snap, q, win, source);
  int64_t usage_ms = 0;
  for (const auto& [date, ms] : usage_by_date) usage_ms += ms;

  std::map<std::tuple<std::string_view, std::string_view, std::string_view>, Group> groups;
  const std::string prefix = source + kKeySep;
  std::vector<std::string_view> f;
  for (const auto& [key, s] : snap.table(Table::kHangs)) {
    if (!key.starts_with(prefix)) continue;
    SplitKeyInto(key, f, 8);
    if (f.size() < 8 || !RowMatches(Table::kHangs, f, q.filters)) continue;
    const Values v = ValuesIn(s, win);
    if (v[0] == 0 && v[1] == 0) continue;
    std::tuple<std::string_view, std::string_view, std::string_view> gk;
    switch (q.by) {
      case HangsBy::kSignature: gk = {f[4], f[5], f[6]}; break;
      case HangsBy::kThread: gk = {f[4], f[5], {}}; break;
      case HangsBy::kBuildDate: gk = {f[3], {}, {}}; break;
    }
    Group& g = groups[gk];
    if (q.by == HangsBy::kBuildDate) {
      g.build_date = f[3];
    } else {
      g.process = f[4];
      g.thread = f[5];
      if (q.by == HangsBy::kSignature) g.signature = f[6];
    }
    g.sums.hang_us += v[0];
    g.sums.hang_count += v[1];
    Sums& st = g.stacks[f[7]];
    st.hang_us += v[0];
    st.hang_count += v[1];
  }

  struct Row {
    const Group* g;
    int64_t usage_ms;
    std::optional<double> rate;
  };
  std::vector<Row> rows;
  rows.reserve(groups.size());
  for (const auto& [k, g] : groups) {
    int64_t u = usage_ms;
    if (q.by == HangsBy::kBuildDate) {
      auto it = usage_by_date.find(g.build_date);
      u = it == usage_by_date.end() ? 0 : it->second;
    }
    rows.push_back({&g, u, PerUsageHour(g.sums.hang_us, u)});
  }
  // By hang_ms_per_hour descending, rows without usage last, then by hang ms; ties keep key order.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.rate.has_value() != b.rate.has_value()) return a.rate.has_value();
    if (a.rate && *a.rate != *b.rate) return *a.rate > *b.rate;
    return a.g->sums.hang_us > b.g->sums.hang_us;
  });
  if (rows.size() > q.limit) rows.resize(q.limit);

  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("by").String(q.by == HangsBy::kSignature ? "signature" : q.by == HangsBy::kThread ? "thread" : "build_date");
  w.Key("source").String(source);
  w.Key("usage_hours").Double(UsageHours(usage_ms));
  w.Key("rows").BeginArray();
  for (const Row& r : rows) {
    const Group& g = *r.g;
    w.BeginObject();
    if (q.by == HangsBy::kBuildDate) {
      w.Key("build_date").String(g.build_date);
      w.Key("usage_hours").Double(UsageHours(r.usage_ms));
    } else {
      if (q.by == HangsBy::kSignature) w.Key("signature").String(g.signature);
      w.Key("thread").String(g.thread);
      w.Key("process").String(g.process);
    }
    WriteRates(w, g.sums, r.usage_ms);
    // Top stacks by hang ms, ties by stack text: the hash map's order never shows.
    std::vector<std::pair<std::string_view, Sums>> stacks(g.stacks.begin(), g.stacks.end());
    const size_t top = std::min(kTopStacks, stacks.size());
    std::partial_sort(stacks.begin(), stacks.begin() + static_cast<std::ptrdiff_t>(top), stacks.end(),
                      [](const auto& a, const auto& b) {
                        return a.second.hang_us != b.second.hang_us ? a.second.hang_us > b.second.hang_us
                                                                    : a.first < b.first;
                      });
    stacks.resize(top);
    w.Key("stacks").BeginArray();
    for (const auto& [stack, sums] : stacks) {
      w.BeginObject();
      w.Key("stack").BeginArray();
      for (std::string_view frame : SplitStack(stack)) w.String(frame);
      w.EndArray();
      w.Key("hang_ms").Double(static_cast<double>(sums.hang_us) / 1000.0);
      w.Key("hang_count").Int(sums.hang_count);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string HangsTimeseriesJson(const Snapshot& snap, const Query& q) {
  const std::string source = HangSource(snap, q);
  const TimeAxis axis = AxisFor(snap, q.window_ms);
  std::vector<std::array<int64_t, 2>> hangs(axis.size()), usage(axis.size());
  for (const auto& [key, s] : snap.table(Table::kHangs)) {
    auto f = SplitKey(key);
    if (f.size() < 8 || f[0] != source || !RowMatches(Table::kHangs, f, q.filters)) continue;
    AddPoints(s, axis, hangs);
  }
  for (const auto& [key, s] : snap.table(Table::kUsage)) {
    auto f = SplitKey(key);
    if (f.size() < 4 || f[0] != source || !RowMatches(Table::kUsage, f, q.filters)) continue;
    AddPoints(s, axis, usage);
  }
  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("bucket").String(BucketName(axis.PointMs()));
  w.Key("source").String(source);
  w.Key("points").BeginArray();
  for (size_t i = 0; i < axis.size(); ++i) {
    w.BeginObject();
    w.Key("t").String(FormatTimestamp(EventTime{axis.PointStartMs(i)}));
    w.Key("hang_ms").Double(static_cast<double>(hangs[i][0]) / 1000.0);
    w.Key("hang_count").Int(hangs[i][1]);
    w.Key("usage_hours").Double(UsageHours(usage[i][0]));
    w.Key("hang_ms_per_hour").OptDouble(PerUsageHour(hangs[i][0], usage[i][0]));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
