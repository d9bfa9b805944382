#include "seismo/query/flame_diff.h"

#include <absl/container/flat_hash_map.h>

#include <optional>
#include <vector>

#include "seismo/core/huge_pages.h"
#include "seismo/core/json_writer.h"
#include "seismo/core/time.h"
#include "seismo/query/flame_tree.h"
#include "seismo/query/replay_output.h"

namespace seismo {
namespace {

// A node's JSON besides its name, at most: five doubles of up to 24 characters and two
// integers of up to 20, their keys, "children":[] and the comma before it (322).
constexpr size_t kDiffNodeJsonBytes = 330;

struct Sides {
  int64_t hang_us = 0, hang_count = 0;
  int64_t baseline_us = 0, baseline_count = 0;
};

// Whether a hang series is in the selection: the comparison's source, and the process,
// thread and signature asked for.
bool Selected(const Snapshot& snap, const SeriesData& s, Sym source, const Filters& f) {
  const SeriesKey& key = s.key;
  if (key[hang_field::kSource] != source) return false;
  auto is = [&snap, &key](uint8_t field, const std::optional<std::string>& want) {
    return !want || snap.Text(key[field]) == *want;
  };
  return is(hang_field::kProcess, f[Dim::kProcess]) && is(hang_field::kThread, f[Dim::kThread]) &&
         is(hang_field::kSignature, f[Dim::kSignature]);
}

// Adds a build's selected hang series over `range` into `stacks`, on one side.
void AddSide(const Snapshot& snap, const HangBuild& build, const HourRange& range, Sym source,
             const Filters& f, bool baseline, absl::flat_hash_map<StackId, Sides>& stacks) {
  for (const SeriesData* s : build.hangs) {
    if (!Selected(snap, *s, source, f)) continue;
    const int64_t us = Sum(*s, 0, range), count = Sum(*s, 1, range);
    if (us == 0 && count == 0) continue;
    Sides& x = stacks[s->key[hang_field::kStack]];
    (baseline ? x.baseline_us : x.hang_us) += us;
    (baseline ? x.baseline_count : x.hang_count) += count;
  }
}

std::optional<double> MsPerHour(int64_t us, int64_t usage_ms) { return PerUsageHour(us, usage_ms); }

void WriteSide(JsonWriter& w, int64_t usage_ms, int64_t us, int64_t count) {
  w.BeginObject();
  w.Key("usage_hours").Double(UsageHours(usage_ms));
  w.Key("hang_ms").Double(static_cast<double>(us) / 1000.0);
  w.Key("hang_count").Int(count);
  w.Key("hang_ms_per_hour").OptDouble(MsPerHour(us, usage_ms));
  w.EndObject();
}

}  // namespace

std::string FlamegraphDiffJson(const Snapshot& snap, const Query& q, const BaselinePolicy& policy,
                               const AnswerLimits& limits) {
  const BuildIndex& index = snap.Builds();
  const std::string& channel = *q.filters[Dim::kChannel];
  const std::optional<std::string>& date = q.filters[Dim::kBuildDate];
  const std::optional<size_t> at = FindHangBuild(snap, index, channel, date ? *date : std::string_view());
  Sym source = kNoId;  // none: no build of the channel, or none with usage of that source
  if (at) {
    if (const std::optional<Sym> shown =
            ShownHangSource(snap, index.hang_builds[*at], q.filters[Dim::kSource]))
      source = *shown;
  }
  const std::optional<HangComparison> cmp =
      source != kNoId ? CompareHangBuild(snap, index, *at, source, policy) : std::nullopt;

  JsonWriter w;
  w.BeginObject();
  w.Key("channel").String(channel);
  w.Key("build_date");
  at ? w.String(snap.Text(index.hang_builds[*at].build)) : w.Null();
  w.Key("source");
  source != kNoId ? w.String(snap.Text(source)) : w.Null();
  for (Dim d : {Dim::kProcess, Dim::kThread, Dim::kSignature}) {
    if (q.filters[d]) w.Key(DimName(d)).String(*q.filters[d]);
  }
  if (!cmp) {
    // No build of the channel, none of the source, or too few baseline builds yet.
    w.Key("age_hours");
    at ? w.Int(HangBuildAge(snap, index.hang_builds[*at]).age_hours) : w.Null();
    w.Key("baseline_build_dates").Null();
    w.Key("build").Null();
    w.Key("baseline").Null();
    w.Key("tree").Null();
    w.EndObject();
    return w.Take();
  }
  absl::flat_hash_map<StackId, Sides> by_stack;
  AddSide(snap, index.hang_builds[at.value_or(0)], cmp->age.judged, source, q.filters, false, by_stack);
  for (const Baseline<HangBuild>& base : cmp->baselines) {
    AddSide(snap, *base.build, base.range, source, q.filters, true, by_stack);
  }
  std::vector<FlameStack, HugePageAllocator<FlameStack>> stacks;  // read out of order (huge_pages.h)
  stacks.reserve(by_stack.size());
  Sides total;
  for (const auto& [stack, x] : by_stack) {
    stacks.push_back({snap.symbols->Frames(stack), x.hang_us, x.hang_count, x.baseline_us, x.baseline_count});
    total.hang_us += x.hang_us;
    total.hang_count += x.hang_count;
    total.baseline_us += x.baseline_us;
    total.baseline_count += x.baseline_count;
  }
  const int64_t usage = cmp->build.usage_ms, base_usage = cmp->baseline.usage_ms;
  w.Key("age_hours").Int(cmp->age.age_hours);
  w.Key("baseline_build_dates").BeginArray();
  for (const std::string& d : cmp->baseline_builds) w.String(d);
  w.EndArray();
  w.Key("build");
  WriteSide(w, usage, total.hang_us, total.hang_count);
  w.Key("baseline");
  WriteSide(w, base_usage, total.baseline_us, total.baseline_count);
  w.Key("tree");

  // The tree has what the answer's byte bound leaves after the members before it.
  AnswerLimits tree_limits = limits;
  tree_limits.max_bytes = limits.max_bytes > w.str().size() ? limits.max_bytes - w.str().size() : 0;
  FlameTreeOptions options;
  options.build_weight = usage > 0 ? 1.0 / static_cast<double>(usage) : 0;
  options.baseline_weight = base_usage > 0 ? 1.0 / static_cast<double>(base_usage) : 0;
  options.node_json_bytes = kDiffNodeJsonBytes;
  const FlameTree tree = BuildFlameTree(stacks, *snap.symbols, tree_limits, options);
  WriteFlameTree(w, tree, *snap.symbols, [usage, base_usage](JsonWriter& out, const FlameNode& n) {
    const std::optional<double> now = MsPerHour(n.hang_us, usage),
                                before = MsPerHour(n.baseline_us, base_usage);
    out.Key("hang_ms").Double(static_cast<double>(n.hang_us) / 1000.0);
    out.Key("hang_count").Int(n.hang_count);
    out.Key("hang_ms_per_hour").OptDouble(now);
    out.Key("baseline_hang_ms").Double(static_cast<double>(n.baseline_us) / 1000.0);
    out.Key("baseline_hang_count").Int(n.baseline_count);
    out.Key("baseline_hang_ms_per_hour").OptDouble(before);
    out.Key("delta_ms_per_hour")
        .OptDouble(now && before ? std::optional<double>(*now - *before) : std::nullopt);
  });
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
