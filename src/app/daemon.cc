// The daemon's lifecycle: Start() (wiring, restore, threads), Shutdown() and the readers'
// views. The threads' work lives beside it: daemon_sources.cc (source thread),
// daemon_checkpoint.cc (restore and barrier), daemon_publisher.cc (publisher thread) and
// daemon_rebalance.cc (the consumer group listener).
#include "seismo/app/daemon.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <chrono>

#include "cluster_node.h"
#include "daemon_rebalance.h"
#include "seismo/app/dead_letters.h"
#include "seismo/app/replay.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/shard/pipeline.h"

namespace seismo {
namespace {

std::optional<DocKind> KindByName(const std::string& name) {
  if (name == "main") return DocKind::kMain;
  if (name == "bhr") return DocKind::kBhr;
  if (name == "crash") return DocKind::kCrash;
  return std::nullopt;
}

std::string HostName() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "localhost";
  return name.data();
}

}  // namespace

Daemon::Daemon(Config config, const SignatureGenerator* signatures, const Clock* clock)
    : config_(std::move(config)),
      signatures_(signatures),
      clock_(clock),
      symbols_(std::make_unique<Symbols>()),
      release_(DeferredRelease::Start(config_.ingest.nice)) {
  started_at_ms_ = clock_->Now().ms;
}

Daemon::~Daemon() {
  Stop();
  release_->Stop();
}

Status Daemon::Start() {
  auto dead_letters = OpenDeadLetters(config_);
  if (!dead_letters) return dead_letters.error();
  dead_letters_ = std::move(*dead_letters);
  PipelineOptions po = ToPipelineOptions(config_);
  po.parse_delay_for_testing = parse_delay_for_testing_;
  po.apply_delay_for_testing = apply_delay_for_testing_;
  po.sweep_floor_bytes_for_testing = sweep_floor_bytes_for_testing_;
  if (batch_ring_capacity_for_testing_ > 0) po.delta_ring_capacity = batch_ring_capacity_for_testing_;
  for (const std::string& f : config_.sources.files) po.sources.push_back({f, std::nullopt});
  for (const std::string& t : config_.kafka.topics) {
    auto kind = config_.kafka.topic_kinds.find(t);
    po.sources.push_back({t,
                          kind == config_.kafka.topic_kinds.end() ? std::nullopt : KindByName(kind->second),
                          /*live=*/true});
  }
  po.sources.push_back({"(other topic)", std::nullopt, /*live=*/true});
  // A cluster keeps each partition's state apart, so it can move (ADR 0024).
  po.partition_scoped = !config_.cluster.aggregates_topic.empty();
  pipeline_ = std::make_unique<Pipeline>(po, symbols_.get(), signatures_, dead_letters_.get(), clock_);
  if (!config_.cluster.aggregates_topic.empty()) {
    auto node = ClusterNode::Create(config_, InstanceId(config_, HostName()), symbols_.get());
    if (!node) return node.error();
    cluster_ = std::move(*node);
    spdlog::info("cluster: instance {} publishes to and reads the global view from '{}'",
                 cluster_->instance_id(), config_.cluster.aggregates_topic);
  }
  if (Status s = RestoreCheckpoint(); !s.ok()) return s;
  Publish();  // no thread runs yet: the first alert round and the API see the restored data whole

  if (waiting_for_operator_) {
    // Not even joining the group: its partitions stay with whoever else consumes them.
  } else if (!config_.kafka.topics.empty()) {
    KafkaConsumerOptions ko;
    ko.brokers = config_.kafka.brokers;
    ko.group_id = config_.kafka.group_id;
    ko.topics = config_.kafka.topics;
    // Cooperative rebalancing: a member gives up only the partitions that move, after the
    // group has synced, so its hand-over commit lands before the next owner reads it (ADR 0003).
    ko.properties = {{"auto.offset.reset", "earliest"},
                     {"enable.auto.commit", "false"},
                     {"partition.assignment.strategy", "cooperative-sticky"}};
    for (const auto& [k, v] : config_.kafka.properties) ko.properties[k] = v;
    rebalance_ = std::make_unique<Rebalance>(*this);
    auto consumer = KafkaConsumer::Create(ko, rebalance_.get());
    if (!consumer) return consumer.error();
    consumer_ = std::move(*consumer);
  } else {
    consuming_.store(true, std::memory_order_relaxed);
  }

  // Alerts: sinks in order (file, webhook, Kafka), then the engine's thread.
  alerts_ = std::make_unique<AlertService>(config_.alerts, [this] { return snapshot(); });
  // A cluster's alerts are evaluated by one instance, the holder of the first topic's
  // partition 0 (ADR 0024): none until this one is given it.
  if (cluster_) {
    alerts_->SetEvaluating(false);
    // The holder's state, outbox included, is in the topic before a transition is sent and
    // after (ADR 0024, "Alerts"): a holder killed in between leaves them to the next one.
    alerts_->SetCommit([this] {
      Status s = cluster_->CommitAlertState(alerts_->engine().Serialize());
      if (!s.ok()) spdlog::warn("{}", s.message());
      return s.ok();
    });
  }
  if (Status s = AddConfiguredSinks(*alerts_, config_.alerts); !s.ok()) return s;
  if (!config_.alerts.kafka_topic.empty()) {
    KafkaProducerOptions kp;
    kp.brokers = config_.kafka.brokers;
    kp.properties = config_.kafka.properties;
    kp.enqueue_timeout = std::chrono::milliseconds(0);  // never block the alert thread
    auto producer = KafkaProducer::Create(kp);
    if (!producer) return producer.error();
    alert_producer_ = std::move(*producer);
    alerts_->AddSink(std::make_unique<KafkaSink>(
        [this](std::string_view key, std::string_view value) {
          return alert_producer_->Produce(config_.alerts.kafka_topic, key, value);
        },
        [this](std::chrono::milliseconds timeout) { return alert_producer_->Flush(timeout); }));
  }

  if (!restored_alert_state_.empty()) {
    Status restored = alerts_->engine().Restore(restored_alert_state_);
    if (!restored.ok()) spdlog::error("checkpoint: {}; alerts start empty", restored.message());
  }
  // Serialize() takes the engine's own lock, so the source thread may call it.
  save_alert_state_ = [this] { return alerts_->engine().Serialize(); };

  pipeline_->Start();
  if (cluster_) {
    cluster_->Start();
    stall_guard_.StartWatch();
  }
  publisher_thread_ = std::thread([this] { RunPublisher(); });
  alerts_->Start();
  source_thread_ = std::thread([this] { RunSource(); });
  // release: readers that see it (acquire) see every member Start() set.
  restored_.store(true, std::memory_order_release);
  return Status::Ok();
}

