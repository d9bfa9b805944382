#include "seismo/app/daemon.h"

#include <fmt/format.h>
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
    // After an unusable checkpoint, the group's commits point past state that is
    // lost: those partitions are read again from their start (ADR 0018).
    std::map<TopicPartition, int64_t> start;
    std::vector<TopicPartition> reread;
    for (const TopicPartition& tp : partitions) {
      auto it = daemon_.checkpoint_offsets_.find({tp.topic, tp.partition});
      if (it != daemon_.checkpoint_offsets_.end()) {
        start[tp] = it->second;
      } else if (daemon_.reread_from_start_) {
        reread.push_back(tp);
      }
    }
    std::map<TopicPartition, int64_t> committed;
    if (!start.empty() || !reread.empty()) {
      auto c = daemon_.consumer_->Committed(partitions, std::chrono::seconds(10));
      if (c) {
        committed = std::move(*c);
      } else {
        spdlog::warn("kafka: reading committed offsets failed: {}", c.error().message());
      }
    }
    for (auto& [tp, offset] : start) {
      auto c = committed.find(tp);
      if (c != committed.end()) offset = std::max(offset, c->second);
    }
    for (const TopicPartition& tp : reread) {
      auto c = committed.find(tp);
      start[tp] = daemon_.StartReread(tp, c == committed.end() ? -1 : c->second);
    }
    for (const auto& [tp, offset] : start) handed.Start(tp, offset);
    assigned_.insert(partitions.begin(), partitions.end());
    daemon_.consuming_.store(!assigned_.empty(), std::memory_order_relaxed);
    return start;  // others: the group's committed offsets (or auto.offset.reset)
  }

  void OnRevoking(const std::vector<TopicPartition>& partitions) override {
    // Everything handed so far is aggregated and saved first. A failure is counted and logged
    // by Checkpoint(); the commit below then holds only what the last good checkpoint holds.
    static_cast<void>(daemon_.Checkpoint());
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
    static_cast<void>(daemon_.Checkpoint());  // a failure is counted and logged inside
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
      std::erase_if(daemon_.reread_undated_, [&](const auto& u) {
        return u.first.first == tp.topic && u.first.second == tp.partition;
      });
      daemon_.gone_partitions_.push_back(daemon_.KafkaSource(tp.topic, tp.partition));
    }
    daemon_.consuming_.store(!assigned_.empty(), std::memory_order_relaxed);
  }

  Daemon& daemon_;
  std::set<TopicPartition> assigned_;  // source thread only
};

