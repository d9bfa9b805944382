#include "seismo/query/releases_json.h"

#include <algorithm>
#include <optional>
#include <type_traits>

#include "seismo/core/time.h"
#include "seismo/query/replay_output.h"

namespace seismo {
namespace {

// The classes a release line carries (the Overview's columns, and gpu).
constexpr CrashClass kLineClasses[] = {CrashClass::kParent, CrashClass::kContent,
                                       CrashClass::kContentShutdown, CrashClass::kGpu};
// Lines are drawn for at most this many hours of a build's age (the default retention).
constexpr int64_t kMaxLineHours = 14 * 24;

std::optional<double> CrashRate(int64_t count, int64_t usage_ms) {
  return PerUsageHour(count * 1'000'000, usage_ms);  // crashes per 1000 usage hours
}
std::optional<double> Ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || !(*b > 0)) return std::nullopt;
  return *a / *b;
}
std::optional<double> HangMsPerHour(const HangCounts& c) { return PerUsageHour(c.hang_us, c.usage_ms); }

void WriteCrashTotals(JsonWriter& w, const CrashTotals& t) {
  w.BeginObject();
  w.Key("usage_hours").Double(UsageHours(t.usage_ms));
  w.Key("crashes").BeginObject();
  for (size_t c = 0; c < kCrashClassCount; ++c)
    w.Key(CrashClassName(static_cast<CrashClass>(c))).Int(t.by_class[c]);
  w.Key("startup").Int(t.startup);
  w.Key("total").Int(t.total);
  w.EndObject();
  w.Key("crash_rate_per_1000h").BeginObject();
  for (size_t c = 0; c < kCrashClassCount; ++c) {
    w.Key(CrashClassName(static_cast<CrashClass>(c))).OptDouble(CrashRate(t.by_class[c], t.usage_ms));
  }
  w.Key("startup").OptDouble(CrashRate(t.startup, t.usage_ms));
  w.Key("total").OptDouble(CrashRate(t.total, t.usage_ms));
  w.EndObject();
  w.EndObject();
}

void WriteCrashRatios(JsonWriter& w, const CrashTotals& a, const CrashTotals& b) {
  w.BeginObject();
  for (size_t c = 0; c < kCrashClassCount; ++c) {
    w.Key(CrashClassName(static_cast<CrashClass>(c)))
        .OptDouble(Ratio(CrashRate(a.by_class[c], a.usage_ms), CrashRate(b.by_class[c], b.usage_ms)));
  }
  w.Key("startup").OptDouble(Ratio(CrashRate(a.startup, a.usage_ms), CrashRate(b.startup, b.usage_ms)));
  w.Key("total").OptDouble(Ratio(CrashRate(a.total, a.usage_ms), CrashRate(b.total, b.usage_ms)));
  w.EndObject();
}

void WriteHangCounts(JsonWriter& w, const HangCounts& c) {
  w.BeginObject();
  w.Key("usage_hours").Double(UsageHours(c.usage_ms));
  w.Key("hang_ms").Double(static_cast<double>(c.hang_us) / 1000.0);
  w.Key("hang_count").Int(c.hang_count);
  w.Key("hang_ms_per_hour").OptDouble(HangMsPerHour(c));
  w.Key("hang_count_per_hour").OptDouble(PerUsageHour(c.hang_count * 1000, c.usage_ms));
  w.EndObject();
}

void WriteStrings(JsonWriter& w, const std::vector<std::string>& items) {
  w.BeginArray();
  for (const std::string& s : items) w.String(s);
  w.EndArray();
}

// Hours of a build's life up to `end_ms` (its first hour counted), at most kMaxLineHours.
int64_t LifeHours(int64_t first_ms, int64_t end_ms) {
  if (first_ms == INT64_MAX || end_ms < first_ms) return 0;
  return std::min(kMaxLineHours, FloorDiv(end_ms, kHourMs) - FloorDiv(first_ms, kHourMs) + 1);
}

