// The alert life cycle per key (engine.h): transitions of each round, the current
// alerts and their JSON, and the state checkpoints carry (alert_state.h).
#include "seismo/alert/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "alert_state.h"

namespace seismo {
namespace {

// Firing first, then pending, then resolved.
int StateRank(AlertState state) {
  return state == AlertState::kFiring ? 0 : state == AlertState::kPending ? 1 : 2;
}

}  // namespace

AlertEngine::AlertEngine(AlertOptions options) : options_(std::move(options)) {}

std::vector<AlertEvent> AlertEngine::Evaluate(const Snapshot& snap) {
  std::vector<AlertCandidate> candidates = EvaluateRules(snap, options_);
  const auto installs_unknown = static_cast<uint64_t>(
      std::count_if(candidates.begin(), candidates.end(),
                    [](const AlertCandidate& candidate) { return !candidate.numbers.installs; }));
  const int64_t stream_ms = snap.stream_time_ms;
  std::vector<AlertEvent> events;
  MutexLock lock(mu_);
  std::set<AlertKey> held;
  for (AlertCandidate& candidate : candidates) {
    if (!candidate.holds) continue;
    held.insert(candidate.key);
    auto found = alerts_.find(candidate.key);
    if (found == alerts_.end() || found->second.state == AlertState::kResolved) {
      const AlertState from = found == alerts_.end() ? AlertState::kInactive : AlertState::kResolved;
      Alert alert;
      alert.key = candidate.key;
      alert.numbers = std::move(candidate.numbers);
      alert.state = options_.for_evaluations <= 1 ? AlertState::kFiring : AlertState::kPending;
      alert.first_seen_ms = alert.last_seen_ms = alert.since_ms = stream_ms;
      alert.true_streak = 1;
      events.push_back({alert, from});
      alerts_[alert.key] = std::move(alert);
      continue;
    }
    Alert& alert = found->second;
    alert.numbers = std::move(candidate.numbers);
    alert.last_seen_ms = stream_ms;
    alert.false_streak = 0;
    ++alert.true_streak;
    if (alert.state == AlertState::kPending && alert.true_streak >= options_.for_evaluations) {
      alert.state = AlertState::kFiring;
      alert.since_ms = stream_ms;
      events.push_back({alert, AlertState::kPending});
    }
  }
  const int64_t forget_after = options_.new_build_days * 24 * kHourMs;
  for (auto it = alerts_.begin(); it != alerts_.end();) {
    Alert& alert = it->second;
    if (held.count(alert.key)) {
      ++it;
      continue;
    }
    alert.true_streak = 0;
    ++alert.false_streak;
    if (alert.state == AlertState::kPending) {
      Alert gone = alert;
      gone.state = AlertState::kInactive;
      gone.since_ms = stream_ms;
      events.push_back({std::move(gone), AlertState::kPending});
      it = alerts_.erase(it);
      continue;
    }
    if (alert.state == AlertState::kFiring && alert.false_streak >= options_.resolve_after) {
      alert.state = AlertState::kResolved;
      alert.since_ms = stream_ms;
      events.push_back({alert, AlertState::kFiring});
    } else if (alert.state == AlertState::kResolved && stream_ms - alert.since_ms > forget_after) {
      it = alerts_.erase(it);
      continue;
    }
    ++it;
  }
  std::sort(events.begin(), events.end(),
            [](const AlertEvent& lhs, const AlertEvent& rhs) { return lhs.alert.key < rhs.alert.key; });
  ++stats_.rounds;
  stats_.tested = candidates.size();
  stats_.installs_unknown += installs_unknown;
  stats_.transitions += events.size();
  outbox_.insert(outbox_.end(), events.begin(), events.end());
  if (outbox_.size() > max_outbox_) {
    const size_t drop = outbox_.size() - max_outbox_;
    spdlog::error("alerts: {} transitions wait for a commit that keeps failing; the oldest {} are dropped",
                  outbox_.size(), drop);
    stats_.outbox_dropped += drop;
    outbox_.erase(outbox_.begin(), outbox_.begin() + static_cast<ptrdiff_t>(drop));
  }
  RenderLocked();
  return events;
}

std::vector<AlertEvent> AlertEngine::Outbox() const {
  MutexLock lock(mu_);
  return outbox_;
}

void AlertEngine::Delivered(size_t n) {
  MutexLock lock(mu_);
  outbox_.erase(outbox_.begin(), outbox_.begin() + static_cast<ptrdiff_t>(std::min(n, outbox_.size())));
}

void AlertEngine::RenderLocked() {
  std::vector<const Alert*> order;
  stats_.by_state = {};
  for (const auto& [key, alert] : alerts_) {
    order.push_back(&alert);
    if (alert.state != AlertState::kInactive) ++stats_.by_state[static_cast<size_t>(alert.state)];
  }
  std::stable_sort(order.begin(), order.end(), [](const Alert* lhs, const Alert* rhs) {
    return StateRank(lhs->state) < StateRank(rhs->state);
  });
  std::string out = "[";
  for (size_t at = 0; at < order.size(); ++at) {
    if (at > 0) out += ',';
    out += AlertJson(*order[at]);
  }
  out += ']';
  json_ = std::move(out);
}

std::vector<Alert> AlertEngine::Alerts() const {
  MutexLock lock(mu_);
  std::vector<Alert> out;
  for (const auto& [key, alert] : alerts_) out.push_back(alert);
  std::stable_sort(out.begin(), out.end(), [](const Alert& lhs, const Alert& rhs) {
    return StateRank(lhs.state) < StateRank(rhs.state);
  });
  return out;
}

std::string AlertEngine::AlertsJson() const {
  MutexLock lock(mu_);
  return json_;
}

AlertEngineStats AlertEngine::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

std::string AlertEngine::Serialize() const {
  MutexLock lock(mu_);
  return alert_detail::EncodeAlertState(alerts_, outbox_);
}

Status AlertEngine::Restore(std::string_view bytes) {
  std::map<AlertKey, Alert> restored;
  std::vector<AlertEvent> outbox;
  Status status = alert_detail::DecodeAlertState(bytes, restored, outbox);
  if (!status.ok()) return status;
  MutexLock lock(mu_);
  alerts_ = std::move(restored);
  outbox_ = std::move(outbox);
  RenderLocked();
  return Status::Ok();
}

}  // namespace seismo
