#include "seismo/http/latency.h"

#include <algorithm>

namespace seismo {

size_t LatencyRecorder::RouteOf(std::string_view path) {
  auto it = std::find(kRoutes.begin(), kRoutes.end(), path);
  if (it != kRoutes.end()) return static_cast<size_t>(it - kRoutes.begin());
  if (path.starts_with("/api/")) return kRoutes.size() - 1;  // "other"
  return kRoutes.size() - 2;                                 // "static"
}

void LatencyRecorder::Record(size_t route, double seconds) {
  Route& r = routes_[std::min(route, kRoutes.size() - 1)];
  const size_t bucket =
      static_cast<size_t>(std::lower_bound(kBoundsS.begin(), kBoundsS.end(), seconds) - kBoundsS.begin());
  r.counts[bucket].fetch_add(1, std::memory_order_relaxed);
  r.sum_ns.fetch_add(static_cast<uint64_t>(std::max(0.0, seconds) * 1e9), std::memory_order_relaxed);
}

LatencyHistograms LatencyRecorder::Copy() const {
  LatencyHistograms out;
  out.upper_bounds_s.assign(kBoundsS.begin(), kBoundsS.end());
  for (size_t i = 0; i < kRoutes.size(); ++i) {
    LatencyHistograms::Route r;
    r.path = kRoutes[i];
    for (const auto& c : routes_[i].counts) r.counts.push_back(c.load(std::memory_order_relaxed));
    r.sum_s = static_cast<double>(routes_[i].sum_ns.load(std::memory_order_relaxed)) / 1e9;
    out.routes.push_back(std::move(r));
  }
  return out;
}

}  // namespace seismo
