#include "seismo/app/daemon.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "seismo/app/dead_letters.h"
#include "seismo/app/replay.h"
#include "seismo/checkpoint/checkpoint.h"
#include "seismo/ingest/handed_offsets.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/line_reader.h"
#include "seismo/shard/backoff.h"
#include "seismo/shard/pipeline.h"

namespace seismo {
namespace {

constexpr size_t kChunkBytes = 1 << 20;
constexpr auto kPublishInterval = std::chrono::milliseconds(500);
constexpr auto kBarrierTimeout = std::chrono::seconds(60);

std::optional<DocKind> KindByName(const std::string& name) {
  if (name == "main") return DocKind::kMain;
  if (name == "bhr") return DocKind::kBhr;
  if (name == "crash") return DocKind::kCrash;
  return std::nullopt;
}

}  // namespace

// Starts partitions at their checkpointed offsets, checkpoints before they go
// away and commits what that checkpoint holds, so the next owner starts right
// after it (each record counted once per group). Tracks whether this instance
// holds any partition (readiness: "consuming").
class Daemon::Rebalance final : public KafkaRebalanceListener {
 public:
  explicit Rebalance(Daemon& d) : daemon_(d) {}

  std::map<TopicPartition, int64_t> OnAssigned(const std::vector<TopicPartition>& partitions) override {
    spdlog::info("kafka: assigned {} partition(s)", partitions.size());
    // Offsets in the checkpoint are the truth for what this instance counted.
    // Another instance may have counted further since (it commits what it
    // checkpointed before giving a partition up): take the later of the two.
    std::map<TopicPartition, int64_t> start;
    for (const TopicPartition& tp : partitions) {
      auto it = daemon_.checkpoint_offsets_.find({tp.topic, tp.partition});
      if (it != daemon_.checkpoint_offsets_.end()) start[tp] = it->second;
    }
    if (!start.empty()) {
      auto committed = daemon_.consumer_->Committed(partitions, std::chrono::seconds(10));
      if (committed) {
        for (auto& [tp, offset] : start) {
          auto c = committed->find(tp);
          if (c != committed->end()) offset = std::max(offset, c->second);
        }
      } else {
        spdlog::warn("kafka: reading committed offsets failed: {}", committed.error().message());
      }
    }
    for (const auto& [tp, offset] : start) handed.Start(tp, offset);
    assigned_.insert(partitions.begin(), partitions.end());
    daemon_.consuming_.store(!assigned_.empty(), std::memory_order_relaxed);
    return start;  // others: the group's committed offsets (or auto.offset.reset)
  }

  void OnRevoking(const std::vector<TopicPartition>& partitions) override {
    daemon_.Checkpoint();  // everything handed so far is aggregated and saved first
    // Commit only offsets a checkpoint holds. A record handed to the pipeline
    // but not checkpointed (the checkpoint failed, or the shutdown budget ran
    // out) must be read again: the next owner, and this instance after a
    // restart (which starts at the later of its checkpoint and the commit),
    // start at the commit. Without [checkpoint] the commit is the only record.
    const bool checkpoints = !daemon_.config_.checkpoint.dir.empty();
    std::map<TopicPartition, int64_t> commit;
    for (const TopicPartition& tp : partitions) {
      if (checkpoints) {
        auto it = daemon_.checkpoint_offsets_.find({tp.topic, tp.partition});
        if (it != daemon_.checkpoint_offsets_.end()) commit[tp] = it->second;
      } else {
        auto it = handed.next().find(tp);
        if (it != handed.next().end()) commit[tp] = it->second;
      }
    }
    if (!commit.empty() && daemon_.consumer_) {
      Status s = daemon_.consumer_->Commit(commit, CommitMode::kSync);
      if (!s.ok()) spdlog::warn("kafka: commit before revoke failed: {}", s.message());
    }
    Forget(partitions);
    spdlog::info("kafka: revoked {} partition(s)", partitions.size());
  }

  // Taken away without a hand-over (session timeout, coordinator gone): another
  // member may own them already, so nothing is committed; what was handed is
  // still checkpointed, so a restart does not read it again.
  void OnLost(const std::vector<TopicPartition>& partitions) override {
    daemon_.Checkpoint();
    Forget(partitions);
    spdlog::warn("kafka: lost {} partition(s)", partitions.size());
  }

