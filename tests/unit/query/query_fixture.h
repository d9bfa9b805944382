// A hand-built world for the query tests: deltas applied to one ShardState at
// chosen event times, merged into a Snapshot exactly as the daemon does. Keys are
// named by their texts and interned into the world's Symbols, which every snapshot
// it builds keeps alive.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <memory>
#include <string>
#include <vector>

#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/core/hash.h"
#include "seismo/core/time.h"
#include "seismo/query/params.h"
#include "support/keys.h"

namespace seismo::testing {

inline constexpr int64_t kMin = 60'000;
inline constexpr int64_t kHour = 3'600'000;
inline constexpr int64_t kDay = 86'400'000;

class World {
 public:
  // Stream time ends at t0 (2026-11-20T12:00:00Z).
  World() : World(Options().max_series) {}
  // A world whose state folds its tail into "(other)" series past `max_series` (fold.h).
  // With `shards` states, each delta applied by the one its key routes to, as the daemon's
  // shards do: a folded world then holds an "(other)" series of one key in several of them.
  explicit World(size_t max_series, size_t shards = 1) : symbols_(std::make_shared<Symbols>()) {
    for (size_t i = 0; i < shards; ++i) {
      states_.push_back(std::make_unique<ShardState>(WithMaxSeries(max_series), symbols_.get()));
    }
  }

  static AggregateOptions Options() {
    AggregateOptions o;
    o.bucket_ms = kMin;
    o.windows_ms = {kHour, kDay, 7 * kDay};
    o.retention_ms = 14 * kDay;
    return o;
  }
  static AggregateOptions WithMaxSeries(size_t max_series) {
    AggregateOptions o = Options();
    o.max_series = max_series;
    return o;
  }
  int64_t t0() const { return t0_; }
  // Moves stream time (the end of the next Build) `ms` later; events are placed before it.
  void Advance(int64_t ms) { t0_ += ms; }

  void Usage(std::string_view source, std::string_view os, int64_t usage_ms, int64_t ago_ms,
             std::string_view channel = "release", std::string_view date = "20261117") {
    Apply(test::MakeDelta(*symbols_, Table::kUsage, {source, channel, os, date}), {usage_ms, 1}, ago_ms);
  }
  void BuildUsage(std::string_view os, int64_t usage_ms, int64_t pings, int64_t gpu, int64_t ago_ms,
                  std::string_view build_id = "20261117090501", std::string_view install = "") {
    Delta d = test::MakeDelta(*symbols_, Table::kBuildUsage, {"release", "Firefox", "146.0", build_id, os});
    d.install_hash = install.empty() ? 0 : Hash64(install);
    Apply(std::move(d), {usage_ms, pings, gpu, 0, 0}, ago_ms);
  }
  void Hang(std::string_view source, std::string_view os, std::string_view process, std::string_view thread,
            const std::vector<std::string>& stack, int64_t hang_us, int64_t count, int64_t ago_ms,
            std::string_view channel = "release", std::string_view date = "20261117") {
    std::string frames;
    for (const std::string& frame : stack) {
      if (!frames.empty()) frames += '\x1e';
      frames += frame;
    }
    Apply(test::MakeDelta(*symbols_, Table::kHangs,
                          {source, channel, os, date, process, thread, stack.back(), frames}),
          {hang_us, count}, ago_ms);
  }
  // A hang `ahead_ms` after stream time, from a source ahead of the slowest: applied at stream
  // time, as the pipeline applies it (at the lowest watermark), which it does not move.
  void HangAhead(std::string_view thread, const std::vector<std::string>& stack, int64_t hang_us,
                 int64_t ahead_ms) {
    std::string frames;
    for (const std::string& frame : stack) frames += (frames.empty() ? "" : "\x1e") + frame;
    Delta d =
        test::MakeDelta(*symbols_, Table::kHangs,
                        {"bhr", "release", "Linux", "20261117", "parent", thread, stack.back(), frames});
    d.time = EventTime{t0_ + ahead_ms};
    d.values = {hang_us, 1};
    states_[d.route_hash % states_.size()]->Apply(d, EventTime{t0_});
  }
  void Crash(std::string_view sig, std::string_view process, std::string_view cls, std::string_view install,
             int64_t ago_ms, bool startup = false, std::string_view os = "Linux",
             std::string_view build_id = "20261117090501") {
    Delta d = test::MakeDelta(*symbols_, Table::kCrashes,
                              {"release", "Firefox", "146.0", build_id, os, process, cls, sig});
    d.install_hash = Hash64(install);
    Apply(std::move(d), {1, startup ? 1 : 0}, ago_ms);
  }
  std::shared_ptr<const Snapshot> Build() {
    std::vector<std::shared_ptr<const ShardSnapshot>> shards;
    for (auto& state : states_) {
      state->AdvanceTo(EventTime{t0_});
      shards.push_back(state->Snapshot());
    }
    const AggregateOptions options = Options();
    return MergeSnapshots(shards, *symbols_, options.bucket_ms, options.windows_ms, options.retention_ms,
                          true, symbols_);
  }

 private:
  void Apply(Delta d, Values v, int64_t ago_ms) {
    d.time = EventTime{t0_ - ago_ms};
    d.values = v;
    states_[d.route_hash % states_.size()]->Apply(d);
  }

  int64_t t0_ = ParseTimestamp("2026-11-20T12:00:00Z")->ms;
  std::shared_ptr<Symbols> symbols_;
  std::vector<std::unique_ptr<ShardState>> states_;
};

// A small deterministic generator for random worlds: Next(n) is in [0, n).
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : x_(seed) {}
  uint64_t operator()(uint64_t n) {
    x_ = x_ * 6364136223846793005ull + 1442695040888963407ull;
    return (x_ >> 33) % n;
  }

 private:
  uint64_t x_;
};

inline Query Q(Endpoint e, std::string_view query_string) {
  auto params = ParseQueryString(query_string);
  EXPECT_TRUE(params.has_value());
  auto q = ParseQuery(e, *params, World::Options().windows_ms);
  EXPECT_TRUE(q.has_value()) << (q ? "" : q.error().message());
  return q ? *q : Query{};
}

// Parses JSON text for assertions; the document owns the padded copy.
struct Json {
  explicit Json(const std::string& text) : padded(text) {
    auto err = parser.parse(padded).get(root);
    EXPECT_EQ(err, simdjson::SUCCESS) << text;
  }
  simdjson::padded_string padded;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
};

}  // namespace seismo::testing
