#include "seismo/aggregate/snapshot.h"

#include <algorithm>

namespace seismo {

std::optional<size_t> Snapshot::SpanIndex(int64_t span_ms) const {
  for (size_t i = 0; i < spans_ms.size(); ++i) {
    if (spans_ms[i] == span_ms) return i;
  }
  return std::nullopt;
}

Aggregates Snapshot::Totals() const {
  Aggregates out;
  for (size_t t = 0; t < kTableCount; ++t) {
    for (const auto& [key, s] : tables[t]) out.tables[t][key] = s.total;
  }
  out.duplicates = counters.duplicates;
  out.late_dropped = counters.late_dropped;
  out.folded = counters.folded;
  return out;
}

namespace {

template <typename Point>
void MergePoints(std::vector<Point>& into, const std::vector<Point>& from) {
  if (into.empty()) {
    into = from;
    return;
  }
  std::vector<Point> out;
  out.reserve(into.size() + from.size());
  size_t i = 0, j = 0;
  while (i < into.size() || j < from.size()) {
    if (j == from.size() || (i < into.size() && into[i].bucket < from[j].bucket)) {
      out.push_back(into[i++]);
    } else if (i == into.size() || from[j].bucket < into[i].bucket) {
      out.push_back(from[j++]);
    } else {
      Point p = into[i++];
      for (size_t k = 0; k < p.v.size(); ++k) p.v[k] += from[j].v[k];
      ++j;
      out.push_back(p);
    }
  }
  into = std::move(out);
}

}  // namespace

std::shared_ptr<const Snapshot> MergeSnapshots(
    const std::vector<std::shared_ptr<const ShardSnapshot>>& shards, int64_t bucket_ms,
    const std::vector<int64_t>& windows_ms, int64_t built_at_ms) {
  auto out = std::make_shared<Snapshot>();
  out->built_at_ms = built_at_ms;
  out->bucket_ms = bucket_ms;
  out->windows_ms = windows_ms;
  for (const auto& shard : shards) {
    if (!shard) continue;
    out->stream_time_ms = std::max(out->stream_time_ms, shard->stream_time_ms);
    for (size_t t = 0; t < kTableCount; ++t) {
      out->table_time_ms[t] = std::max(out->table_time_ms[t], shard->table_time_ms[t]);
    }
    if (out->spans_ms.empty()) out->spans_ms = shard->spans_ms;
    out->counters.deltas += shard->counters.deltas;
    out->counters.duplicates += shard->counters.duplicates;
    out->counters.late_dropped += shard->counters.late_dropped;
    out->counters.folded += shard->counters.folded;
    out->counters.dedup_forgotten += shard->counters.dedup_forgotten;
    out->memory_bytes += shard->memory_bytes;
    for (const ShardSnapshot::Series& s : shard->series) {
      MergedSeries& m = out->tables[static_cast<size_t>(s.table)][s.key];
      m.total.Add(s.total);
      if (m.spans.size() < s.spans.size()) m.spans.resize(s.spans.size());
      for (size_t i = 0; i < s.spans.size(); ++i) m.spans[i].Add(s.spans[i]);
      MergePoints(m.points, s.points);
      MergePoints(m.hourly, s.hourly);
      m.first_ms = std::min(m.first_ms, s.first_ms);
    }
  }
  return out;
}

}  // namespace seismo