  // What has been handed to the pipeline. Source thread only (rebalance
  // callbacks run inside Poll() on that thread).
  HandedOffsets handed;

 private:
  void Forget(const std::vector<TopicPartition>& partitions) {
    for (const TopicPartition& tp : partitions) {
      handed.Forget(tp);
      assigned_.erase(tp);
      daemon_.gone_partitions_.push_back(daemon_.KafkaSource(tp.topic, tp.partition));
    }
    daemon_.consuming_.store(!assigned_.empty(), std::memory_order_relaxed);
  }

  Daemon& daemon_;
  std::set<TopicPartition> assigned_;  // source thread only
};

Daemon::Daemon(Config config, const SignatureGenerator* signatures, const Clock* clock)
    : config_(std::move(config)), signatures_(signatures), clock_(clock) {
  started_at_ms_ = clock_->Now().ms;
}

Daemon::~Daemon() { Stop(); }

Status Daemon::Start() {
  auto dead_letters = OpenDeadLetters(config_);
  if (!dead_letters) return dead_letters.error();
  dead_letters_ = std::move(*dead_letters);
  PipelineOptions po = ToPipelineOptions(config_);
  po.parse_delay_for_testing = parse_delay_for_testing_;
  po.apply_delay_for_testing = apply_delay_for_testing_;
  if (batch_ring_capacity_for_testing_ > 0) po.delta_ring_capacity = batch_ring_capacity_for_testing_;
  for (const std::string& f : config_.sources.files) po.sources.push_back({f, std::nullopt});
  for (const std::string& t : config_.kafka.topics) {
    auto kind = config_.kafka.topic_kinds.find(t);
    po.sources.push_back({t,
                          kind == config_.kafka.topic_kinds.end() ? std::nullopt : KindByName(kind->second),
                          /*live=*/true});
  }
  po.sources.push_back({"(other topic)", std::nullopt, /*live=*/true});
  pipeline_ = std::make_unique<Pipeline>(po, signatures_, dead_letters_.get(), clock_);
  if (Status s = RestoreCheckpoint(); !s.ok()) return s;
  Publish();  // no thread runs yet: the first alert round and the API see the restored data whole

  if (!config_.kafka.topics.empty()) {
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
  if (Status s = AddConfiguredSinks(*alerts_, config_.alerts); !s.ok()) return s;
  if (!config_.alerts.kafka_topic.empty()) {
    KafkaProducerOptions kp;
    kp.brokers = config_.kafka.brokers;
    kp.properties = config_.kafka.properties;
    kp.enqueue_timeout = std::chrono::milliseconds(0);  // never block the alert thread
    auto producer = KafkaProducer::Create(kp);
    if (!producer) return producer.error();
    alert_producer_ = std::move(*producer);
    alerts_->AddSink(std::make_unique<KafkaSink>([this](std::string_view key, std::string_view value) {
      return alert_producer_->Produce(config_.alerts.kafka_topic, key, value);
    }));
  }

  if (!restored_alert_state_.empty()) {
    Status restored = alerts_->engine().Restore(restored_alert_state_);
    if (!restored.ok()) spdlog::error("checkpoint: {}; alerts start empty", restored.message());
  }
  // Serialize() takes the engine's own lock, so the source thread may call it.
  save_alert_state_ = [this] { return alerts_->engine().Serialize(); };

  pipeline_->Start();
  publisher_thread_ = std::thread([this] { RunPublisher(); });
  alerts_->Start();
  source_thread_ = std::thread([this] { RunSource(); });
  // release: readers that see it (acquire) see every member Start() set.
  restored_.store(true, std::memory_order_release);
  return Status::Ok();
}

bool Daemon::SubmitWithBackpressure(std::unique_ptr<DocChunk> chunk) {
  if (pipeline_->TrySubmit(chunk)) return true;
  // Workers are behind: stop fetching instead of growing memory; nothing is dropped.
  if (consumer_) {
    Status paused = consumer_->PauseAll();
    if (!paused.ok()) {
      spdlog::warn("kafka: pause failed: {}", paused.message());
    } else if (!consumer_->assignment().empty()) {
      pauses_.fetch_add(1, std::memory_order_relaxed);  // only pauses that stopped fetching
    }
  }
  Backoff backoff;
  bool submitted = true;
  while (!pipeline_->TrySubmit(chunk)) {
    // Past the shutdown deadline nothing handed from now on will be checkpointed
    // (every barrier fails), so the chunk can be left unsubmitted.
    if (std::chrono::steady_clock::now() >= ShutdownDeadline()) {
      submitted = false;
      break;
    }
    backoff.Idle();
  }
  if (consumer_) {
    // Even after a failed PauseAll(): some partitions may be paused, and PauseAll()
    // keeps pausing newly assigned ones until ResumeAll().
    Status s = consumer_->ResumeAll();
    if (!s.ok()) spdlog::warn("kafka: resume failed: {}", s.message());
  }
  return submitted;
}

void Daemon::RunSource() {
  // 1. Files named in [sources], read once.
  for (size_t s = 0; s < config_.sources.files.size() && !stop_source_.load(); ++s) {
    const std::string& path = config_.sources.files[s];
    auto reader = LineReader::Open(path);
    if (!reader) {
      spdlog::error("sources: {}", reader.error().message());
      continue;
    }
    auto chunk = std::make_unique<DocChunk>();
    int64_t line_no = 0;
    const int64_t already = file_lines_[path];  // consumed before a restart
    auto submit = [&](bool last) {
      if (last) chunk->ended.push_back(SourceKey{static_cast<uint16_t>(s), -1});
      handed_docs_ += chunk->docs.size();
      SubmitWithBackpressure(std::move(chunk));
      chunk = std::make_unique<DocChunk>();
      file_lines_[path] = line_no;
      MaybeCheckpoint();
    };
    while (auto line = (*reader)->Next()) {
      ++line_no;
      if (line_no <= already) continue;
      if (line->find_first_not_of(" \t") == std::string_view::npos) continue;
      DocRef ref;
      ref.begin = static_cast<uint32_t>(chunk->data.size());
      ref.length = static_cast<uint32_t>(line->size());
      ref.source = static_cast<uint16_t>(s);
      ref.offset = line_no;
      chunk->data.append(*line);
      chunk->docs.push_back(ref);
      if (chunk->data.size() >= kChunkBytes || chunk->docs.size() >= chunk_docs_) submit(false);
      if (stop_source_.load(std::memory_order_relaxed)) break;
    }
    submit(/*last=*/true);
    if (!(*reader)->error().ok()) spdlog::error("sources: {}: {}", path, (*reader)->error().message());
    spdlog::info("sources: read {} ({} lines)", path, line_no);
  }
  sources_done_.store(true, std::memory_order_relaxed);
  if (!consumer_) {
    while (!stop_source_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      MaybeCheckpoint();
    }
    drained_ = WaitForPipeline();
    if (drained_) Checkpoint();  // a failure is logged and counted; the previous checkpoint stays
    return;
  }

  // 2. Kafka, until told to stop. Every partition is a source of its own (ADR 0017).
  std::set<SourceKey> delivering;  // partitions that delivered since they last went idle
  while (!stop_source_.load(std::memory_order_relaxed)) {
    KafkaMessageBatch batch = consumer_->Poll(chunk_docs_, std::chrono::milliseconds(100));
    auto chunk = std::make_unique<DocChunk>();
    chunk->data.reserve(batch.payload_bytes());
    for (const KafkaMessage& m : batch) {
      if (!rebalance_->handed.Accept(m.topic(), m.partition(), m.offset())) continue;  // seen already
      const SourceKey source = KafkaSource(m.topic(), m.partition());
      DocRef ref;
      ref.begin = static_cast<uint32_t>(chunk->data.size());
      ref.length = static_cast<uint32_t>(m.payload().size());
      ref.source = source.source;
      ref.partition = m.partition();
      ref.offset = m.offset();
      if (auto ts = m.timestamp_ms()) ref.transport_time = EventTime{*ts};
      chunk->data.append(m.payload());
      chunk->docs.push_back(ref);
      delivering.insert(source);
    }
    // A partition with nothing left to read (or given up) stops holding stream time back
    // until it delivers again.
    for (const KafkaPartitionStats& p : consumer_->stats().partitions) {
      if (p.lag != 0) continue;
      auto it = delivering.find(KafkaSource(p.tp.topic, p.tp.partition));
      if (it == delivering.end()) continue;
      chunk->idle.push_back(*it);
      delivering.erase(it);
    }
    for (const SourceKey& gone : gone_partitions_) {
      delivering.erase(gone);
      chunk->idle.push_back(gone);
    }
    gone_partitions_.clear();
    handed_docs_ += chunk->docs.size();
    if (!chunk->docs.empty() || !chunk->idle.empty()) SubmitWithBackpressure(std::move(chunk));
    MaybeCheckpoint();
  }
  drained_ = WaitForPipeline();
  if (drained_) Checkpoint();          // a failure is logged and counted; the previous checkpoint stays
  Status closed = consumer_->Close();  // commits the checkpointed offsets through OnRevoking
  if (!closed.ok()) spdlog::warn("kafka: close: {}", closed.message());
}

SourceKey Daemon::KafkaSource(std::string_view topic, int32_t partition) const {
  const auto& topics = config_.kafka.topics;
  const auto at = std::find(topics.begin(), topics.end(), topic);
  return SourceKey{
      static_cast<uint16_t>(config_.sources.files.size() + static_cast<size_t>(at - topics.begin())),
      partition};  // past the last topic: "(other topic)"
}

Status Daemon::RestoreCheckpoint() {
  if (config_.checkpoint.dir.empty()) return Status::Ok();
  if (restore_delay_for_testing_.count() > 0) std::this_thread::sleep_for(restore_delay_for_testing_);
  std::string problem;
  std::optional<CheckpointData> data =
      LoadCheckpoint(config_.checkpoint.dir, config_.aggregate.bucket.count(), &problem);
  if (!problem.empty()) spdlog::error("checkpoint: {}; starting empty", problem);
  if (!data) return Status::Ok();
  pipeline_->Restore(data->counts, data->shards);
  checkpoint_offsets_ = data->kafka_offsets;
  file_lines_ = data->file_lines;
  restored_alert_state_ = data->alerts;
  alerts_at_checkpoint_ = data->alerts;
  last_checkpoint_ms_.store(data->written_at_ms);
  spdlog::info("checkpoint: restored {} documents, {} partition offsets, {} files from {}",
               data->counts.documents, data->kafka_offsets.size(), data->file_lines.size(),
               config_.checkpoint.dir);
  return Status::Ok();
}

void Daemon::MaybeCheckpoint() {
  if (config_.checkpoint.dir.empty()) return;
  auto now = std::chrono::steady_clock::now();
  if (now < next_checkpoint_) return;
  next_checkpoint_ = now + config_.checkpoint.interval;
  Checkpoint();
}

std::chrono::steady_clock::time_point Daemon::ShutdownDeadline() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(shutdown_deadline_.load(std::memory_order_relaxed)));
}