std::chrono::steady_clock::time_point Daemon::ShutdownDeadline() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(shutdown_deadline_.load(std::memory_order_relaxed)));
}

void Daemon::Stop() { (void)Shutdown(std::chrono::steady_clock::now() + config_.shutdown_timeout); }

Status Daemon::Shutdown(std::chrono::steady_clock::time_point deadline) {
  if (stopped_ || !pipeline_) return shutdown_status_;
  stopped_ = true;
  // Also cuts short a barrier the source thread may be waiting in right now.
  shutdown_deadline_.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
  stop_source_.store(true);
  if (!source_thread_.joinable()) {  // Start() failed or never ran: nothing was handed over
    pipeline_->Finish();
    return shutdown_status_;
  }
  source_thread_.join();
  stall_guard_.StopWatch();
  stop_publisher_.store(true);
  if (publisher_thread_.joinable()) publisher_thread_.join();
  if (!drained_) {
    // The queues could not be drained in time. The last checkpoint (and only it)
    // is on disk and committed; a restart continues from there.
    pipeline_->Abandon();
    if (alerts_) alerts_->Stop(/*final_round=*/false);
    shutdown_status_ = Status::Unavailable("the queues did not drain before the shutdown deadline");
    return shutdown_status_;
  }
  pipeline_->Finish();
  if (cluster_) {
    // The global view as the topic holds it now, this instance's last publish included.
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto whole = cluster_->ReadWholeView(std::max(left, std::chrono::milliseconds(1)));
    ClusterNode::View view;
    if (whole) {
      view = std::move(*whole);
    } else {
      spdlog::error("{}; the final view is the last one read", whole.error().message());
      view = cluster_->view();
      if (!view.snapshot)
        shutdown_status_ = Status::Unavailable("no global view was read before the shutdown");
    }
    MutexLock lock(snapshot_mu_);
    if (view.snapshot) view_counts_ = view.counts;  // else those of the last view published, if any
    snapshot_ = release_->Wrap(std::move(view.snapshot));
  } else {
    std::shared_ptr<const Snapshot> final_snapshot = release_->Wrap(pipeline_->FinalSnapshot());
    MutexLock lock(snapshot_mu_);
    snapshot_ = std::move(final_snapshot);
  }
  // Last round on the final snapshot, then the sinks stop (reverse order).
  if (alerts_) alerts_->Stop(/*final_round=*/true);
  // Transitions since the source thread's last checkpoint (the final round among them)
  // belong in the checkpoint too, or a restart would emit them again.
  if (!config_.checkpoint.dir.empty() && save_alert_state_ && save_alert_state_() != alerts_at_checkpoint_) {
    WriteCheckpointOf(pipeline_->shards().FinalImages());
  }
  return shutdown_status_;
}

