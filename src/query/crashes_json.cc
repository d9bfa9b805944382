#include "seismo/query/crashes_json.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <cmath>

#include "seismo/core/json_writer.h"
#include "seismo/core/syms_map.h"
#include "seismo/core/time.h"
#include "seismo/query/replay_output.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

struct SigSums {
  int64_t count = 0;
  int64_t previous = 0;
  int64_t startup = 0;  // in the window
  HyperLogLog installs;
  // The build it was first seen in: the one of its series (under the filters) with the
  // earliest retained event time, whatever the window.
  int64_t first_ms = INT64_MAX;
  Sym first_build = kNoId;
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
  RowFilter filter(snap, Table::kBuildUsage, q.filters);
  for (const SeriesData* s : snap.table(Table::kBuildUsage)) {
    if (filter.Matches(s->key)) usage += ValuesIn(*s, win)[0];
  }
  return usage;
}

// Orders (id tuple, count) pairs by count descending, then by the ids' texts.
template <typename Entry>
void SortByCount(const Snapshot& snap, std::vector<Entry>& entries) {
  std::sort(entries.begin(), entries.end(), [&snap](const Entry& a, const Entry& b) {
    if (a.second != b.second) return a.second > b.second;
    return TextsLess(snap, a.first, b.first);
  });
}

// Signatures with a positive count (of `count_of`), by count descending, signature ascending:
// position i is rank i + 1.
template <typename CountOf>
std::vector<std::pair<std::array<Sym, 1>, int64_t>> Ranked(const Snapshot& snap,
                                                           const absl::flat_hash_map<Sym, SigSums>& sigs,
                                                           CountOf count_of) {
  std::vector<std::pair<std::array<Sym, 1>, int64_t>> out;
  for (const auto& [sig, sums] : sigs) {
    const int64_t c = count_of(sums);
    if (c > 0) out.push_back({{sig}, c});
  }
  SortByCount(snap, out);
  return out;
}

constexpr size_t kTrendBins = 48;

// Each row's crash counts for its sparkline (sparklines=1): the window's time axis from
// its first point with a crash of the selection on, summed into at most kTrendBins
// consecutive groups (point i of n into group i * bins / n).
struct Trends {
  int64_t from_ms = 0;
  size_t bins = 0;
  std::vector<std::vector<int64_t>> rows;  // per row of the answer
};

Trends RowTrends(const Snapshot& snap, const Query& q,
                 const std::vector<std::pair<std::array<Sym, 1>, int64_t>>& rows) {
  const TimeAxis axis = AxisFor(snap, q.window_ms);
  absl::flat_hash_map<Sym, size_t> row_of;
  for (size_t i = 0; i < rows.size(); ++i) row_of[rows[i].first[0]] = i;
  std::vector<std::vector<std::array<int64_t, 2>>> points(rows.size(),
                                                          std::vector<std::array<int64_t, 2>>(axis.size()));
  std::vector<std::array<int64_t, 2>> all(axis.size());
  RowFilter filter(snap, Table::kCrashes, q.filters);
  for (const SeriesData* s : CandidateRows(snap, Table::kCrashes, q.filters)) {
    if (!filter.Matches(s->key)) continue;
    // Left-out signatures do not start the trend: the rows' bins span what they show.
    if (q.exclude != 0 && Excluded(q.exclude, snap.Text(s->key[crash_field::kSignature]))) continue;
    AddPoints(*s, axis, all);
    auto row = row_of.find(s->key[crash_field::kSignature]);
    if (row != row_of.end()) AddPoints(*s, axis, points[row->second]);
  }
  size_t first = 0;
  while (first < all.size() && all[first][0] == 0) ++first;
  Trends out;
  const size_t n = all.size() - first;
  out.bins = std::min(kTrendBins, n);
  if (n > 0) out.from_ms = axis.PointStartMs(first);
  for (const auto& row : points) {
    std::vector<int64_t>& bins = out.rows.emplace_back(out.bins);
    for (size_t i = 0; i < n; ++i) bins[i * out.bins / n] += row[first + i][0];
  }
  return out;
}

}  // namespace