bool Daemon::WaitForPipeline() {
  const auto give_up = std::chrono::steady_clock::now() + kBarrierTimeout;
  for (;;) {
    if (pipeline_->WaitIdle(std::chrono::milliseconds(50))) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= give_up || now >= ShutdownDeadline()) return false;
  }
}

bool Daemon::Checkpoint() {
  if (config_.checkpoint.dir.empty()) return true;
  const bool alerts_changed = save_alert_state_ && save_alert_state_() != alerts_at_checkpoint_;
  if (handed_docs_ == handed_docs_at_checkpoint_ && !alerts_changed && last_checkpoint_ms_.load() != 0)
    return true;
  // Documents a [sources] file still holds for the documents after them (ADR 0017) are
  // decided now, so the file positions saved cover exactly what was counted or rejected.
  // (Not through SubmitWithBackpressure: this may run inside a rebalance callback, where
  // pausing partitions is no business of ours; the workers free a ring slot by themselves.)
  auto settle = std::make_unique<DocChunk>();
  settle->settle = true;
  bool settled = true;
  for (Backoff backoff; !pipeline_->TrySubmit(settle);) {
    if (std::chrono::steady_clock::now() >= ShutdownDeadline()) {
      settled = false;
      break;
    }
    backoff.Idle();
  }
  if (!settled || !WaitForPipeline()) {
    spdlog::error("checkpoint: the pipeline did not drain in time; skipped");
    checkpoint_failures_.fetch_add(1);
    return false;
  }
  // The shards are idle: they answer at their next loop turn.
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(ShutdownDeadline() -
                                                                          std::chrono::steady_clock::now());
  const auto wait = std::clamp<std::chrono::milliseconds>(
      left, std::chrono::milliseconds(100),
      std::chrono::duration_cast<std::chrono::milliseconds>(kBarrierTimeout));
  std::vector<ShardImage> shards = pipeline_->shards().CollectImages(wait);
  if (shards.empty()) {
    spdlog::error("checkpoint: shards did not answer; skipped");
    checkpoint_failures_.fetch_add(1);
    return false;
  }
  return WriteCheckpointOf(std::move(shards));
}

