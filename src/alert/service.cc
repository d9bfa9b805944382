#include "seismo/alert/service.h"

#include <spdlog/spdlog.h>

#include "curl_api.h"

namespace seismo {

AlertService::AlertService(AlertOptions options, SnapshotFn snapshots)
    : engine_(std::move(options)), snapshots_(std::move(snapshots)) {}

AlertService::~AlertService() { Stop(); }

void AlertService::AddSink(std::unique_ptr<AlertSink> sink) { sinks_.push_back(std::move(sink)); }

std::vector<std::pair<std::string, SinkDelivery>> AlertService::SinkDeliveries() const {
  std::vector<std::pair<std::string, SinkDelivery>> out;
  for (const auto& sink : sinks_) out.emplace_back(std::string(sink->name()), sink->delivery());
  return out;
}

void AlertService::Start() {
  thread_ = std::thread([this] { Run(); });
}

std::vector<AlertEvent> AlertService::EvaluateNow(const Snapshot& snap) {
  std::vector<AlertEvent> events = engine_.Evaluate(snap);
  Deliver();
  return events;
}

void AlertService::Deliver() {
  // Only transitions need the commit: a round without any changes streaks and times, whose
  // loss after a kill only delays the next holder's decisions (the commit of each
  // transition holds everything it followed from).
  const std::vector<AlertEvent> outbox = engine_.Outbox();
  if (outbox.empty()) return;
  if (commit_ && !commit_()) {
    spdlog::warn("alerts: the state could not be made durable; {} transition(s) wait for the next round",
                 outbox.size());
    return;
  }
  for (const AlertEvent& e : outbox) {
    spdlog::info("alert {} -> {}: {} {} {} {} {}", AlertStateName(e.from), AlertStateName(e.alert.state),
                 AlertRuleName(e.alert.key.rule), e.alert.key.channel, e.alert.key.os, e.alert.key.build,
                 e.alert.key.signature.empty() ? e.alert.key.scope : e.alert.key.signature);
    const std::string json = AlertEventJson(e);
    for (const auto& sink : sinks_) sink->Publish(e, json);
  }
  // Out of this process's memory before they count as delivered: a webhook's queue or a
  // producer's, lost with the process, would otherwise lose them to a kill after the commit.
  const auto deadline = std::chrono::steady_clock::now() + kFlushTimeout;
  for (const auto& sink : sinks_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration(0)));
    if (!sink->Flush(left))
      spdlog::warn("alerts: the {} sink still holds transitions after {} s; they count as delivered",
                   sink->name(), kFlushTimeout.count());
  }
  engine_.Delivered(outbox.size());
  if (commit_) (void)commit_();  // a failure here: the next holder may send them again
}

void AlertService::Run() {
  const auto interval = engine_.options().interval;
  MutexLock lock(mu_);
  for (;;) {
    const auto deadline = std::chrono::steady_clock::now() + interval;
    while (!stop_ && cv_.WaitUntil(mu_, deadline)) {
    }
    if (stop_) break;
    lock.Unlock();
    {
      MutexLock round(round_mu_);
      if (evaluating_) {
        if (std::shared_ptr<const Snapshot> snap = snapshots_()) {
          (void)EvaluateNow(*snap);
          rounds_.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }
    lock.Lock();
  }
}

void AlertService::SetEvaluating(bool on) {
  MutexLock round(round_mu_);
  evaluating_ = on;
}

void AlertService::Stop(bool final_round) {
  if (stopped_) return;
  stopped_ = true;
  {
    MutexLock lock(mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  if (thread_.joinable()) thread_.join();
  if (final_round) {
    MutexLock round(round_mu_);
    if (std::shared_ptr<const Snapshot> snap = evaluating_ ? snapshots_() : nullptr) (void)EvaluateNow(*snap);
  }
  for (auto it = sinks_.rbegin(); it != sinks_.rend(); ++it) (*it)->Stop();
}

Status AddConfiguredSinks(AlertService& service, const AlertOptions& o) {
  if (!o.log_file.empty()) {
    auto file = FileSink::Open(o.log_file);
    if (!file) return file.error();
    service.AddSink(std::move(*file));
  }
  if (!o.webhook_url.empty()) {
    // libcurl is loaded only for a webhook (ADR 0043): a machine without it fails here, at
    // start, rather than at the first alert.
    std::string error;
    if (alert_internal::LoadCurl(&error) == nullptr) {
      return Status::InvalidArgument("alerts.webhook_url needs libcurl (" + error + ")");
    }
    WebhookOptions w;
    w.url = o.webhook_url;
    w.timeout = o.webhook_timeout;
    w.retries = o.webhook_retries;
    service.AddSink(std::make_unique<WebhookSink>(std::move(w)));
  }
  return Status::Ok();
}

}  // namespace seismo
