#include "seismo/query/selection.h"

#include <algorithm>

namespace seismo {
namespace {

// Field index of each Dim per table; -1 = the table lacks it, -2 = derived
// from build_id (build_date). Order of Dim: source, channel, os, build_date,
// build_id, product, version, process, thread, signature.
constexpr int kDerived = -2;
constexpr std::array<std::array<int, kDimCount>, kTableCount> kFieldIndex = {{
    {0, 1, 2, 3, -1, -1, -1, -1, -1, -1},               // kUsage
    {-1, 0, 4, kDerived, 3, 1, 2, -1, -1, -1},          // kBuildUsage
    {0, 1, 2, 3, -1, -1, -1, 4, 5, 6},                  // kHangs
    {-1, 0, 4, kDerived, 3, 1, 2, 5, -1, 7},            // kCrashes
}};
constexpr int kBuildIdField = 3;  // in kBuildUsage and kCrashes

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

void SplitKeyInto(std::string_view key, std::vector<std::string_view>& out, size_t max_fields) {
  out.clear();
  size_t start = 0;
  while (true) {
    const size_t sep = out.size() + 1 >= max_fields ? std::string_view::npos : key.find(kKeySep, start);
    if (sep == std::string_view::npos) {
      out.push_back(key.substr(start));
      return;
    }
    out.push_back(key.substr(start, sep - start));
    start = sep + 1;
  }
}

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
  return w;
}

Values ValuesIn(const MergedSeries& s, const WindowSel& w) {
  if (w.window_ms == 0) return s.total.v;
  if (!w.span || *w.span >= s.spans.size()) return Values{};
  return s.spans[*w.span].v;
}

Values PreviousValuesIn(const MergedSeries& s, const WindowSel& w) {
  Values out{};
  if (!w.span || !w.previous || *w.previous >= s.spans.size()) return out;
  for (size_t i = 0; i < kMaxValues; ++i) out[i] = s.spans[*w.previous].v[i] - s.spans[*w.span].v[i];
  return out;
}

const HyperLogLog* InstallsIn(const MergedSeries& s, const WindowSel& w) {
  if (w.window_ms == 0) return &s.total.installs;
  if (!w.span || *w.span >= s.spans.size()) return nullptr;
  return &s.spans[*w.span].installs;
}

std::string_view Field(Table t, const std::vector<std::string_view>& f, Dim d) {
  const int i = kFieldIndex[static_cast<size_t>(t)][static_cast<size_t>(d)];
  if (i == kDerived) {
    if (f.size() <= kBuildIdField) return {};
    return f[kBuildIdField].substr(0, 8);
  }
  if (i < 0 || static_cast<size_t>(i) >= f.size()) return {};
  return f[static_cast<size_t>(i)];
}

bool RowMatches(Table t, const std::vector<std::string_view>& f, const Filters& filters,
                std::initializer_list<Dim> ignore) {
  for (size_t d = 0; d < kDimCount; ++d) {
    const auto& want = filters.value[d];
    if (!want) continue;
    const Dim dim = static_cast<Dim>(d);
    if (std::find(ignore.begin(), ignore.end(), dim) != ignore.end()) continue;
    if (kFieldIndex[static_cast<size_t>(t)][d] == -1) continue;
    if (Field(t, f, dim) != *want) return false;
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
  constexpr int64_t kHourMs = 3'600'000;
  constexpr int64_t kDayMs = 86'400'000;
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

void AddPoints(const MergedSeries& s, const TimeAxis& axis, std::vector<std::array<int64_t, 2>>& into) {
  auto it = std::lower_bound(s.points.begin(), s.points.end(), axis.first,
                             [](const BucketPoint& p, int64_t b) { return p.bucket < b; });
  for (; it != s.points.end() && it->bucket <= axis.last; ++it) {
    const int64_t i = axis.IndexOf(it->bucket);
    if (i < 0) continue;
    into[static_cast<size_t>(i)][0] += it->v[0];
    into[static_cast<size_t>(i)][1] += it->v[1];
  }
}

const Snapshot& EmptySnapshot() {
  static const Snapshot kEmpty;
  return kEmpty;
}

}  // namespace seismo
