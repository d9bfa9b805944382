// AlertService: the alert thread of the daemon.
//
//   every `interval`: snapshot() ──> AlertEngine::Evaluate ──transitions──> outbox
//                     [commit()] ──> the outbox to the sinks (in order) ──> Flush ──> [commit()]
//
// With a commit function (a cluster's alert holder, ADR 0024 "Alerts"), whenever the outbox
// holds transitions the state, outbox included, is made durable before they are sent and
// again after the sinks have them out of this process (each sink's Flush, up to
// kFlushTimeout in all): a holder killed in between leaves them to the next one, which sends
// them again (under the same event_id).
// When the commit fails nothing is sent; the outbox waits for the next round.
//
// Start order: sinks are added before Start(); Stop() joins the thread, runs one last
// round on the final snapshot if asked, then stops the sinks in reverse order.
//
// Ownership: owns the engine and the sinks; the snapshot function is borrowed (it must
// stay callable until Stop() returns). Threading: Start/Stop/AddSink/EvaluateNow from
// the owner; engine().AlertsJson() and SinkDeliveries() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "seismo/alert/engine.h"
#include "seismo/alert/sinks.h"
#include "seismo/core/mutex.h"

namespace seismo {

class AlertService {
 public:
  using SnapshotFn = std::function<std::shared_ptr<const Snapshot>()>;
  AlertService(AlertOptions options, SnapshotFn snapshots);
  ~AlertService();

  void AddSink(std::unique_ptr<AlertSink> sink);  // before Start()
  // Before Start(): makes the engine's state durable (true when it is); called in rounds.
  using CommitFn = std::function<bool()>;
  static constexpr std::chrono::seconds kFlushTimeout{5};
  void SetCommit(CommitFn commit) { commit_ = std::move(commit); }
  void Start();
  // Stops the thread; with `final_round`, evaluates the latest snapshot once more; then
  // stops the sinks (last added first). Idempotent.
  void Stop(bool final_round = false);
  // One round on `snap`: returns its transitions; the outbox (they and any left undelivered)
  // goes to the sinks, unless the commit failed. Not concurrently with the thread.
  std::vector<AlertEvent> EvaluateNow(const Snapshot& snap);

  // (sink name, delivery counters) of every sink, in the order they were added. Any thread
  // (the sinks are fixed once Start() has run).
  std::vector<std::pair<std::string, SinkDelivery>> SinkDeliveries() const;

  // Whether the thread's rounds (and the final one) evaluate at all; true from the start.
  // Setting it waits for a round in progress to end, so after SetEvaluating(false) returns
  // no transition is sent until it is set again (a cluster's alert holder: ADR 0024). Any
  // thread.
  void SetEvaluating(bool on);

  // Rounds the thread has evaluated so far (any thread; monitoring and tests).
  uint64_t rounds() const { return rounds_.load(std::memory_order_relaxed); }

  AlertEngine& engine() { return engine_; }
  const AlertEngine& engine() const { return engine_; }

 private:
  void Run();
  // The outbox to the sinks, between commits (see the header comment).
  void Deliver();

  AlertEngine engine_;
  SnapshotFn snapshots_;
  std::vector<std::unique_ptr<AlertSink>> sinks_;
  CommitFn commit_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool stopped_ = false;
  Mutex round_mu_;  // held through each round
  bool evaluating_ GUARDED_BY(round_mu_) = true;
  std::atomic<uint64_t> rounds_{0};  // relaxed: a counter, nothing published with it
  std::thread thread_;
};

// Builds the file and webhook sinks the options name (the Kafka sink needs a producer,
// which the app adds). Fails when the log file cannot be opened.
[[nodiscard]] Status AddConfiguredSinks(AlertService& service, const AlertOptions& options);

}  // namespace seismo
