#include "seismo/query/replay_output.h"

#include <cmath>

#include "seismo/core/json_writer.h"
#include "seismo/parse/document.h"

namespace seismo {

double UsageHours(int64_t usage_ms) { return static_cast<double>(usage_ms) / 3'600'000.0; }

std::optional<double> PerUsageHour(int64_t amount_thousandths, int64_t usage_ms) {
  if (usage_ms <= 0) return std::nullopt;
  // (amount / 1000) / (usage_ms / 3.6e6) = amount * 3600 / usage_ms
  return static_cast<double>(amount_thousandths) * 3600.0 / static_cast<double>(usage_ms);
}

namespace {

void WriteRecords(JsonWriter& w, const Aggregates& a, const RecordCounts& c) {
  w.Key("records").BeginObject();
  w.Key("main").Uint(c.by_kind[0]);
  w.Key("bhr").Uint(c.by_kind[1]);
  w.Key("crash").Uint(c.by_kind[2]);
  uint64_t rejected_total = 0;
  w.Key("rejected").BeginObject();
  for (size_t i = 0; i < kRejectReasonCount; ++i) {
    auto r = static_cast<RejectReason>(i);
    if (r == RejectReason::kFiltered || c.rejected[i] == 0) continue;
    rejected_total += c.rejected[i];
    w.Key(RejectReasonName(r)).Uint(c.rejected[i]);
  }
  w.EndObject();
  w.Key("rejected_total").Uint(rejected_total);
  w.Key("filtered").Uint(c.rejected[static_cast<size_t>(RejectReason::kFiltered)]);
  w.Key("duplicates").Uint(a.duplicates);
  w.Key("late_dropped").Uint(a.late_dropped);
  w.Key("folded_series").Uint(a.folded);
  w.EndObject();
}

void WriteUsage(JsonWriter& w, const Aggregates& a) {
  w.Key("usage").BeginArray();
  for (const auto& [key, v] : a.table(Table::kUsage)) {
    auto f = SplitKey(key);
    w.BeginObject();
    w.Key("source").String(f[0]);
    w.Key("channel").String(f[1]);
    w.Key("os").String(f[2]);
    w.Key("build_date").String(f[3]);
    w.Key("usage_hours").Double(UsageHours(v.v[0]));
    w.Key("pings").Int(v.v[1]);
    w.EndObject();
  }
  w.EndArray();
}

void WriteBuilds(JsonWriter& w, const Aggregates& a) {
  w.Key("builds").BeginArray();
  for (const auto& [key, v] : a.table(Table::kBuildUsage)) {
    auto f = SplitKey(key);
    w.BeginObject();
    w.Key("channel").String(f[0]);
    w.Key("product").String(f[1]);
    w.Key("version").String(f[2]);
    w.Key("build_id").String(f[3]);
    w.Key("os").String(f[4]);
    w.Key("usage_hours").Double(UsageHours(v.v[0]));
    w.Key("pings").Int(v.v[1]);
    w.Key("subprocess_crashes").BeginObject();
    w.Key("gpu").Int(v.v[2]);
    w.Key("plugin").Int(v.v[3]);
    w.Key("gmplugin").Int(v.v[4]);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

void WriteHangs(JsonWriter& w, const Aggregates& a) {
  const OrderedTable& usage = a.table(Table::kUsage);
  w.Key("hangs").BeginArray();
  for (const auto& [key, v] : a.table(Table::kHangs)) {
    auto f = SplitKey(key);
    std::string usage_key = JoinKey({f[0], f[1], f[2], f[3]});
    auto it = usage.find(usage_key);
    int64_t usage_ms = it == usage.end() ? 0 : it->second.v[0];
    w.BeginObject();
    w.Key("source").String(f[0]);
    w.Key("channel").String(f[1]);
    w.Key("os").String(f[2]);
    w.Key("build_date").String(f[3]);
    w.Key("process").String(f[4]);
    w.Key("thread").String(f[5]);
    w.Key("signature").String(f[6]);
    w.Key("stack").BeginArray();
    for (std::string_view frame : SplitStack(f[7])) w.String(frame);
    w.EndArray();
    w.Key("hang_ms").Double(static_cast<double>(v.v[0]) / 1000.0);
    w.Key("hang_count").Int(v.v[1]);
    w.Key("hang_ms_per_hour").OptDouble(PerUsageHour(v.v[0], usage_ms));
    w.Key("hang_count_per_hour").OptDouble(PerUsageHour(v.v[1] * 1000, usage_ms));
    w.EndObject();
  }
  w.EndArray();
}

void WriteCrashes(JsonWriter& w, const Aggregates& a) {
  const OrderedTable& builds = a.table(Table::kBuildUsage);
  w.Key("crashes").BeginArray();
  for (const auto& [key, v] : a.table(Table::kCrashes)) {
    auto f = SplitKey(key);
    std::string build_key = JoinKey({f[0], f[1], f[2], f[3], f[4]});
    auto it = builds.find(build_key);
    int64_t usage_ms = it == builds.end() ? 0 : it->second.v[0];
    w.BeginObject();
    w.Key("channel").String(f[0]);
    w.Key("product").String(f[1]);
    w.Key("version").String(f[2]);
    w.Key("build_id").String(f[3]);
    w.Key("os").String(f[4]);
    w.Key("process").String(f[5]);
    w.Key("class").String(f[6]);
    w.Key("signature").String(f[7]);
    w.Key("count").Int(v.v[0]);
    w.Key("startup_count").Int(v.v[1]);
    w.Key("installs").Int(static_cast<int64_t>(std::llround(v.installs.Estimate())));
    // crashes per 1000 usage hours = count / (hours / 1000)
    w.Key("rate_per_1000h").OptDouble(PerUsageHour(v.v[0] * 1000 * 1000, usage_ms));
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string ReplayOutputJson(const Aggregates& aggregates, const RecordCounts& counts,
                             const std::string& alerts_json, int indent) {
  JsonWriter w(indent);
  w.BeginObject();
  WriteRecords(w, aggregates, counts);
  WriteUsage(w, aggregates);
  WriteBuilds(w, aggregates);
  WriteHangs(w, aggregates);
  WriteCrashes(w, aggregates);
  w.Key("alerts").Raw(alerts_json);
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
