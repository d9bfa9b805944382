// Alert sinks: where transitions go besides the API (which reads the engine).
//
//   AlertService thread ──Publish(event)──> FileSink     (append + flush, same thread)
//                                      ├──> WebhookSink  (bounded queue ─> own thread ─> libcurl POST)
//                                      └──> KafkaSink    (librdkafka's own queue, never waits)
//
// Contract: Publish() never blocks evaluation for long; Flush() waits, boundedly, until what
// was published has left the process (AlertService calls it once per round with transitions). The webhook
// queue holds at most `queue_capacity` events; when full the oldest is dropped and counted. Each webhook
// event is POSTed (Content-Type: application/json) with a per-attempt timeout and up to `retries` more
// attempts, backing off 100 ms, 200 ms, 400 ms ... (at most 5 s); a 2xx answer is a delivery, anything else
// (refused, timeout, 4xx/5xx) a failed attempt. Stop() ends the worker promptly (a backoff wait is cut
// short); events still queued are counted as dropped. The worker keeps one libcurl handle for its life, so
// its connection is reused and posting opens no descriptor or thread per event.
//
// Only aggregates leave the process: the payload is the alert JSON (numbers, keys, a
// dashboard path), never a document.
//
// Threading: Publish() and Stop() from the alert thread; stats() and delivery() from any
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "seismo/alert/engine.h"
#include "seismo/core/mutex.h"
#include "seismo/core/status.h"

namespace seismo {

// The JSON a sink carries for one transition: the alert object plus "previous_state" and
// "event_id", 16 hex digits of a hash of the alert key, both states and the transition's
// stream time: the same transition has the same id whoever sends it, so a receiver can drop
// the repeat a holder killed between a send and its commit leaves (ADR 0024, "Alerts").
std::string AlertEventJson(const AlertEvent& event);
std::string AlertEventId(const AlertEvent& event);

// What a sink did with the transitions it was given, since it was made (for /metrics and
// /api/v1/status). A transition is sent, failed or dropped once it has left the sink.
struct SinkDelivery {
  uint64_t sent = 0;     // file: written and flushed; webhook: answered 2xx; kafka: accepted by the producer
  uint64_t failed = 0;   // file: a write error; webhook: every attempt failed; kafka: the producer refused it
  uint64_t retried = 0;  // webhook: attempts after a failed one
  uint64_t dropped = 0;  // webhook: the queue was full, or the event was still queued at Stop()
};

class AlertSink {
 public:
  virtual ~AlertSink() = default;
  virtual std::string_view name() const = 0;
  virtual void Publish(const AlertEvent& event, const std::string& json) = 0;
  virtual void Stop() {}
  // Waits up to `timeout` until every transition published so far has left the sink (sent,
  // failed or dropped: no longer only in this process's memory); false on timeout. The
  // service calls it before it marks transitions delivered (ADR 0024, "Alerts").
  virtual bool Flush(std::chrono::milliseconds /*timeout*/) { return true; }
  virtual SinkDelivery delivery() const = 0;  // any thread
};

// Appends one JSON line per transition and flushes it.
class FileSink final : public AlertSink {
 public:
  [[nodiscard]] static Result<std::unique_ptr<FileSink>> Open(const std::string& path);
  ~FileSink() override;
  std::string_view name() const override { return "file"; }
  void Publish(const AlertEvent& event, const std::string& json) override;
  SinkDelivery delivery() const override;
  uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }

 private:
  FileSink(std::string path, FILE* f) : path_(std::move(path)), file_(f) {}
  std::string path_;
  FILE* file_;  // owned
  // Written by the alert thread, read by any: plain counters, relaxed (no data hangs on them).
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> write_errors_{0};
};

struct WebhookOptions {
  std::string url;
  std::chrono::milliseconds timeout{5'000};  // per attempt
  int retries = 3;                           // attempts after the first
  size_t queue_capacity = 1024;
  std::chrono::milliseconds initial_backoff{100};
};

struct WebhookStats {
  uint64_t enqueued = 0;
  uint64_t delivered = 0;       // events answered 2xx
  uint64_t failed = 0;          // events given up after every attempt
  uint64_t failed_attempts = 0;
  uint64_t retries = 0;         // attempts after a failed one
  uint64_t dropped = 0;         // queue full, or still queued at Stop()
  std::string last_error;
};

class WebhookSink final : public AlertSink {
 public:
  explicit WebhookSink(WebhookOptions options);
  ~WebhookSink() override;
  std::string_view name() const override { return "webhook"; }
  void Publish(const AlertEvent& event, const std::string& json) override;
  void Stop() override;
  bool Flush(std::chrono::milliseconds timeout) override { return WaitIdle(timeout); }
  SinkDelivery delivery() const override;
  WebhookStats stats() const;
  // Waits until the queue is empty and no POST is in flight (tests); false on timeout.
  [[nodiscard]] bool WaitIdle(std::chrono::milliseconds timeout) const;

 private:
  void Run();

  const WebhookOptions options_;
  mutable Mutex mu_;
  mutable CondVar cv_;  // queue_ changed, stop_ set, or idle
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  bool busy_ GUARDED_BY(mu_) = false;  // a POST is in flight
  bool stop_ GUARDED_BY(mu_) = false;
  WebhookStats stats_ GUARDED_BY(mu_);
  std::thread worker_;
};

// Produces one message per transition (key = the alert key, value = the JSON) through an
// injected producer, so this stage needs no Kafka client of its own: the app passes
// KafkaProducer::Produce on the configured topic.
class KafkaSink final : public AlertSink {
 public:
  using ProduceFn = std::function<Status(std::string_view key, std::string_view value)>;
  // Waits for the producer's deliveries (KafkaProducer::Flush); null: nothing to wait for.
  using FlushFn = std::function<Status(std::chrono::milliseconds timeout)>;
  explicit KafkaSink(ProduceFn produce, FlushFn flush = nullptr)
      : produce_(std::move(produce)), flush_(std::move(flush)) {}
  std::string_view name() const override { return "kafka"; }
  void Publish(const AlertEvent& event, const std::string& json) override;
  bool Flush(std::chrono::milliseconds timeout) override { return !flush_ || flush_(timeout).ok(); }
  SinkDelivery delivery() const override;
  uint64_t produced() const { return produced_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  ProduceFn produce_;
  FlushFn flush_;
  // Written by the alert thread, read by any: plain counters, relaxed.
  std::atomic<uint64_t> produced_{0};
  std::atomic<uint64_t> failed_{0};
};

// "crash_signature_spike|release|all|20261118090000|sig|" — stable, for Kafka keys.
std::string AlertKeyString(const AlertKey& key);

}  // namespace seismo