// Earlier builds of builds[at]'s channel, newest first: its baselines when it has a
// comparison, else (for context) up to policy.baseline_builds earlier builds.
template <typename Build>
std::vector<size_t> EarlierOfChannel(const std::vector<Build>& builds, size_t at, size_t n) {
  std::vector<size_t> out;
  for (size_t i = at; i-- > 0 && out.size() < n;) {
    if (builds[i].channel != builds[at].channel) break;
    out.push_back(i);
  }
  return out;
}

template <typename Build>
size_t FindBuild(const Snapshot& snap, const std::vector<Build>& builds, std::string_view text) {
  for (size_t i = 0; i < builds.size(); ++i) {
    if (snap.Text(builds[i].build) == text) return i;
  }
  return builds.size();
}

// Writes "comparison": null, or the baseline builds, both sides (`side`) and `ratio`.
template <typename Comparison, typename Side, typename Ratios>
void WriteComparison(JsonWriter& w, const std::optional<Comparison>& cmp, const Side& side,
                     const Ratios& ratio) {
  w.Key("comparison");
  if (!cmp) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Key("baseline_builds");
  WriteStrings(w, cmp->baseline_builds);
  w.Key("build");
  side(cmp->build);
  w.Key("baseline");
  side(cmp->baseline);
  w.Key("ratio");
  ratio(*cmp);
  w.EndObject();
}