bool Daemon::WriteCheckpointOf(std::vector<ShardImage> shards) {
  CheckpointData data;
  data.shards = std::move(shards);
  data.written_at_ms = clock_->Now().ms;
  data.bucket_ms = config_.aggregate.bucket.count();
  data.counts = CountsOf(pipeline_->counters());
  data.kafka_offsets = checkpoint_offsets_;
  if (rebalance_) {
    for (const auto& [tp, offset] : rebalance_->handed.next())
      data.kafka_offsets[{tp.topic, tp.partition}] = offset;
  }
  data.file_lines = file_lines_;
  if (save_alert_state_) data.alerts = save_alert_state_();
  CheckpointWriteOptions options;
  options.pause_midway_for_testing = checkpoint_pause_for_testing_;
  if (Status s = WriteCheckpoint(config_.checkpoint.dir, data, options); !s.ok()) {
    spdlog::error("checkpoint: {}; the previous checkpoint stays", s.message());
    checkpoint_failures_.fetch_add(1);
    return false;
  }
  checkpoint_offsets_ = data.kafka_offsets;
  handed_docs_at_checkpoint_ = handed_docs_;
  alerts_at_checkpoint_ = std::move(data.alerts);
  last_checkpoint_ms_.store(data.written_at_ms);
  if (consumer_ && rebalance_ && !rebalance_->handed.next().empty()) {
    // Only checkpointed offsets are ever committed: the group's commit tells a
    // partition's next owner where counting continues.
    (void)consumer_->Commit(rebalance_->handed.next(), CommitMode::kAsync);
  }
  return true;
}

