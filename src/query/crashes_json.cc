#include "seismo/query/crashes_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "seismo/core/json_writer.h"
#include "seismo/core/time.h"
#include "seismo/query/replay_output.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

struct SigSums {
  int64_t count = 0;
  int64_t previous = 0;
  HyperLogLog installs;
};

std::optional<double> Per1000Hours(int64_t count, int64_t usage_ms) {
  return PerUsageHour(count * 1'000'000, usage_ms);
}

int64_t Installs(const HyperLogLog& h, int64_t count) {
  return std::min<int64_t>(std::llround(h.Estimate()), count);
}

// Usage (ms) of the selected builds in the window; crash-only filters
// (process, signature) do not narrow the denominator.
int64_t SelectedUsage(const Snapshot& snap, const Query& q, const WindowSel& win) {
  int64_t usage = 0;
  for (const auto& [key, s] : snap.table(Table::kBuildUsage)) {
    auto f = SplitKey(key);
    if (f.size() < 5 || !RowMatches(Table::kBuildUsage, f, q.filters)) continue;
    usage += ValuesIn(s, win)[0];
  }
  return usage;
}

// Signature -> 1-based rank by count descending, signature ascending.
template <typename Map, typename CountOf>
std::vector<std::pair<std::string_view, int64_t>> Ranked(const Map& sigs, CountOf count_of) {
  std::vector<std::pair<std::string_view, int64_t>> out;
  for (const auto& [sig, sums] : sigs) {
    const int64_t c = count_of(sums);
    if (c > 0) out.emplace_back(sig, c);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace

std::string CrashesTopJson(const Snapshot& snap, const Query& q) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  std::map<std::string_view, SigSums> sigs;
  int64_t total = 0;
  for (const auto& [key, s] : snap.table(Table::kCrashes)) {
    auto f = SplitKey(key);
    if (f.size() < 8 || !RowMatches(Table::kCrashes, f, q.filters)) continue;
    const int64_t count = ValuesIn(s, win)[0];
    const int64_t previous = PreviousValuesIn(s, win)[0];
    if (count == 0 && previous == 0) continue;
    SigSums& g = sigs[f[7]];
    g.count += count;
    g.previous += previous;
    total += count;
    if (count > 0) {
      if (const HyperLogLog* h = InstallsIn(s, win)) g.installs.Merge(*h);
    }
  }
  const int64_t usage_ms = SelectedUsage(snap, q, win);
  auto current = Ranked(sigs, [](const SigSums& s) { return s.count; });
  std::map<std::string_view, int64_t> previous_rank;
  if (win.previous) {
    auto prev = Ranked(sigs, [](const SigSums& s) { return s.previous; });
    for (size_t i = 0; i < prev.size(); ++i) previous_rank[prev[i].first] = static_cast<int64_t>(i + 1);
  }
  if (current.size() > q.limit) current.resize(q.limit);

  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("total").Int(total);
  w.Key("usage_hours").Double(UsageHours(usage_ms));
  w.Key("rows").BeginArray();
  for (size_t i = 0; i < current.size(); ++i) {
    const auto& [sig, count] = current[i];
    const int64_t rank = static_cast<int64_t>(i + 1);
    w.BeginObject();
    w.Key("rank").Int(rank);
    w.Key("signature").String(sig);
    w.Key("count").Int(count);
    w.Key("share").Double(100.0 * static_cast<double>(count) / static_cast<double>(total));
    w.Key("rate_per_1000h").OptDouble(Per1000Hours(count, usage_ms));
    w.Key("installs").Int(Installs(sigs.at(sig).installs, count));
    auto prev = previous_rank.find(sig);
    if (prev != previous_rank.end()) {
      w.Key("previous_rank").Int(prev->second);
      w.Key("rank_change").Int(prev->second - rank);
      w.Key("is_new").Bool(false);
    } else {
      w.Key("previous_rank").Null();
      w.Key("rank_change").Null();
      w.Key("is_new").Bool(win.previous.has_value());
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string CrashesTimeseriesJson(const Snapshot& snap, const Query& q) {
  const TimeAxis axis = AxisFor(snap, q.window_ms);
  std::vector<std::array<int64_t, 2>> crashes(axis.size()), usage(axis.size());
  for (const auto& [key, s] : snap.table(Table::kCrashes)) {
    auto f = SplitKey(key);
    if (f.size() < 8 || !RowMatches(Table::kCrashes, f, q.filters)) continue;
    AddPoints(s, axis, crashes);
  }
  for (const auto& [key, s] : snap.table(Table::kBuildUsage)) {
    auto f = SplitKey(key);
    if (f.size() < 5 || !RowMatches(Table::kBuildUsage, f, q.filters)) continue;
    AddPoints(s, axis, usage);
  }
  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("bucket").String(BucketName(axis.PointMs()));
  w.Key("points").BeginArray();
  for (size_t i = 0; i < axis.size(); ++i) {
    w.BeginObject();
    w.Key("t").String(FormatTimestamp(EventTime{axis.PointStartMs(i)}));
    w.Key("count").Int(crashes[i][0]);
    w.Key("usage_hours").Double(UsageHours(usage[i][0]));
    w.Key("rate_per_1000h").OptDouble(Per1000Hours(crashes[i][0], usage[i][0]));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string CrashSignatureJson(const Snapshot& snap, const Query& q) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  using BuildKey = std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>;
  std::map<BuildKey, int64_t> by_build;  // (build_id, version, channel, product)
  std::map<std::string_view, int64_t> by_os;
  std::map<std::pair<std::string_view, std::string_view>, int64_t> by_process;
  int64_t count = 0;
  HyperLogLog installs;
  for (const auto& [key, s] : snap.table(Table::kCrashes)) {
    auto f = SplitKey(key);
    if (f.size() < 8 || !RowMatches(Table::kCrashes, f, q.filters)) continue;
    const int64_t c = ValuesIn(s, win)[0];
    if (c == 0) continue;
    count += c;
    by_build[{f[3], f[2], f[0], f[1]}] += c;
    by_os[f[4]] += c;
    by_process[{f[5], f[6]}] += c;
    if (const HyperLogLog* h = InstallsIn(s, win)) installs.Merge(*h);
  }
  // Usage per build (over the os filter) for the by_build rates.
  std::map<BuildKey, int64_t> build_usage;
  for (const auto& [key, s] : snap.table(Table::kBuildUsage)) {
    auto f = SplitKey(key);
    if (f.size() < 5 || !RowMatches(Table::kBuildUsage, f, q.filters)) continue;
    BuildKey k{f[3], f[2], f[0], f[1]};
    if (by_build.count(k)) build_usage[k] += ValuesIn(s, win)[0];
  }
  auto by_count = [](const auto& a, const auto& b) { return a.second > b.second; };
  std::vector<std::pair<BuildKey, int64_t>> builds(by_build.begin(), by_build.end());
  std::stable_sort(builds.begin(), builds.end(), by_count);
  std::vector<std::pair<std::string_view, int64_t>> oses(by_os.begin(), by_os.end());
  std::stable_sort(oses.begin(), oses.end(), by_count);
  std::vector<std::pair<std::pair<std::string_view, std::string_view>, int64_t>> procs(by_process.begin(),
                                                                                       by_process.end());
  std::stable_sort(procs.begin(), procs.end(), by_count);
  if (builds.size() > q.limit) builds.resize(q.limit);
  if (oses.size() > q.limit) oses.resize(q.limit);
  if (procs.size() > q.limit) procs.resize(q.limit);

  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("signature").String(*q.filters[Dim::kSignature]);
  w.Key("count").Int(count);
  w.Key("installs").Int(Installs(installs, count));
  w.Key("by_build").BeginArray();
  for (const auto& [k, c] : builds) {
    const auto& [build_id, version, channel, product] = k;
    auto u = build_usage.find(k);
    const int64_t usage_ms = u == build_usage.end() ? 0 : u->second;
    w.BeginObject();
    w.Key("build_id").String(build_id);
    w.Key("version").String(version);
    w.Key("channel").String(channel);
    w.Key("product").String(product);
    w.Key("count").Int(c);
    w.Key("usage_hours").Double(UsageHours(usage_ms));
    w.Key("rate_per_1000h").OptDouble(Per1000Hours(c, usage_ms));
    w.EndObject();
  }
  w.EndArray();
  w.Key("by_os").BeginArray();
  for (const auto& [os, c] : oses) {
    w.BeginObject();
    w.Key("os").String(os);
    w.Key("count").Int(c);
    w.EndObject();
  }
  w.EndArray();
  w.Key("by_process").BeginArray();
  for (const auto& [pc, c] : procs) {
    w.BeginObject();
    w.Key("process").String(pc.first);
    w.Key("class").String(pc.second);
    w.Key("count").Int(c);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