// Writes "lines": the build, then its baselines (their build texts `baseline_ids`, newest
// first) — or, without a comparison, the builds just before it on its channel, for
// context — each with its build, role, first ping and the points `points(build)` writes.
template <typename Build, typename Points>
void WriteLines(JsonWriter& w, const Snapshot& snap, const std::vector<Build>& builds, size_t at,
                const std::vector<std::string>* baseline_ids, const BaselinePolicy& policy,
                const Points& points) {
  std::vector<std::pair<size_t, std::string_view>> lines = {{at, "build"}};
  if (baseline_ids != nullptr) {
    for (const std::string& id : *baseline_ids) lines.emplace_back(FindBuild(snap, builds, id), "baseline");
  } else {
    for (size_t i : EarlierOfChannel(builds, at, static_cast<size_t>(std::max(0, policy.baseline_builds)))) {
      lines.emplace_back(i, "earlier");
    }
  }
  w.Key("lines").BeginArray();
  for (const auto& [i, role] : lines) {
    const Build& b = builds[i];
    w.BeginObject();
    if constexpr (std::is_same_v<Build, CrashBuild>) {
      w.Key("build_id").String(snap.Text(b.build));
      w.Key("version").String(snap.Text(b.version));
    } else {
      w.Key("build_date").String(snap.Text(b.build));
    }
    w.Key("role").String(role);
    w.Key("first_seen").String(FormatTimestamp(EventTime{b.first_ms}));
    w.Key("points").BeginArray();
    points(b);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void WriteCrashes(JsonWriter& w, const Snapshot& snap, const BuildIndex& index, size_t at,
                  const BaselinePolicy& policy, SignatureScope signature) {
  const CrashBuild& build = index.crash_builds[at];
  const std::optional<JudgedAge> age = CrashBuildAge(snap, build);
  const std::optional<CrashComparison> cmp = CompareCrashBuild(snap, index, at, policy, signature);
  const int64_t end = CrashWorldTime(snap);
  w.BeginObject();
  w.Key("build_id").String(snap.Text(build.build));
  w.Key("version").String(snap.Text(build.version));
  w.Key("first_seen").String(FormatTimestamp(EventTime{build.first_ms}));
  if (age) {
    w.Key("age_hours").Int(age->age_hours);
    w.Key("judged_to").String(FormatTimestamp(EventTime{age->end_ms}));
  } else {
    w.Key("age_hours").Null();
    w.Key("judged_to").Null();
  }
  WriteComparison(
      w, cmp, [&w](const CrashTotals& t) { WriteCrashTotals(w, t); },
      [&w](const CrashComparison& c) { WriteCrashRatios(w, c.build, c.baseline); });
  WriteLines(
      w, snap, index.crash_builds, at, cmp ? &cmp->baseline_builds : nullptr, policy,
      [&](const CrashBuild& b) {
        CrashCounts cumulative;
        int64_t k = 0;
        for (const CrashCounts& hour : CrashCountsByAge(snap, b, LifeHours(b.first_ms, end), signature)) {
          cumulative.Add(hour);
          const CrashTotals t = CrashTotals::Of(cumulative);
          w.BeginObject();
          w.Key("age_hours").Int(++k);
          w.Key("usage_hours").Double(UsageHours(t.usage_ms));
          w.Key("crashes").Int(t.total);
          w.Key("crash_rate_per_1000h").BeginObject();
          w.Key("total").OptDouble(CrashRate(t.total, t.usage_ms));
          for (CrashClass c : kLineClasses) {
            w.Key(CrashClassName(c)).OptDouble(CrashRate(t.by_class[static_cast<size_t>(c)], t.usage_ms));
          }
          w.Key("startup").OptDouble(CrashRate(t.startup, t.usage_ms));
          w.EndObject();
          w.EndObject();
        }
      });
  w.EndObject();
}

void WriteHangs(JsonWriter& w, const Snapshot& snap, const BuildIndex& index, size_t at, Sym source,
                const BaselinePolicy& policy, SignatureScope signature) {
  const HangBuild& build = index.hang_builds[at];
  const std::optional<HangComparison> cmp = CompareHangBuild(snap, index, at, source, policy, signature);
  w.BeginObject();
  w.Key("build_date").String(snap.Text(build.build));
  w.Key("source").String(snap.Text(source));
  w.Key("first_seen").String(FormatTimestamp(EventTime{build.first_ms}));
  w.Key("age_hours").Int(HangBuildAge(snap, build).age_hours);
  WriteComparison(
      w, cmp, [&w](const HangCounts& c) { WriteHangCounts(w, c); },
      [&w](const HangComparison& c) {
        w.OptDouble(Ratio(HangMsPerHour(c.build), HangMsPerHour(c.baseline)));
      });
  WriteLines(w, snap, index.hang_builds, at, cmp ? &cmp->baseline_builds : nullptr, policy,
             [&](const HangBuild& b) {
               HangCounts cumulative;
               int64_t k = 0;
               for (const HangCounts& hour :
                    HangCountsByAge(b, source, LifeHours(b.first_ms, snap.stream_time_ms), signature)) {
                 cumulative.Add(hour);
                 w.BeginObject();
                 w.Key("age_hours").Int(++k);
                 w.Key("usage_hours").Double(UsageHours(cumulative.usage_ms));
                 w.Key("hang_ms_per_hour").OptDouble(HangMsPerHour(cumulative));
                 w.Key("hang_count_per_hour")
                     .OptDouble(PerUsageHour(cumulative.hang_count * 1000, cumulative.usage_ms));
                 w.EndObject();
               }
             });
  w.EndObject();
}

}  // namespace

std::string ReleasesJson(const Snapshot& snap, const Query& q, const BaselinePolicy& policy) {
  const BuildIndex& index = snap.Builds();
  const std::string& channel = *q.filters[Dim::kChannel];
  const std::optional<std::string>& build_id = q.filters[Dim::kBuildId];
  const std::optional<std::string>& build_date = q.filters[Dim::kBuildDate];
  // The build asked for, else the channel's newest (builds are in (channel, build) text order).
  std::optional<size_t> crash_at;
  for (size_t i = 0; i < index.crash_builds.size(); ++i) {
    const CrashBuild& b = index.crash_builds[i];
    if (snap.Text(b.channel) != channel) continue;
    const std::string_view id = snap.Text(b.build);
    if (build_id ? id == *build_id : (!build_date || id.starts_with(*build_date))) crash_at = i;
  }
  const std::string_view date = build_date ? std::string_view(*build_date)
                                : build_id ? std::string_view(*build_id).substr(0, 8)
                                : crash_at ? snap.Text(index.crash_builds[*crash_at].build).substr(0, 8)
                                           : std::string_view();
  const std::optional<size_t> hang_at = FindHangBuild(snap, index, channel, date);
  // A signature narrows both sides to its crash reports and its hangs; one nobody has
  // (kNoId) leaves them empty.
  SignatureScope signature;
  if (const std::optional<std::string>& s = q.filters[Dim::kSignature]) {
    signature = snap.symbols != nullptr ? snap.symbols->text().Find(*s).value_or(kNoId) : kNoId;
  }
  JsonWriter w;
  w.BeginObject();
  w.Key("channel").String(channel);
  if (q.filters[Dim::kSignature]) w.Key("signature").String(*q.filters[Dim::kSignature]);
  w.Key("stream_time")
      .String(snap.stream_time_ms == INT64_MIN ? std::string()
                                               : FormatTimestamp(EventTime{snap.stream_time_ms}));
  w.Key("policy").BeginObject();
  w.Key("baseline_builds").Int(policy.baseline_builds);
  w.Key("min_baseline_builds").Int(policy.min_baseline_builds);
  w.Key("min_baseline_usage_hours").Double(policy.min_baseline_usage_hours);
  w.Key("age_matched").Bool(policy.age_matched);
  w.EndObject();
  w.Key("crashes");
  if (crash_at) {
    WriteCrashes(w, snap, index, *crash_at, policy, signature);
  } else {
    w.Null();
  }
  w.Key("hangs");
  const std::optional<Sym> source =
      hang_at ? ShownHangSource(snap, index.hang_builds[*hang_at], q.filters[Dim::kSource]) : std::nullopt;
  if (hang_at && source) {
    WriteHangs(w, snap, index, *hang_at, *source, policy, signature);
  } else {
    w.Null();
  }
  w.EndObject();
  return w.Take();
}

// ------------------------------------------------------------------ BuildComparisons

BuildComparisons::BuildComparisons(const Snapshot& snap, const BaselinePolicy& policy)
    : snap_(snap), policy_(policy), index_(snap.Builds()) {
  for (size_t i = 0; i < index_.crash_builds.size(); ++i) {
    crash_at_[{index_.crash_builds[i].channel, index_.crash_builds[i].build}] = i;
  }
  for (size_t i = 0; i < index_.hang_builds.size(); ++i) {
    hang_at_[{index_.hang_builds[i].channel, std::string(snap.Text(index_.hang_builds[i].build))}] = i;
  }
}

void BuildComparisons::Write(JsonWriter& w, Sym channel, Sym build_id) const {
  w.BeginObject();
  w.Key("crashes");
  const auto crash = crash_at_.find({channel, build_id});
  const std::optional<CrashComparison> cmp =
      crash == crash_at_.end() ? std::nullopt : CompareCrashBuild(snap_, index_, crash->second, policy_);
  if (cmp) {
    const std::optional<double> rate = CrashRate(cmp->build.total, cmp->build.usage_ms);
    const std::optional<double> base = CrashRate(cmp->baseline.total, cmp->baseline.usage_ms);
    w.BeginObject();
    w.Key("age_hours").Int(cmp->age.age_hours);
    w.Key("baseline_builds");
    WriteStrings(w, cmp->baseline_builds);
    w.Key("crash_rate_per_1000h").OptDouble(rate);
    w.Key("baseline_crash_rate_per_1000h").OptDouble(base);
    w.Key("ratio").OptDouble(Ratio(rate, base));
    w.EndObject();
  } else {
    w.Null();
  }
  // The hang rate of the build's date, by the source the row shows (bhr when it has it).
  w.Key("hangs");
  const auto hang_build = hang_at_.find({channel, std::string(snap_.Text(build_id).substr(0, 8))});
  const std::optional<Sym> source =
      hang_build == hang_at_.end()
          ? std::nullopt
          : ShownHangSource(snap_, index_.hang_builds[hang_build->second], std::nullopt);
  const std::optional<HangComparison> hang =
      source ? CompareHangBuild(snap_, index_, hang_build->second, *source, policy_) : std::nullopt;
  if (hang) {
    w.BeginObject();
    w.Key("source").String(snap_.Text(*source));
    w.Key("age_hours").Int(hang->age.age_hours);
    w.Key("baseline_build_dates");
    WriteStrings(w, hang->baseline_builds);
    w.Key("hang_ms_per_hour").OptDouble(HangMsPerHour(hang->build));
    w.Key("baseline_hang_ms_per_hour").OptDouble(HangMsPerHour(hang->baseline));
    w.Key("ratio").OptDouble(Ratio(HangMsPerHour(hang->build), HangMsPerHour(hang->baseline)));
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
}

}  // namespace seismo
