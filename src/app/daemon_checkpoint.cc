// The daemon's checkpoints: the restore at Start(), the barrier the source thread takes
// (drain, settle, collect the shards' images, write, commit), and the recovery from an
// unusable checkpoint (ADR 0018).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "cluster_node.h"
#include "daemon_rebalance.h"
#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/checkpoint/checkpoint.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/shard/backoff.h"
#include "seismo/shard/pipeline.h"

namespace seismo {
namespace {

constexpr auto kBarrierTimeout = std::chrono::seconds(60);

}  // namespace

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
  pipeline_->Restore(data->counts, std::move(data->shards), data->partitions, data->source_counts);
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
  if (!SweepInternTables(std::chrono::seconds(1))) spdlog::debug("intern tables: sweep deferred");
  if (config_.checkpoint.dir.empty() && !cluster_) return;
  auto now = std::chrono::steady_clock::now();
  if (now < next_checkpoint_) return;
  // Held after the process stood still: the barrier is taken as soon as the hold ends.
  if (BarrierHeld()) return;
  // A cluster publishes at each barrier: barriers come every publish interval at the latest.
  auto interval = config_.checkpoint.interval;
  if (cluster_ && (config_.checkpoint.dir.empty() || config_.cluster.publish_interval < interval))
    interval = config_.cluster.publish_interval;
  next_checkpoint_ = now + interval;
  static_cast<void>(Checkpoint());  // a failure is counted and logged; retried next interval
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
  if (config_.checkpoint.dir.empty() && !cluster_) return true;
  const bool alerts_changed = save_alert_state_ && save_alert_state_() != alerts_at_checkpoint_;
  const bool republish = cluster_ && rebalance_ && cluster_->HasRejectedRecordsOf(rebalance_->handed.next());
  if (handed_docs_ == handed_docs_at_checkpoint_ && !alerts_changed && !republish &&
      last_checkpoint_ms_.load() != 0)
    return true;
  if (BarrierHeld()) return false;
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
  // The aggregates topic first: the local checkpoint is written once what it holds is
  // published (ADR 0024), so a restart's fast path never gets ahead of the topic.
  if (BarrierHeld()) return false;  // the process may have stood still while it drained
  if (cluster_ && !PublishToCluster(shards)) {
    checkpoint_failures_.fetch_add(1);
    return false;
  }
  const bool written = WriteCheckpointOf(std::move(shards));
  // The pipeline is idle here: a good moment to free the ids no series holds any more.
  if (!SweepInternTables(wait)) spdlog::warn("intern tables: the shards did not answer; sweep skipped");
  return written;
}

bool Daemon::BarrierHeld() {
  if (!cluster_ || !stall_guard_.Check(std::chrono::steady_clock::now())) return false;
  spdlog::debug("checkpoint: held: the process stood still past the group's session (ADR 0024, \"Zombies\")");
  return true;
}

bool Daemon::SweepInternTables(std::chrono::milliseconds timeout) {
  if (!cluster_) return pipeline_->MaybeSweep(timeout);
  // A cluster's global view and publish ledger hold ids too: the view thread pauses and
  // both are marked (only when a sweep is due: the pause waits for the view's turn).
  if (!pipeline_->SweepDue()) return true;
  return cluster_->SweepWhileViewPaused(
      [&](const Pipeline::ExtraMarks& extra) { return pipeline_->MaybeSweep(timeout, extra); });
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
  data.partitions = pipeline_->PartitionsOf(shards);
  if (cluster_ && rebalance_) {
    // A cluster's checkpoint holds only the partitions this instance owns: the state of one
    // that left (lost, or dropped late) is its next owner's, and restoring it here with an
    // offset it does not match would count documents twice.
    std::vector<ShardImage> owned;
    std::vector<std::optional<Pipeline::PartitionName>> names;
    for (size_t i = 0; i < shards.size(); ++i) {
      const auto& name = data.partitions[i];
      if (!name || !rebalance_->handed.next().contains({name->first, name->second})) continue;
      owned.push_back(std::move(shards[i]));
      names.push_back(name);
    }
    shards = std::move(owned);
    data.partitions = std::move(names);
  }
  data.source_counts = pipeline_->SourceCounts();
  if (cluster_ && rebalance_) {
    std::erase_if(data.source_counts, [&](const auto& entry) {
      return !rebalance_->handed.next().contains({entry.first.first, entry.first.second});
    });
  }
  data.shards = std::move(shards);
  data.written_at_ms = clock_->Now().ms;
  data.bucket_ms = config_.aggregate.bucket.count();
  data.counts = CountsOf(pipeline_->counters());
  data.kafka_offsets = checkpoint_offsets_;
  if (cluster_) data.kafka_offsets.clear();  // only the partitions owned now (below)
  if (rebalance_) {
    for (const auto& [tp, offset] : rebalance_->handed.next())
      data.kafka_offsets[{tp.topic, tp.partition}] = offset;
  }
  data.file_lines = file_lines_;
  if (save_alert_state_) data.alerts = save_alert_state_();
  CheckpointWriteOptions options;
  options.pause_midway_for_testing = checkpoint_pause_for_testing_;
  // A cluster without [checkpoint] dir: the aggregates topic is the only record.
  if (!config_.checkpoint.dir.empty()) {
    if (Status s = WriteCheckpoint(config_.checkpoint.dir, data, *symbols_, options); !s.ok()) {
      spdlog::error("checkpoint: {}; the previous checkpoint stays", s.message());
      checkpoint_failures_.fetch_add(1);
      return false;
    }
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

}  // namespace seismo
