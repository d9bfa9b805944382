#include "seismo/sim/demo.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "seismo/core/time.h"
#include "seismo/ingest/kafka_producer.h"

namespace seismo {
namespace {

constexpr int64_t kBaselineBuilds = 3;
constexpr int64_t kSpacingHours = 24;
// Hours from a scenario's start to its first build (Scenario releases B1 at start + 9 h)
// and to its newest build N.
constexpr int64_t kFirstBuildHours = 9;
constexpr int64_t kNewBuildHours = kBaselineBuilds * kSpacingHours + kFirstBuildHours;

struct ChannelPlan {
  const char* channel;
  int64_t new_build_before_bad_hours;  // how long before the bad release this channel's N came out
  double usage_per_hour;               // usage hours per build per hour
  double crashes_per_usage_hour;
  uint32_t plants;
};

// Release builds reach most users, nightly the fewest. Beta's and nightly's newest
// builds are out well before the bad release and are healthy; their release hours
// (mod 24 h) differ from each other and from release's, so no two builds share an id.
constexpr ChannelPlan kChannels[] = {
    {"beta", 31, 200, 0.08, 0},
    {"nightly", 14, 60, 0.1, 0},
    {"release", 0, 600, 0.08, kPlantSignatureSpike | kPlantHangSpike},
};

}  // namespace

DemoPopulation::DemoPopulation(const DemoOptions& options) {
  const int64_t hour_now = options.now_ms - ((options.now_ms % kHourMs) + kHourMs) % kHourMs;
  bad_release_ms_ = hour_now - options.compressed_after_hours * kHourMs;
  uint64_t k = 0;
  start_ms_ = bad_release_ms_;
  for (const ChannelPlan& plan : kChannels) {
    ScenarioOptions o;
    o.seed = options.seed * 1000 + ++k;
    o.channel = plan.channel;
    o.baseline_builds = static_cast<int>(kBaselineBuilds);
    o.build_spacing_hours = kSpacingHours;
    const int64_t new_release_ms = bad_release_ms_ - plan.new_build_before_bad_hours * kHourMs;
    o.start_ms = new_release_ms - kNewBuildHours * kHourMs;
    o.new_build_age_hours =
        plan.new_build_before_bad_hours + options.compressed_after_hours + options.live_hours;
    o.usage_per_hour = plan.usage_per_hour;
    o.crashes_per_usage_hour = plan.crashes_per_usage_hour;
    o.plants = plan.plants;
    // A tripled hang rate, not a doubled one: a doubling sits on min_ratio = 2 (ADR 0006).
    o.hang_factor = 3.0;
    auto s = std::make_unique<Scenario>(o);
    start_ms_ = std::min(start_ms_, o.start_ms + kFirstBuildHours * kHourMs);
    end_ms_ = std::max(end_ms_, s->end_ms());
    if (plan.plants != 0) {
      truth_.channel = plan.channel;
      truth_.bad_build_id = s->truth().new_build_id;
      truth_.bad_build_date = s->truth().new_build_date;
      truth_.bad_version = s->truth().new_version;
      truth_.spike_signature = s->truth().spike_signature;
      truth_.hang_signature = s->truth().hang_signature;
    }
    channels_.push_back(std::move(s));
  }
}

SimClock::SimClock(int64_t sim_start_ms, double speed, const Clock* wall)
    : sim_start_ms_(sim_start_ms), speed_(speed), wall_(wall), wall_start_ms_(wall->Now().ms) {}

int64_t SimClock::Now() const {
  const int64_t wall = wall_->Now().ms;
  const double compressed =
      static_cast<double>(sim_start_ms_) + speed_ * static_cast<double>(wall - wall_start_ms_);
  return std::min(static_cast<int64_t>(compressed), wall);
}

int64_t SimClock::WallMsUntil(int64_t sim_ms) const {
  const int64_t wall = wall_->Now().ms;
  // Simulated time reaches sim_ms once both the compressed clock and the wall clock have.
  const double compressed_at =
      static_cast<double>(wall_start_ms_) + static_cast<double>(sim_ms - sim_start_ms_) / speed_;
  const double at = std::max(compressed_at, static_cast<double>(sim_ms));
  return std::max<int64_t>(0, static_cast<int64_t>(std::ceil(at - static_cast<double>(wall))));
}

std::optional<EventTime> DemoDocumentTime(std::string_view doc) {
  for (std::string_view field :
       {std::string_view("\"submission_timestamp\":\""), std::string_view("\"submitted_timestamp\":\"")}) {
    const size_t at = doc.find(field);
    if (at == std::string_view::npos) continue;
    const size_t begin = at + field.size();
    const size_t end = doc.find('"', begin);
    if (end == std::string_view::npos) return std::nullopt;
    return ParseTimestamp(doc.substr(begin, end - begin));
  }
  return std::nullopt;
}

DemoSimulator::DemoSimulator(const DemoPopulation& population, const SimClock& clock, KafkaProducer& producer,
                             DemoTopics topics)
    : population_(population), clock_(clock), producer_(producer), topics_(std::move(topics)) {}

DemoSimulator::~DemoSimulator() { Stop(); }

void DemoSimulator::Start() {
  for (const auto& scenario : population_.channels()) {
    threads_.emplace_back([this, s = scenario.get()] { RunChannel(*s); });
  }
}

void DemoSimulator::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

bool DemoSimulator::WaitFor(int64_t sim_ms) {
  for (;;) {
    if (stop_.load(std::memory_order_relaxed)) return false;
    const int64_t wait = clock_.WallMsUntil(sim_ms);
    // A document up to 2 ms (wall) early is harmless and saves a sleep per document.
    if (wait <= 2) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(wait, 100)));
  }
}

void DemoSimulator::RunChannel(const Scenario& scenario) {
  // Documents come in event-time order; each waits for its time on the simulated clock.
  // After Stop() the remaining documents are rendered and skipped (no early exit from
  // ForEachDocument); that takes well under a second.
  scenario.ForEachDocument([&](std::string&& doc) {
    if (stop_.load(std::memory_order_relaxed)) return;
    const std::optional<EventTime> t = DemoDocumentTime(doc);
    if (t && !WaitFor(t->ms)) return;
    const std::string_view head(doc);
    const std::string& topic = head.starts_with("{\"type\":\"main\"")  ? topics_.main
                               : head.starts_with("{\"type\":\"bhr\"") ? topics_.bhr
                                                                       : topics_.crash;
    for (;;) {
      const Status s = producer_.Produce(topic, {}, doc);
      if (s.ok()) {
        produced_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      // A full local queue (the broker is slow): wait for room unless stopping.
      if (s.code() != StatusCode::kUnavailable || stop_.load(std::memory_order_relaxed)) {
        failed_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
  });
}

}  // namespace seismo