std::string CrashesTopJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  absl::flat_hash_map<Sym, SigSums> sigs;
  int64_t total = 0;
  int64_t previous_total = 0;  // crashes of the selection in the previous window
  int64_t excluded = 0;        // in the window, of the signatures `exclude` leaves out
  absl::flat_hash_set<Sym> excluded_signatures;
  absl::flat_hash_map<Sym, bool> excludes;  // per signature, decided once
  RowFilter filter(snap, Table::kCrashes, q.filters);
  for (const SeriesData* s : CandidateRows(snap, Table::kCrashes, q.filters)) {
    if (!filter.Matches(s->key)) continue;
    const Sym signature = s->key[crash_field::kSignature];
    const Values in_window = ValuesIn(*s, win);
    const int64_t count = in_window[0];
    if (q.exclude != 0) {
      auto [it, added] = excludes.try_emplace(signature, false);
      if (added) it->second = Excluded(q.exclude, snap.Text(signature));
      if (it->second) {
        excluded += count;
        if (count > 0) excluded_signatures.insert(signature);
        continue;
      }
    }
    SigSums& g = sigs[signature];
    // Once the retention evicts a series' oldest bucket its first time is that of the first
    // kept one, which several builds may share: the older build id (they are timestamps) wins.
    const Sym build = s->key[crash_field::kBuildId];
    if (s->first_ms < g.first_ms || (s->first_ms == g.first_ms && g.first_build != kNoId &&
                                     snap.Text(build) < snap.Text(g.first_build))) {
      g.first_ms = s->first_ms;
      g.first_build = build;
    }
    const int64_t previous = PreviousValuesIn(*s, win, in_window)[0];
    if (count == 0 && previous == 0) continue;
    g.count += count;
    g.startup += in_window[1];
    g.previous += previous;
    total += count;
    previous_total += previous;
    if (count > 0) AddInstallsIn(*s, win, g.installs);
  }
  const int64_t usage_ms = SelectedUsage(snap, q, win);
  auto current = Ranked(snap, sigs, [](const SigSums& s) { return s.count; });
  absl::flat_hash_map<Sym, int64_t> previous_rank;
  if (win.previous) {
    auto prev = Ranked(snap, sigs, [](const SigSums& s) { return s.previous; });
    for (size_t i = 0; i < prev.size(); ++i) previous_rank[prev[i].first[0]] = static_cast<int64_t>(i + 1);
  }
  if (current.size() > q.limit) current.resize(q.limit);
  // Right after start the previous window holds nothing: no row is "new" then.
  const bool has_previous = win.previous && previous_total > 0;
  const Trends trends = q.sparklines ? RowTrends(snap, q, current) : Trends{};

  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("total").Int(total);
  w.Key("usage_hours").Double(UsageHours(usage_ms));
  if (win.previous) {
    w.Key("previous_total").Int(previous_total);
  } else {
    w.Key("previous_total").Null();
  }
  if (q.sparklines) {
    w.Key("trend_from").String(trends.bins ? FormatTimestamp(EventTime{trends.from_ms}) : "");
    w.Key("trend_bins").Int(static_cast<int64_t>(trends.bins));
  }
  if (q.exclude != 0) {
    w.Key("excluded").BeginObject();
    w.Key("count").Int(excluded);
    w.Key("signatures").Int(static_cast<int64_t>(excluded_signatures.size()));
    w.EndObject();
  }
  w.Key("rows").BeginArray();
  // Each row while it fits max_answer_bytes (answer_bound.h).
  const size_t written =
      AppendRowsWithin(w, limits.max_bytes, current.size(), [&](size_t i, JsonWriter& out) {
        const Sym sig = current[i].first[0];
        const int64_t count = current[i].second;
        const int64_t rank = static_cast<int64_t>(i + 1);
        out.BeginObject();
        out.Key("rank").Int(rank);
        out.Key("signature").String(snap.Text(sig));
        out.Key("count").Int(count);
        out.Key("share").Double(100.0 * static_cast<double>(count) / static_cast<double>(total));
        out.Key("rate_per_1000h").OptDouble(Per1000Hours(count, usage_ms));
        const SigSums& sums = sigs.at(sig);
        out.Key("installs").Int(Installs(sums.installs, count));
        out.Key("startup_share")
            .Double(100.0 * static_cast<double>(sums.startup) / static_cast<double>(count));
        out.Key("first_build").String(snap.Text(sums.first_build));
        out.Key("first_seen").String(FormatTimestamp(EventTime{sums.first_ms}));
        auto prev = previous_rank.find(sig);
        if (prev != previous_rank.end()) {
          out.Key("previous_rank").Int(prev->second);
          out.Key("rank_change").Int(prev->second - rank);
          out.Key("is_new").Bool(false);
        } else {
          out.Key("previous_rank").Null();
          out.Key("rank_change").Null();
          out.Key("is_new").Bool(has_previous);
        }
        if (q.sparklines) {
          out.Key("trend").BeginArray();
          for (int64_t c : trends.rows[i]) out.Int(c);
          out.EndArray();
        }
        out.EndObject();
      });
  w.EndArray();
  bool truncated = false;
  WriteOmitted(w, "rows_omitted", written, current.size(), truncated);
  w.EndObject();
  return w.Take();
}

