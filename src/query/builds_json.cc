#include "seismo/query/builds_json.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "seismo/aggregate/subprocess_crashes.h"
#include "seismo/core/json_writer.h"
#include "seismo/core/syms_map.h"
#include "seismo/core/time.h"
#include "seismo/query/build_date_sums.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/releases_json.h"
#include "seismo/query/replay_output.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

// Crash classes in output order; gpu, plugin and gmplugin also count main pings'
// SUBPROCESS_CRASHES_WITH_DUMP (SubprocessCrashCount: the larger, never the sum).
constexpr std::array<std::string_view, 10> kClasses = {"parent", "content", "content_shutdown", "gpu", "rdd",
                                                       "socket", "utility", "gmplugin", "plugin", "other"};
constexpr size_t kGpu = 3, kGmplugin = 7, kPlugin = 8;

struct BuildRow {
  int64_t usage_ms = 0;
  int64_t pings = 0;
  std::array<int64_t, kClasses.size()> crashes{};     // crash reports
  std::array<int64_t, kClasses.size()> main_pings{};  // SUBPROCESS_CRASHES_WITH_DUMP (gpu, plugin, gmplugin)
  int64_t startup = 0;
  int64_t first_ms = INT64_MAX;  // the earliest event time its series still hold
};

using BuildKey = Syms<4>;  // channel, product, version, build_id
// (source, channel, build_date): build_date is a usage field and a prefix of a build id.
using DateKey = std::tuple<std::string_view, std::string_view, std::string_view>;

// kBuildUsage and kCrashes keys start with the same fields (selection.h).
BuildKey BuildOf(const SeriesKey& k) {
  return {k[build_field::kChannel], k[build_field::kProduct], k[build_field::kVersion],
          k[build_field::kBuildId]};
}

// The installs behind a build over its retained life (ADR 0031): those its main pings came
// from, and those that crashed, by class of crash report; `any` also holds the installs whose
// main pings reported sub-process crashes.
struct Affected {
  HyperLogLog active;
  std::array<HyperLogLog, kClasses.size()> crashed;
  HyperLogLog any;
};

int64_t Estimate(const HyperLogLog& h) { return std::llround(h.Estimate()); }

// "affected_installs": the share of the build's installs that crashed, by class — Sentry's
// crash-free users turned round. The denominator is every install seen, in main pings or
// crashing; null when none of its documents carried one.
void WriteAffected(JsonWriter& w, const Affected& a) {
  HyperLogLog seen = a.active;
  seen.Merge(a.any);
  const int64_t installs = seen.empty() ? 0 : Estimate(seen);
  auto share = [installs](int64_t n) {
    return installs > 0 ? std::optional<double>(100.0 * static_cast<double>(std::min(n, installs)) /
                                                static_cast<double>(installs))
                        : std::nullopt;
  };
  w.BeginObject();
  w.Key("installs");
  installs > 0 ? w.Int(installs) : w.Null();
  w.Key("crashed").BeginObject();
  for (size_t i = 0; i < kClasses.size(); ++i) w.Key(kClasses[i]).Int(Estimate(a.crashed[i]));
  w.Key("total").Int(Estimate(a.any));
  w.EndObject();
  w.Key("share").BeginObject();
  for (size_t i = 0; i < kClasses.size(); ++i) w.Key(kClasses[i]).OptDouble(share(Estimate(a.crashed[i])));
  w.Key("total").OptDouble(share(Estimate(a.any)));
  w.EndObject();
  w.EndObject();
}

void WriteRate(JsonWriter& w, std::string_view name, int64_t count, int64_t usage_ms) {
  // crashes per 1000 usage hours = count * 1000 / hours
  w.Key(name).OptDouble(PerUsageHour(count * 1'000'000, usage_ms));
}

}  // namespace

