// The webhook sink against a real HTTP receiver on 127.0.0.1 (a tiny socket server),
// a receiver that answers 500 and one that is down.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/alert/service.h"
#include "seismo/alert/sinks.h"
#include "support/keys.h"
#include "unit/alert/webhook_receiver.h"

namespace seismo {
namespace {

using namespace std::chrono_literals;

using seismo::testing::Receiver;

AlertEvent Event(const std::string& signature) {
  AlertEvent e;
  e.alert.key = {AlertRule::kNewCrashSignature, "release", "all", "20261126090000", signature, ""};
  e.alert.state = AlertState::kFiring;
  e.alert.numbers.count_new = 42;
  e.from = AlertState::kPending;
  return e;
}

TEST(Webhook, PostsEachTransitionToARealReceiver) {
  Receiver receiver(200);
  WebhookOptions o;
  o.url = receiver.url();
  WebhookSink sink(o);
  for (int i = 0; i < 3; ++i) {
    AlertEvent e = Event("sig" + std::to_string(i));
    sink.Publish(e, AlertEventJson(e));
  }
  ASSERT_TRUE(sink.WaitIdle(10s));
  const WebhookStats s = sink.stats();
  EXPECT_EQ(s.delivered, 3u);
  EXPECT_EQ(s.failed, 0u);
  const std::vector<std::string> bodies = receiver.bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0], AlertEventJson(Event("sig0")));
  EXPECT_NE(bodies[2].find("\"signature\":\"sig2\""), std::string::npos);
}

TEST(Webhook, ErrorAnswersAreRetriedThenCountedAsFailed) {
  Receiver receiver(500);
  WebhookOptions o;
  o.url = receiver.url();
  o.retries = 2;
  o.initial_backoff = 10ms;
  WebhookSink sink(o);
  AlertEvent e = Event("sig");
  sink.Publish(e, AlertEventJson(e));
  ASSERT_TRUE(sink.WaitIdle(10s));
  EXPECT_EQ(receiver.requests(), 3);  // first attempt + 2 retries
  EXPECT_EQ(sink.stats().failed, 1u);
  EXPECT_EQ(sink.stats().failed_attempts, 3u);
  EXPECT_EQ(sink.stats().last_error, "HTTP 500");
  const SinkDelivery d = sink.delivery();  // what /metrics and /api/v1/status show
  EXPECT_EQ(d.sent, 0u);
  EXPECT_EQ(d.failed, 1u);
  EXPECT_EQ(d.retried, 2u);
  EXPECT_EQ(d.dropped, 0u);
}

// Every sink counts what became of its transitions, readable from any thread.
TEST(AlertSinks, EachSinkCountsSentAndFailedTransitions) {
  char path[] = "/tmp/seismo-alert-sink-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  auto file = FileSink::Open(path);
  ASSERT_TRUE(file);
  AlertEvent e = Event("sig");
  (*file)->Publish(e, AlertEventJson(e));
  (*file)->Publish(e, AlertEventJson(e));
  EXPECT_EQ((*file)->delivery().sent, 2u);
  EXPECT_EQ((*file)->delivery().failed, 0u);
  std::remove(path);
  // A device that is always full: every write fails and is counted, never thrown.
  auto full = FileSink::Open("/dev/full");
  ASSERT_TRUE(full);
  (*full)->Publish(e, AlertEventJson(e));
  (*full)->Publish(e, AlertEventJson(e));
  EXPECT_EQ((*full)->delivery().sent, 0u);
  EXPECT_EQ((*full)->delivery().failed, 2u);

  int calls = 0;
  KafkaSink kafka([&](std::string_view, std::string_view) {
    return ++calls % 2 == 0 ? Status::IoError("queue full") : Status::Ok();
  });
  for (int i = 0; i < 5; ++i) kafka.Publish(e, AlertEventJson(e));
  EXPECT_EQ(kafka.delivery().sent, 3u);
  EXPECT_EQ(kafka.delivery().failed, 2u);

  Receiver receiver(200);
  WebhookOptions o;
  o.url = receiver.url();
  WebhookSink webhook(o);
  webhook.Publish(e, AlertEventJson(e));
  ASSERT_TRUE(webhook.WaitIdle(10s));
  EXPECT_EQ(webhook.delivery().sent, 1u);
  EXPECT_EQ(webhook.delivery().retried, 0u);
}