void Daemon::Publish() {
  ShardSet& shards = pipeline_->shards();
  auto snap = MergeSnapshots(shards.LatestSnapshots(), config_.aggregate.bucket.count(),
                             ToAggregateOptions(config_).windows_ms, clock_->Now().ms);
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  snapshot_ = std::move(snap);
}

void Daemon::RunPublisher() {
  ShardSet& shards = pipeline_->shards();
  while (!stop_publisher_.load(std::memory_order_relaxed)) {
    shards.RequestSnapshots();
    // In steps, so that stopping does not wait out a whole interval.
    for (auto slept = std::chrono::milliseconds(0);
         slept < kPublishInterval && !stop_publisher_.load(std::memory_order_relaxed);
         slept += std::chrono::milliseconds(20)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Publish();
  }
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
  auto final_snapshot = pipeline_->FinalSnapshot();
  {
    std::lock_guard<std::mutex> lock(snapshot_mu_);
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
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  return snapshot_;
}

RecordCounts Daemon::counts() const {
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
  }
  if (consumer_) {
    KafkaConsumerStats k = consumer_->stats();
    s.consumer_lag = k.total_lag;
    s.paused_partitions = k.paused_partitions;
    s.kafka_errors = k.errors;
    s.last_kafka_error = k.last_error;
  }
  return s;
}

Aggregates Daemon::FinalAggregates() const { return pipeline_->Result(); }

}  // namespace seismo
