#include "seismo/query/selection.h"

#include <algorithm>
#include <utility>

#include "seismo/core/hash.h"

namespace seismo {
namespace {

// Field of each Dim per table; -1 = the table lacks it, -2 = derived from build_id
// (build_date). Order of Dim: source, channel, os, build_date, build_id, product,
// version, process, thread, signature.
constexpr int kNone = -1;
constexpr int kDerived = -2;
constexpr std::array<std::array<int, kDimCount>, kTableCount> kFieldOf = {{
    {usage_field::kSource, usage_field::kChannel, usage_field::kOs, usage_field::kBuildDate, kNone, kNone,
     kNone, kNone, kNone, kNone},
    {kNone, build_field::kChannel, build_field::kOs, kDerived, build_field::kBuildId, build_field::kProduct,
     build_field::kVersion, kNone, kNone, kNone},
    {hang_field::kSource, hang_field::kChannel, hang_field::kOs, hang_field::kBuildDate, kNone, kNone, kNone,
     hang_field::kProcess, hang_field::kThread, hang_field::kSignature},
    {kNone, crash_field::kChannel, crash_field::kOs, kDerived, crash_field::kBuildId, crash_field::kProduct,
     crash_field::kVersion, crash_field::kProcess, kNone, crash_field::kSignature},
}};
constexpr size_t kBuildIdField = build_field::kBuildId;  // in kBuildUsage and kCrashes

int FieldOf(Table t, Dim d) { return kFieldOf[static_cast<size_t>(t)][static_cast<size_t>(d)]; }

}  // namespace

WindowSel ResolveWindow(const Snapshot& snap, int64_t window_ms) {
  WindowSel w;
  w.window_ms = window_ms;
  if (window_ms == 0) return w;
  w.span = snap.SpanIndex(window_ms);
  if (!w.span) {
    w.unknown = true;
    return w;
  }
  int64_t best = 0;
  for (size_t i = 0; i < snap.spans_ms.size(); ++i) {
    const int64_t s = snap.spans_ms[i];
    if (s > window_ms && s <= 2 * window_ms && s > best) {
      best = s;
      w.previous = i;
    }
  }
  w.range = snap.SpanRange(*w.span);
  if (w.previous) w.previous_range = snap.SpanRange(*w.previous);
  return w;
}

Values PreviousValuesIn(const SeriesData& s, const WindowSel& w, const Values& in_window) {
  Values out{};
  if (!w.span || !w.previous) return out;
  const Values longer = SumBuckets(s, w.previous_range);
  for (size_t i = 0; i < kMaxValues; ++i) out[i] = longer[i] - in_window[i];
  return out;
}

void AddInstallsIn(const SeriesData& s, const WindowSel& w, HyperLogLog& into) {
  if (w.window_ms == 0) {
    into.Merge(s.installs);
  } else if (w.span) {
    into.Merge(InstallsOfBuckets(s, w.range));
  }
}

std::string_view DimText(const Snapshot& snap, const SeriesKey& key, Dim d) {
  const int i = FieldOf(key.table, d);
  if (i == kDerived) return snap.Text(key[kBuildIdField]).substr(0, 8);
  if (i == kNone) return {};
  return snap.Text(key[static_cast<size_t>(i)]);
}

bool KnownProcess(const Snapshot& snap, std::string_view process) {
  static constexpr std::array<std::string_view, 8> kNormalised = {"parent", "content", "gpu",      "rdd",
                                                                  "socket", "utility", "gmplugin", "plugin"};
  if (std::find(kNormalised.begin(), kNormalised.end(), process) != kNormalised.end()) return true;
  for (const auto& [table, field] : {std::pair{Table::kHangs, size_t{hang_field::kProcess}},
                                     std::pair{Table::kCrashes, size_t{crash_field::kProcess}}}) {
    // The rows holding that text, where the warm-up made their index (the hang table's, while
    // a view in use filters on a process: ADR 0036): not a walk of 10⁶. Else a walk.
    const auto rows = snap.RowsWithTextHashIfMade(table, field, Hash64(process));
    for (const SeriesData* s : rows ? *rows : snap.table(table)) {
      if (snap.Text(s->key[field]) == process) return true;
    }
  }
  return false;
}

RowFilter::RowFilter(const Snapshot& snap, Table t, const Filters& filters, std::initializer_list<Dim> ignore)
    : snap_(snap) {
  for (size_t d = 0; d < kDimCount; ++d) {
    const auto& want = filters.value[d];
    const Dim dim = static_cast<Dim>(d);
    if (!want || FieldOf(t, dim) == kNone) continue;
    if (std::find(ignore.begin(), ignore.end(), dim) != ignore.end()) continue;
    const int field = FieldOf(t, dim);
    checks_.push_back({dim, field == kDerived ? kBuildIdField : static_cast<size_t>(field), *want});
  }
}

bool RowFilter::Matches(const SeriesKey& key) {
  for (Check& c : checks_) {
    const Sym id = key[c.field];
    if (id != c.last) {
      c.last = id;
      c.last_match = FilterMatches(c.dim, DimText(snap_, key, c.dim), c.want);
    }
    if (!c.last_match) return false;
  }
  return true;
}

size_t TimeAxis::size() const {
  if (last < first) return 0;
  return static_cast<size_t>(FloorDiv(last, step) - FloorDiv(first, step) + 1);
}

int64_t TimeAxis::IndexOf(int64_t b) const {
  if (b < first || b > last) return -1;
  return FloorDiv(b, step) - FloorDiv(first, step);
}

int64_t TimeAxis::PointStartMs(size_t i) const {
  return (FloorDiv(first, step) + static_cast<int64_t>(i)) * step * bucket_ms;
}

TimeAxis AxisFor(const Snapshot& snap, int64_t window_ms) {
  TimeAxis axis;
  axis.bucket_ms = snap.bucket_ms > 0 ? snap.bucket_ms : 60'000;
  int64_t longest = 0;
  for (int64_t w : snap.windows_ms) longest = std::max(longest, w);
  // Points exist only within the longest window: "all" reads all of them.
  const int64_t span = window_ms == 0 ? longest : std::min(window_ms, longest);
  if (snap.stream_time_ms <= 0 || span <= 0) return axis;
  axis.last = FloorDiv(snap.stream_time_ms, axis.bucket_ms);
  axis.first = axis.last - span / axis.bucket_ms + 1;
  if (span > kDayMs && axis.bucket_ms < kHourMs && kHourMs % axis.bucket_ms == 0) {
    axis.step = kHourMs / axis.bucket_ms;
  }
  return axis;
}

void AddPoints(const SeriesData& s, const TimeAxis& axis, std::vector<std::array<int64_t, 2>>& into) {
  if (axis.last < axis.first) return;
  // Past 24 h a point is an hour: an hour wholly inside the axis adds its sum to one point.
  const bool hourly = axis.step * axis.bucket_ms == kHourMs;
  auto add = [&into](int64_t point, const Values& v) {
    into[static_cast<size_t>(point)][0] += v[0];
    into[static_cast<size_t>(point)][1] += v[1];
  };
  const int64_t first_hour = HourOfBucket(axis.first, axis.bucket_ms);
  auto hour = std::lower_bound(s.hours.begin(), s.hours.end(), first_hour,
                               [](const auto& chunk, int64_t h) { return chunk->hour < h; });
  for (; hour != s.hours.end(); ++hour) {
    const HourChunk& chunk = **hour;
    if (chunk.buckets.empty()) continue;
    if (chunk.buckets.front() > axis.last) break;
    if (hourly && chunk.buckets.front() >= axis.first && chunk.buckets.back() <= axis.last) {
      add(axis.IndexOf(chunk.buckets.front()), chunk.sum());
      continue;
    }
    for (size_t i = 0; i < chunk.buckets.size(); ++i) {
      const int64_t point = axis.IndexOf(chunk.buckets[i]);
      if (point >= 0) add(point, chunk.values[i]);
    }
  }
}

namespace {

// CandidateRows' rule 1: the first of these its filters name decides.
struct Indexed {
  Table table;
  Dim dim;
  size_t field;
};
constexpr Indexed kIndexed[] = {
    {Table::kHangs, Dim::kSignature, hang_field::kSignature},
    {Table::kHangs, Dim::kBuildDate, hang_field::kBuildDate},
    {Table::kCrashes, Dim::kSignature, crash_field::kSignature},
    {Table::kCrashes, Dim::kBuildId, crash_field::kBuildId},
};

const Indexed* FirstIndexed(Table t, const Filters& filters) {
  for (const Indexed& i : kIndexed) {
    if (i.table == t && filters[i.dim]) return &i;
  }
  return nullptr;
}

// Rule 2: the fewest rows of the indexes made ahead, if fewer than the table's.
std::optional<std::span<const SeriesData* const>> FewestAhead(const Snapshot& snap, Table t,
                                                              const Filters& filters) {
  std::optional<std::span<const SeriesData* const>> fewest;
  if (t != Table::kHangs) return fewest;
  for (const IndexedAhead& i : kHangFieldsIndexedAhead) {
    if (!filters[i.dim]) continue;
    const auto rows = snap.RowsWithTextHashIfMade(t, i.field, Hash64(*filters[i.dim]));
    if (rows && rows->size() < (fewest ? fewest->size() : snap.table(t).size())) fewest = *rows;
  }
  return fewest;
}

}  // namespace

std::span<const SeriesData* const> CandidateRows(const Snapshot& snap, Table t, const Filters& filters) {
  if (const Indexed* i = FirstIndexed(t, filters)) {
    return snap.RowsWithTextHash(t, i->field, Hash64(*filters[i->dim]));
  }
  return FewestAhead(snap, t, filters).value_or(snap.table(t));
}

std::optional<size_t> RowsFromMadeIndexes(const Snapshot& snap, Table t, const Filters& filters) {
  const Indexed* i = FirstIndexed(t, filters);
  const auto rows = i != nullptr ? snap.RowsWithTextHashIfMade(t, i->field, Hash64(*filters[i->dim]))
                                 : FewestAhead(snap, t, filters);
  return rows ? std::optional<size_t>(rows->size()) : std::nullopt;
}

const Snapshot& EmptySnapshot() {
  static const Snapshot kEmpty;
  return kEmpty;
}

}  // namespace seismo