std::vector<uint64_t> Daemon::FullBatchRingPushesForTesting() const { return pipeline_->shards().FullPushes(); }

std::string Daemon::alerts_json() const {
  return restored_.load(std::memory_order_acquire) && alerts_ ? alerts_->engine().AlertsJson() : "[]";
}

std::shared_ptr<const Snapshot> Daemon::snapshot() const {
  MutexLock lock(snapshot_mu_);
  return snapshot_;
}

RecordCounts Daemon::counts() const {
  {
    MutexLock lock(snapshot_mu_);
    if (view_counts_) return *view_counts_;
  }
  return restored_.load(std::memory_order_acquire) && pipeline_ ? CountsOf(pipeline_->counters())
                                                                : RecordCounts{};
}

ServiceStatus Daemon::status() const {
  ServiceStatus s;
  s.started_at_ms = started_at_ms_;
  // Until Start() has restored the checkpoint and started every thread, the HTTP server
  // (started first, so probes answer during a long restore) sees a daemon that is not ready.
  s.restored = restored_.load(std::memory_order_acquire);
  if (!s.restored) return s;
  s.sources_done = sources_done_.load(std::memory_order_relaxed);
  s.kafka_enabled = consumer_ != nullptr;
  s.consuming = consuming_.load(std::memory_order_relaxed);
  s.pauses = pauses_.load(std::memory_order_relaxed);
  if (rebalance_) s.redelivered = rebalance_->handed.redelivered();
  s.last_checkpoint_ms = last_checkpoint_ms_.load(std::memory_order_relaxed);
  s.not_ready_reason = not_ready_reason_;  // set before restored_ is released, then constant
  {
    MutexLock lock(recovery_mu_);
    s.checkpoint_recovery = recovery_;
  }
  s.checkpoint_failures = checkpoint_failures_.load(std::memory_order_relaxed);
  if (dead_letters_) s.dead_letter_failures = dead_letters_->failures();
  if (pipeline_) {
    s.queued_chunks = pipeline_->QueuedChunks();
    s.queued_batches = pipeline_->QueuedBatches();
  }
  if (alerts_) {
    for (const auto& [name, d] : alerts_->SinkDeliveries()) {
      s.alert_sinks.push_back({name, d.sent, d.failed, d.retried, d.dropped});
    }
    s.alert_installs_unknown = alerts_->engine().stats().installs_unknown;
    s.alert_rounds = alerts_->rounds();
  }
  if (cluster_) {
    s.cluster = cluster_->status();
    MutexLock lock(snapshot_mu_);
    s.cluster.partitions = published_partitions_;
  }
  if (consumer_) {
    KafkaConsumerStats k = consumer_->stats();
    s.consumer_lag = k.total_lag;
    s.paused_partitions = k.paused_partitions;
    s.kafka_errors = k.errors;
    s.last_kafka_error = k.last_error;
    s.lost_offsets = k.lost_offsets;
    s.offset_resets = k.offset_resets;
    s.commit_failures = k.commit_failures;
    for (const KafkaLostOffsets& l : k.lost) {
      s.lost_partitions.push_back({l.tp.topic, l.tp.partition, l.offsets, l.last_from, l.last_to});
    }
  }
  return s;
}

}  // namespace seismo
