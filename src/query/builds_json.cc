#include "seismo/query/builds_json.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "seismo/core/json_writer.h"
#include "seismo/query/replay_output.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

// Crash classes in output order; main pings' SUBPROCESS_CRASHES_WITH_DUMP adds
// to gpu, plugin and gmplugin.
constexpr std::array<std::string_view, 10> kClasses = {"parent", "content", "content_shutdown", "gpu", "rdd",
                                                       "socket", "utility", "gmplugin", "plugin", "other"};
constexpr size_t kGpu = 3, kGmplugin = 7, kPlugin = 8;

struct BuildRow {
  int64_t usage_ms = 0;
  int64_t pings = 0;
  std::array<int64_t, kClasses.size()> crashes{};
  int64_t startup = 0;
};

using BuildKey = std::tuple<std::string, std::string, std::string, std::string>;  // channel, product, version, build_id
using DateKey = std::tuple<std::string, std::string, std::string>;                // source, channel, build_date

void WriteRate(JsonWriter& w, std::string_view name, int64_t count, int64_t usage_ms) {
  // crashes per 1000 usage hours = count * 1000 / hours
  w.Key(name).OptDouble(PerUsageHour(count * 1'000'000, usage_ms));
}

}  // namespace

std::string BuildsJson(const Snapshot& snap, const Query& q) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  std::map<BuildKey, BuildRow> rows;
  for (const auto& [key, s] : snap.table(Table::kBuildUsage)) {
    auto f = SplitKey(key);
    if (f.size() < 5 || !RowMatches(Table::kBuildUsage, f, q.filters)) continue;
    const Values v = ValuesIn(s, win);
    if (v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0 && v[4] == 0) continue;
    BuildRow& r = rows[{std::string(f[0]), std::string(f[1]), std::string(f[2]), std::string(f[3])}];
    r.usage_ms += v[0];
    r.pings += v[1];
    r.crashes[kGpu] += v[2];
    r.crashes[kPlugin] += v[3];
    r.crashes[kGmplugin] += v[4];
  }
  for (const auto& [key, s] : snap.table(Table::kCrashes)) {
    auto f = SplitKey(key);
    if (f.size() < 8 || !RowMatches(Table::kCrashes, f, q.filters)) continue;
    const Values v = ValuesIn(s, win);
    if (v[0] == 0) continue;
    BuildRow& r = rows[{std::string(f[0]), std::string(f[1]), std::string(f[2]), std::string(f[3])}];
    auto c = std::find(kClasses.begin(), kClasses.end(), f[6]);
    r.crashes[c == kClasses.end() ? kClasses.size() - 1 : static_cast<size_t>(c - kClasses.begin())] += v[0];
    r.startup += v[1];
  }
  // Hang sums and their usage per (source, channel, build_date); the hang-only
  // filters (process, thread, signature) narrow the numerator only.
  std::map<DateKey, std::array<int64_t, 3>> dates;  // usage_ms, hang_us, hang_count
  for (const auto& [key, s] : snap.table(Table::kUsage)) {
    auto f = SplitKey(key);
    if (f.size() < 4 || !RowMatches(Table::kUsage, f, q.filters)) continue;
    dates[{std::string(f[0]), std::string(f[1]), std::string(f[3])}][0] += ValuesIn(s, win)[0];
  }
  for (const auto& [key, s] : snap.table(Table::kHangs)) {
    auto f = SplitKey(key);
    if (f.size() < 8 || !RowMatches(Table::kHangs, f, q.filters)) continue;
    const Values v = ValuesIn(s, win);
    auto& d = dates[{std::string(f[0]), std::string(f[1]), std::string(f[3])}];
    d[1] += v[0];
    d[2] += v[1];
  }

  std::vector<const std::pair<const BuildKey, BuildRow>*> order;
  for (const auto& row : rows) order.push_back(&row);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return std::get<3>(a->first) > std::get<3>(b->first);  // newest build id first; ties keep key order
  });
  if (order.size() > q.limit) order.resize(q.limit);

  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("builds").BeginArray();
  for (const auto* row : order) {
    const auto& [channel, product, version, build_id] = row->first;
    const BuildRow& r = row->second;
    const std::string build_date = build_id.substr(0, 8);
    w.BeginObject();
    w.Key("channel").String(channel);
    w.Key("product").String(product);
    w.Key("version").String(version);
    w.Key("build_id").String(build_id);
    w.Key("build_date").String(build_date);
    w.Key("usage_hours").Double(UsageHours(r.usage_ms));
    w.Key("pings").Int(r.pings);
    int64_t total = 0;
    for (int64_t c : r.crashes) total += c;
    w.Key("crashes").BeginObject();
    for (size_t i = 0; i < kClasses.size(); ++i) w.Key(kClasses[i]).Int(r.crashes[i]);
    w.Key("startup").Int(r.startup);
    w.Key("total").Int(total);
    w.EndObject();
    w.Key("crash_rate_per_1000h").BeginObject();
    for (size_t i = 0; i < kClasses.size(); ++i) WriteRate(w, kClasses[i], r.crashes[i], r.usage_ms);
    WriteRate(w, "startup", r.startup, r.usage_ms);
    WriteRate(w, "total", total, r.usage_ms);
    w.EndObject();
    w.Key("hangs").BeginObject();
    for (std::string_view source : {"bhr", "main"}) {
      if (q.filters[Dim::kSource] && *q.filters[Dim::kSource] != source) continue;
      auto it = dates.find({std::string(source), channel, build_date});
      const std::array<int64_t, 3> d = it == dates.end() ? std::array<int64_t, 3>{} : it->second;
      w.Key(source).BeginObject();
      w.Key("usage_hours").Double(UsageHours(d[0]));
      w.Key("hang_ms_per_hour").OptDouble(PerUsageHour(d[1], d[0]));
      w.Key("hang_count_per_hour").OptDouble(PerUsageHour(d[2] * 1000, d[0]));
      w.EndObject();
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