std::string CrashesTimeseriesJson(const Snapshot& snap, const Query& q) {
  const TimeAxis axis = AxisFor(snap, q.window_ms);
  std::vector<std::array<int64_t, 2>> crashes(axis.size()), usage(axis.size());
  RowFilter crashes_filter(snap, Table::kCrashes, q.filters);
  for (const SeriesData* s : CandidateRows(snap, Table::kCrashes, q.filters)) {
    if (crashes_filter.Matches(s->key)) AddPoints(*s, axis, crashes);
  }
  RowFilter usage_filter(snap, Table::kBuildUsage, q.filters);
  for (const SeriesData* s : snap.table(Table::kBuildUsage)) {
    if (usage_filter.Matches(s->key)) AddPoints(*s, axis, usage);
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

std::string CrashSignatureJson(const Snapshot& snap, const Query& q, const AnswerLimits& limits) {
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  using IdBuildKey = Syms<4>;               // build_id, version, channel, product
  auto build_of = [](const SeriesKey& k) {  // of a crash or build usage key (selection.h)
    return IdBuildKey{k[crash_field::kBuildId], k[crash_field::kVersion], k[crash_field::kChannel],
                      k[crash_field::kProduct]};
  };
  SymsMap<4, int64_t> by_build;
  SymsMap<1, int64_t> by_os;
  SymsMap<2, int64_t> by_process;  // (process, class)
  int64_t count = 0;
  HyperLogLog installs;
  RowFilter crashes_filter(snap, Table::kCrashes, q.filters);
  for (const SeriesData* s : CandidateRows(snap, Table::kCrashes, q.filters)) {
    if (!crashes_filter.Matches(s->key)) continue;
    const int64_t c = ValuesIn(*s, win)[0];
    if (c == 0) continue;
    const SeriesKey& k = s->key;
    count += c;
    by_build[build_of(k)] += c;
    by_os[{k[crash_field::kOs]}] += c;
    by_process[{k[crash_field::kProcess], k[crash_field::kClass]}] += c;
    AddInstallsIn(*s, win, installs);
  }
  // Usage per build (over the os filter) for the by_build rates.
  SymsMap<4, int64_t> build_usage;
  RowFilter usage_filter(snap, Table::kBuildUsage, q.filters);
  for (const SeriesData* s : snap.table(Table::kBuildUsage)) {
    if (!usage_filter.Matches(s->key)) continue;
    const IdBuildKey k = build_of(s->key);
    if (by_build.contains(k)) build_usage[k] += ValuesIn(*s, win)[0];
  }
  std::vector<std::pair<IdBuildKey, int64_t>> builds(by_build.begin(), by_build.end());
  SortByCount(snap, builds);
  std::vector<std::pair<std::array<Sym, 1>, int64_t>> oses(by_os.begin(), by_os.end());
  SortByCount(snap, oses);
  std::vector<std::pair<std::array<Sym, 2>, int64_t>> procs(by_process.begin(), by_process.end());
  SortByCount(snap, procs);
  if (builds.size() > q.limit) builds.resize(q.limit);
  if (oses.size() > q.limit) oses.resize(q.limit);
  if (procs.size() > q.limit) procs.resize(q.limit);

  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("signature").String(*q.filters[Dim::kSignature]);
  w.Key("count").Int(count);
  w.Key("installs").Int(Installs(installs, count));
  // Each list's rows while they fit max_answer_bytes (answer_bound.h), one list after the other.
  bool truncated = false;
  w.Key("by_build").BeginArray();
  const size_t builds_written =
      AppendRowsWithin(w, limits.max_bytes, builds.size(), [&](size_t i, JsonWriter& out) {
        const auto& [k, c] = builds[i];
        auto u = build_usage.find(k);
        const int64_t usage_ms = u == build_usage.end() ? 0 : u->second;
        out.BeginObject();
        out.Key("build_id").String(snap.Text(k[0]));
        out.Key("version").String(snap.Text(k[1]));
        out.Key("channel").String(snap.Text(k[2]));
        out.Key("product").String(snap.Text(k[3]));
        out.Key("count").Int(c);
        out.Key("usage_hours").Double(UsageHours(usage_ms));
        out.Key("rate_per_1000h").OptDouble(Per1000Hours(c, usage_ms));
        out.EndObject();
      });
  w.EndArray();
  WriteOmitted(w, "by_build_omitted", builds_written, builds.size(), truncated);
  w.Key("by_os").BeginArray();
  const size_t oses_written =
      AppendRowsWithin(w, limits.max_bytes, oses.size(), [&](size_t i, JsonWriter& out) {
        out.BeginObject();
        out.Key("os").String(snap.Text(oses[i].first[0]));
        out.Key("count").Int(oses[i].second);
        out.EndObject();
      });
  w.EndArray();
  WriteOmitted(w, "by_os_omitted", oses_written, oses.size(), truncated);
  w.Key("by_process").BeginArray();
  const size_t procs_written =
      AppendRowsWithin(w, limits.max_bytes, procs.size(), [&](size_t i, JsonWriter& out) {
        out.BeginObject();
        out.Key("process").String(snap.Text(procs[i].first[0]));
        out.Key("class").String(snap.Text(procs[i].first[1]));
        out.Key("count").Int(procs[i].second);
        out.EndObject();
      });
  w.EndArray();
  WriteOmitted(w, "by_process_omitted", procs_written, procs.size(), truncated);
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