std::string BuildsJson(const Snapshot& snap, const Query& q, const BaselinePolicy& policy,
                       const HangRows* shared, const BuildDateSums* kept, const AnswerLimits& limits) {
  const BuildComparisons comparisons(snap, policy);
  const WindowSel win = ResolveWindow(snap, q.window_ms);
  SymsMap<4, BuildRow> rows;
  RowFilter builds_filter(snap, Table::kBuildUsage, q.filters);
  for (const SeriesData* s : snap.table(Table::kBuildUsage)) {
    if (!builds_filter.Matches(s->key)) continue;
    const Values v = ValuesIn(*s, win);
    if (v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0 && v[4] == 0) continue;
    BuildRow& r = rows[BuildOf(s->key)];
    r.first_ms = std::min(r.first_ms, s->first_ms);
    r.usage_ms += v[0];
    r.pings += v[1];
    r.main_pings[kGpu] += v[2];
    r.main_pings[kPlugin] += v[3];
    r.main_pings[kGmplugin] += v[4];
  }
  RowFilter crashes_filter(snap, Table::kCrashes, q.filters);
  for (const SeriesData* s : snap.table(Table::kCrashes)) {
    if (!crashes_filter.Matches(s->key)) continue;
    const Values v = ValuesIn(*s, win);
    if (v[0] == 0) continue;
    BuildRow& r = rows[BuildOf(s->key)];
    r.first_ms = std::min(r.first_ms, s->first_ms);
    auto c = std::find(kClasses.begin(), kClasses.end(), snap.Text(s->key[crash_field::kClass]));
    r.crashes[c == kClasses.end() ? kClasses.size() - 1 : static_cast<size_t>(c - kClasses.begin())] += v[0];
    r.startup += v[1];
  }
  // Hang sums and their usage per (source, channel, build_date); the hang-only
  // filters (process, thread, signature) narrow the numerator only.
  // Summed by the fields' ids (equal texts have equal ids) while the rows are walked, a
  // million at 10⁶ hang series; by text after.
  // From the warm-up's kept sums (build_date_sums.h) when they serve the query: its entries,
  // not the rows.
  SymsMap<3, std::array<int64_t, 3>> by_ids;  // usage_ms, hang_us, hang_count
  RowFilter usage_filter(snap, Table::kUsage, q.filters);
  for (const SeriesData* s : snap.table(Table::kUsage)) {
    if (!usage_filter.Matches(s->key)) continue;
    by_ids[BuildDateOf(s->key)][0] += ValuesIn(*s, win)[0];
  }
  if (kept != nullptr && kept->Serves(win.window_ms, q.filters, snap.symbols)) {
    for (const auto& [ids, sums] : kept->sums()) {
      auto& d = by_ids[ids];
      d[1] += sums.hang_us;
      d[2] += sums.hang_count;
    }
  } else {
    ForEachHangRow(snap, win, q.filters, shared, [&](const SeriesKey& k, const HangSums& v) {
      auto& d = by_ids[BuildDateOf(k)];
      d[1] += v.hang_us;
      d[2] += v.hang_count;
    });
  }
  absl::flat_hash_map<DateKey, std::array<int64_t, 3>> dates;
  for (const auto& [ids, sums] : by_ids) {
    auto& d = dates[DateKey{snap.Text(ids[0]), snap.Text(ids[1]), snap.Text(ids[2])}];
    for (size_t i = 0; i < d.size(); ++i) d[i] += sums[i];
  }

  std::vector<const std::pair<const BuildKey, BuildRow>*> order;
  order.reserve(rows.size());
  for (const auto& row : rows) order.push_back(&row);
  std::sort(order.begin(), order.end(), [&snap](const auto* a, const auto* b) {
    const std::string_view a_id = snap.Text(a->first[3]), b_id = snap.Text(b->first[3]);
    if (a_id != b_id) return a_id > b_id;  // newest build id first
    return TextsLess(snap, a->first, b->first);
  });
  if (order.size() > q.limit) order.resize(q.limit);

  // Installs, for the rows shown only (a sketch each per class): over the series' lives,
  // under the filters but not the window.
  SymsMap<4, Affected> affected;
  for (const auto* row : order) affected[row->first];
  for (const SeriesData* s : snap.table(Table::kBuildUsage)) {
    if (!builds_filter.Matches(s->key)) continue;
    auto it = affected.find(BuildOf(s->key));
    if (it == affected.end()) continue;
    it->second.active.Merge(s->installs);
    it->second.any.Merge(InstallsOfHours(*s));
  }
  for (const SeriesData* s : snap.table(Table::kCrashes)) {
    if (!crashes_filter.Matches(s->key)) continue;
    auto it = affected.find(BuildOf(s->key));
    if (it == affected.end()) continue;
    auto c = std::find(kClasses.begin(), kClasses.end(), snap.Text(s->key[crash_field::kClass]));
    it->second.crashed[c == kClasses.end() ? kClasses.size() - 1 : static_cast<size_t>(c - kClasses.begin())]
        .Merge(s->installs);
    it->second.any.Merge(s->installs);
  }

  JsonWriter w;
  w.BeginObject();
  w.Key("window").String(WindowName(q.window_ms));
  w.Key("builds").BeginArray();
  // Each row while it fits max_answer_bytes (answer_bound.h).
  const size_t written = AppendRowsWithin(w, limits.max_bytes, order.size(), [&](size_t n, JsonWriter& out) {
    const auto* row = order[n];
    const std::string_view channel = snap.Text(row->first[0]), product = snap.Text(row->first[1]),
                           version = snap.Text(row->first[2]), build_id = snap.Text(row->first[3]);
    BuildRow r = row->second;
    for (size_t i : {kGpu, kPlugin, kGmplugin})
      r.crashes[i] = SubprocessCrashCount(r.crashes[i], r.main_pings[i]);
    const std::string_view build_date = build_id.substr(0, 8);
    out.BeginObject();
    out.Key("channel").String(channel);
    out.Key("product").String(product);
    out.Key("version").String(version);
    out.Key("build_id").String(build_id);
    out.Key("build_date").String(build_date);
    if (r.first_ms == INT64_MAX) {
      out.Key("first_seen").Null();
    } else {
      out.Key("first_seen").String(FormatTimestamp(EventTime{r.first_ms}));
    }
    out.Key("usage_hours").Double(UsageHours(r.usage_ms));
    out.Key("pings").Int(r.pings);
    int64_t total = 0;
    for (int64_t c : r.crashes) total += c;
    out.Key("crashes").BeginObject();
    for (size_t i = 0; i < kClasses.size(); ++i) out.Key(kClasses[i]).Int(r.crashes[i]);
    out.Key("startup").Int(r.startup);
    out.Key("total").Int(total);
    out.EndObject();
    out.Key("crash_rate_per_1000h").BeginObject();
    for (size_t i = 0; i < kClasses.size(); ++i) WriteRate(out, kClasses[i], r.crashes[i], r.usage_ms);
    WriteRate(out, "startup", r.startup, r.usage_ms);
    WriteRate(out, "total", total, r.usage_ms);
    out.EndObject();
    out.Key("affected_installs");
    WriteAffected(out, affected.at(row->first));
    out.Key("at_equal_age");
    comparisons.Write(out, row->first[0], row->first[3]);
    out.Key("hangs").BeginObject();
    for (std::string_view source : {"bhr", "main"}) {
      if (q.filters[Dim::kSource] && *q.filters[Dim::kSource] != source) continue;
      auto it = dates.find(DateKey{source, channel, build_date});
      const std::array<int64_t, 3> d = it == dates.end() ? std::array<int64_t, 3>{} : it->second;
      out.Key(source).BeginObject();
      out.Key("usage_hours").Double(UsageHours(d[0]));
      out.Key("hang_ms_per_hour").OptDouble(PerUsageHour(d[1], d[0]));
      out.Key("hang_count_per_hour").OptDouble(PerUsageHour(d[2] * 1000, d[0]));
      out.EndObject();
    }
    out.EndObject();
    out.EndObject();
  });
  w.EndArray();
  bool truncated = false;
  WriteOmitted(w, "builds_omitted", written, order.size(), truncated);
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