Daemon::Daemon(Config config, const SignatureGenerator* signatures, const Clock* clock)
    : config_(std::move(config)), signatures_(signatures), clock_(clock), symbols_(std::make_unique<Symbols>()) {
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
  pipeline_ = std::make_unique<Pipeline>(po, symbols_.get(), signatures_, dead_letters_.get(), clock_);
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
  if (waiting_for_operator_) {
    // Nothing is consumed and nothing is checkpointed: the unusable checkpoint stays
    // as it is until an operator decides (ADR 0018).
    while (!stop_source_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    drained_ = true;
    return;
  }
  // 1. Files named in [sources], read once.
  for (size_t s = 0; s < config_.sources.files.size() && !stop_source_.load(); ++s) {
    const std::string& path = config_.sources.files[s];
    auto reader = LineReader::Open(path, config_.ingest.max_document_bytes);
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
      ref.source = static_cast<uint16_t>(s);
      ref.offset = line_no;
      AddDocument(*chunk, ref, *line, (*reader)->line_bytes(), config_.ingest.max_document_bytes);
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
    // A failure is logged and counted; the previous checkpoint stays.
    if (drained_) static_cast<void>(Checkpoint());
    return;
  }

  // 2. Kafka, until told to stop. Every partition is a source of its own (ADR 0017).
  std::set<SourceKey> delivering;  // partitions that delivered since they last went idle
  while (!stop_source_.load(std::memory_order_relaxed)) {
    KafkaMessageBatch batch = consumer_->Poll(chunk_docs_, std::chrono::milliseconds(100));
    auto chunk = std::make_unique<DocChunk>();
    chunk->data.reserve(std::min<uint64_t>(batch.payload_bytes(), kChunkBytes));
    for (const KafkaMessage& m : batch) {
      if (!rebalance_->handed.Accept(m.topic(), m.partition(), m.offset())) continue;  // seen already
      const SourceKey source = KafkaSource(m.topic(), m.partition());
      DocRef ref;
      ref.source = source.source;
      ref.partition = m.partition();
      ref.offset = m.offset();
      if (auto ts = m.timestamp_ms()) ref.transport_time = EventTime{*ts};
      if (!reread_undated_.empty()) NoteRereadTime(m.topic(), m.partition(), m.timestamp_ms());
      AddDocument(*chunk, ref, m.payload(), 0, config_.ingest.max_document_bytes);
      delivering.insert(source);
      if (chunk->data.size() >= kChunkBytes) {  // chunks stay small (32-bit offsets into them)
        handed_docs_ += chunk->docs.size();
        SubmitWithBackpressure(std::move(chunk));
        chunk = std::make_unique<DocChunk>();
      }
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
  // A failure is logged and counted; the previous checkpoint stays.
  if (drained_) static_cast<void>(Checkpoint());
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
  if (restore_hook_for_testing_) restore_hook_for_testing_();
  std::string problem;
  std::optional<CheckpointData> data =
      LoadCheckpoint(config_.checkpoint.dir, config_.aggregate.bucket.count(), *symbols_, &problem);
  if (!problem.empty()) {
    // The state it held is lost, and the group's committed offsets point past it (ADR 0018).
    const bool wait = config_.checkpoint.on_corrupt == OnCorruptCheckpoint::kWait;
    MutexLock lock(recovery_mu_);
    recovery_.problem = problem;
    recovery_.action = wait ? "wait" : "reread";
    if (wait) {
      waiting_for_operator_ = true;
      not_ready_reason_ = fmt::format(
          "checkpoint unusable ({}): nothing is consumed until an operator decides: put a good "
          "checkpoint in its place, or restart with --on-corrupt-checkpoint reread (or [checkpoint] "
          "on_corrupt = \"reread\")",
          problem);
      spdlog::error(
          "checkpoint: {}; on_corrupt = \"wait\": it stays where it is, nothing is consumed and /readyz "
          "answers 503 until an operator decides (put a good checkpoint in its place, or restart with "
          "--on-corrupt-checkpoint reread)",
          problem);
    } else {
      set_aside_pending_ = true;
      reread_from_start_ = true;
      spdlog::error(
          "checkpoint: {}; starting empty: it is moved aside before the next checkpoint is written, "
          "[sources] files are read again from their first line and every Kafka partition from its "
          "earliest retained offset, not from the offsets committed for the lost state",
          problem);
    }
  }
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
  // Intern tables past their floor: the pipeline drains and the ids no series holds any
  // more are freed (a no-op below the floor; retried at the next call when the pipeline
  // did not drain in time).
  if (!pipeline_->MaybeSweep(std::chrono::seconds(1))) spdlog::debug("intern tables: sweep deferred");
  if (config_.checkpoint.dir.empty()) return;
  auto now = std::chrono::steady_clock::now();
  if (now < next_checkpoint_) return;
  next_checkpoint_ = now + config_.checkpoint.interval;
  static_cast<void>(Checkpoint());  // a failure is counted and logged; retried next interval
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
  const bool written = WriteCheckpointOf(std::move(shards));
  // The pipeline is idle here: a good moment to free the ids no series holds any more.
  if (!pipeline_->MaybeSweep(wait)) spdlog::warn("intern tables: the shards did not answer; sweep skipped");
  return written;
}

bool Daemon::SetAsideUnusableCheckpoint() {
  if (!set_aside_pending_) return true;
  Result<std::string> aside = SetAsideCheckpoint(config_.checkpoint.dir);
  if (!aside && aside.error().code() != StatusCode::kNotFound) {  // not found: someone moved it already
    spdlog::error("checkpoint: {}; no checkpoint is written over it", aside.error().message());
    return false;
  }
  set_aside_pending_ = false;
  if (aside) {
    spdlog::warn("checkpoint: the unusable checkpoint was moved aside to {}", *aside);
    MutexLock lock(recovery_mu_);
    recovery_.set_aside_to = *aside;
  }
  return true;
}

int64_t Daemon::StartReread(const TopicPartition& tp, int64_t committed) {
  auto marks = consumer_->QueryWatermarks(tp, std::chrono::seconds(10));
  // Without the low watermark, offset 0: below the log start the consumer's
  // auto.offset.reset (earliest by default) takes the earliest retained record.
  const int64_t from = marks ? marks->first : 0;
  if (!marks) {
    spdlog::warn("kafka: {}: reading its watermarks failed: {}", ToString(tp), marks.error().message());
  }
  spdlog::warn("checkpoint: {} is read again from offset {}, its earliest retained{}", ToString(tp), from,
               committed >= 0 ? fmt::format(" (the group had committed {}: {} records are read again)",
                                            committed, std::max<int64_t>(committed - from, 0))
                              : " (the group had committed nothing)");
  MutexLock lock(recovery_mu_);
  // An empty partition has no first record to date the re-read by.
  const bool empty = marks && marks->first >= marks->second;
  if (!empty) reread_undated_.push_back({{tp.topic, tp.partition}, recovery_.reread.size()});
  recovery_.reread.push_back({ToString(tp), from, committed, empty ? -1 : 0});
  return from;
}

void Daemon::NoteRereadTime(std::string_view topic, int32_t partition, std::optional<int64_t> timestamp_ms) {
  for (auto it = reread_undated_.begin(); it != reread_undated_.end(); ++it) {
    if (it->first.second != partition || it->first.first != topic) continue;
    MutexLock lock(recovery_mu_);
    CheckpointRecovery::Partition& p = recovery_.reread[it->second];
    p.from_time_ms = timestamp_ms.value_or(-1);  // -1: the record has no timestamp
    if (timestamp_ms) {
      spdlog::warn("checkpoint: {} is read again from {}", p.partition,
                   FormatTimestamp(EventTime{*timestamp_ms}));
    }
    reread_undated_.erase(it);
    return;
  }
}

bool Daemon::WriteCheckpointOf(std::vector<ShardImage> shards) {
  if (waiting_for_operator_) return false;  // the unusable checkpoint is the operator's to judge
  // Re-reading after an unusable checkpoint: one without the offsets of an assignment would
  // let a restart resume at the group's commits, past the lost state. Until one can hold them
  // the unusable file stays in place, and a restart re-reads again (ADR 0018).
  if (reread_from_start_ && consumer_ && rebalance_->handed.next().empty()) return true;
  if (!SetAsideUnusableCheckpoint()) {
    checkpoint_failures_.fetch_add(1);
    return false;
  }
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
  if (Status s = WriteCheckpoint(config_.checkpoint.dir, data, *symbols_, options); !s.ok()) {
    spdlog::error("checkpoint: {}; the previous checkpoint stays", s.message());
    checkpoint_failures_.fetch_add(1);
    return false;
  }
  checkpoint_offsets_ = data.kafka_offsets;
  // Re-reading from the start ends once a checkpoint holds the offsets of an assignment (or
  // there is no Kafka): from then on the checkpoint is the record again.
  if (!consumer_ || !data.kafka_offsets.empty()) reread_from_start_ = false;
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
  const AggregateOptions o = ToAggregateOptions(config_);
  auto snap = MergeSnapshots(shards.LatestSnapshots(), *symbols_, o.bucket_ms, o.windows_ms, o.retention_ms);
  snap->built_at_ms = clock_->Now().ms;
  {
    MutexLock lock(snapshot_mu_);
    snapshot_ = snap;
  }
  MutexLock lock(hook_mu_);
  if (publish_hook_) publish_hook_(snap);
}

void Daemon::SetPublishHook(PublishHook hook) {
  MutexLock lock(hook_mu_);
  publish_hook_ = std::move(hook);
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
