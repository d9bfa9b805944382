// Per-route request latency histograms for /metrics.
//
// Routes are a fixed list of labels (every endpoint path, "/metrics",
// "/healthz", "/readyz", "static", "other"), so label cardinality never
// depends on what clients request.
//
// Threading: Record() from any request thread (relaxed atomics: each counter
// is independent, and a scrape may see a request in a bucket before it sees
// it in the sum; Prometheus tolerates that). Copy() from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "seismo/query/metrics.h"

namespace seismo {

class LatencyRecorder {
 public:
  static constexpr std::array<double, 12> kBoundsS = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                      0.01,   0.025,   0.05,   0.1,   0.25,   1.0};
  static constexpr std::array<std::string_view, 14> kRoutes = {
      "/api/v1/status",         "/api/v1/builds",         "/api/v1/hangs",
      "/api/v1/hangs/timeseries", "/api/v1/hangs/flamegraph", "/api/v1/crashes/top",
      "/api/v1/crashes/timeseries", "/api/v1/crashes/signature", "/api/v1/alerts",
      "/metrics",               "/healthz",               "/readyz",
      "static",                 "other"};

  // The label a request path is recorded under.
  static size_t RouteOf(std::string_view path);

  void Record(size_t route, double seconds);
  LatencyHistograms Copy() const;

 private:
  struct Route {
    std::array<std::atomic<uint64_t>, kBoundsS.size() + 1> counts{};
    std::atomic<uint64_t> sum_ns{0};
  };
  std::array<Route, kRoutes.size()> routes_;
};

}  // namespace seismo