TEST(Webhook, ReceiverDownIsCountedAndNeverBlocksEvaluation) {
  int port = 0;
  {
    Receiver gone(200);  // learn a free port, then close it
    port = std::stoi(gone.url().substr(17, 5));
  }
  WebhookOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  o.retries = 3;
  o.timeout = 500ms;
  o.initial_backoff = 200ms;  // 200 + 400 + 800 ms of backoff per event
  o.queue_capacity = 4;
  WebhookSink sink(o);
  // Publishing is immediate even though every delivery will take over a second.
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) {
    AlertEvent e = Event("sig" + std::to_string(i));
    sink.Publish(e, AlertEventJson(e));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_GE(sink.stats().dropped, 5u);  // the bounded queue dropped the oldest
  // Wait for the first event to exhaust its attempts.
  for (int i = 0; i < 100 && sink.stats().failed == 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_GE(sink.stats().failed, 1u);
  EXPECT_GE(sink.stats().failed_attempts, 4u);
  EXPECT_FALSE(sink.stats().last_error.empty());
  // Stop is prompt: a backoff in progress is cut short; what is queued counts as dropped.
  const auto stop_start = std::chrono::steady_clock::now();
  sink.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start, 2s);
  const WebhookStats s = sink.stats();
  EXPECT_EQ(s.delivered, 0u);
  EXPECT_EQ(s.enqueued, 10u);
}

TEST(AlertServiceTest, EvaluatesOnItsThreadAndFeedsTheSinks) {
  Receiver receiver(200);
  AlertOptions o;
  o.interval = 20ms;
  o.for_evaluations = 1;
  o.age_matched = false;      // the hand-made timeline: each build's whole life against the other's
  o.min_baseline_builds = 1;  // ... and one earlier build
  o.webhook_url = receiver.url();
  char path[] = "/tmp/seismo-alerts-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  o.log_file = path;
  // A snapshot with one brand-new signature from many installs on a new build: an old
  // build (1000 usage hours, 50 crashes, ten days ago) and a new one (100 usage hours,
  // 30 crashes of 30 installs, an hour ago), through a ShardState.
  const int64_t stream_ms = 1'795'000'000'000;
  const int64_t old_ms = stream_ms - 10 * 86'400'000LL, new_ms = stream_ms - 3'600'000;
  auto symbols = std::make_shared<Symbols>();
  AggregateOptions aggregate;
  ShardState state(aggregate, symbols.get());
  auto usage = [&](const char* build, int64_t t_ms, int64_t usage_ms) {
    state.Apply(test::MakeDelta(*symbols, Table::kBuildUsage, {"release", "Firefox", "150.0", build, "Linux"},
                                t_ms, {usage_ms}));
  };
  auto crash = [&](const char* build, const char* sig, int64_t t_ms, int64_t count, uint64_t install) {
    Delta d = test::MakeDelta(*symbols, Table::kCrashes,
                              {"release", "Firefox", "150.0", build, "Linux", "parent", "parent", sig}, t_ms,
                              {count});
    d.install_hash = install;
    state.Apply(d);
  };
  usage("20261101000000", old_ms, 1000 * 3'600'000LL);
  usage("20261120000000", new_ms, 100 * 3'600'000LL);
  crash("20261101000000", "old", old_ms, 50, 0);
  for (uint64_t i = 0; i < 30; ++i)
    crash("20261120000000", "brand_new", new_ms, 1, 0x9e3779b97f4a7c15ULL * (i + 1));
  state.AdvanceTo(EventTime{stream_ms});
  auto snap = MergeSnapshots({state.Snapshot()}, *symbols, aggregate.bucket_ms, aggregate.windows_ms,
                             aggregate.retention_ms, true, symbols);
  std::shared_ptr<const Snapshot> published = snap;
  std::mutex mu;
  AlertService service(o, [&] {
    std::lock_guard<std::mutex> lock(mu);
    return published;
  });
  ASSERT_TRUE(AddConfiguredSinks(service, o).ok());
  service.Start();
  for (int i = 0; i < 200 && receiver.bodies().size() < 2; ++i) std::this_thread::sleep_for(10ms);
  service.Stop();
  // Two transitions (the new signature, and the parent class whose rate it raised),
  // each sent once, in key order, also appended to the log file.
  const std::vector<std::string> bodies = receiver.bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(service.engine().stats().transitions, 2u);
  EXPECT_NE(bodies[0].find("\"rule\":\"new_crash_signature\""), std::string::npos);
  EXPECT_NE(bodies[1].find("\"rule\":\"crash_rate_regression\""), std::string::npos);
  EXPECT_NE(service.engine().AlertsJson().find("brand_new"), std::string::npos);
  // The service names each sink's counters (for /metrics and /api/v1/status).
  const auto deliveries = service.SinkDeliveries();
  ASSERT_EQ(deliveries.size(), 2u);
  EXPECT_EQ(deliveries[0].first, "file");
  EXPECT_EQ(deliveries[0].second.sent, 2u);
  EXPECT_EQ(deliveries[1].first, "webhook");
  EXPECT_EQ(deliveries[1].second.sent, 2u);
  FILE* f = std::fopen(path, "r");
  ASSERT_NE(f, nullptr);
  char line[8192];
  for (const std::string& body : bodies) {
    ASSERT_NE(std::fgets(line, sizeof line, f), nullptr);
    EXPECT_EQ(std::string(line), body + "\n");
  }
  std::fclose(f);
  std::remove(path);
}

}  // namespace
}  // namespace seismo
