// The daemon's part in a cluster (SPEC §9, ADR 0024): each barrier publishes what changed
// to the aggregates topic, and each assignment restores a partition's state from it.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "cluster_node.h"
#include "daemon_rebalance.h"
#include "seismo/app/daemon.h"
#include "seismo/shard/pipeline.h"

namespace seismo {
namespace {

constexpr auto kRestoreTimeout = std::chrono::seconds(60);

}  // namespace

bool Daemon::PublishToCluster(const std::vector<ShardImage>& images) {
  std::map<TopicPartition, int64_t> next;
  if (rebalance_) next = rebalance_->handed.next();
  // The group membership now: a publish of partitions this instance no longer owns (it has
  // not yet seen them go) is refused by the group's coordinator (ADR 0024, "Zombies").
  const std::unique_ptr<KafkaGroupMetadata> group = consumer_ ? consumer_->GroupMetadata() : nullptr;
  Status s = cluster_->Publish(images, pipeline_->PartitionsOf(images), next, pipeline_->SourceCounts(),
                               group.get());
  if (!s.ok())
    spdlog::error("{}; the barrier's checkpoint is skipped, the next one publishes again", s.message());
  return s.ok();
}

void Daemon::RestoreFromCluster(const std::vector<TopicPartition>& partitions,
                                std::map<TopicPartition, int64_t>& start) {
  // The alerts go with the first topic's partition 0 (ADR 0024, "Alerts"): its new holder
  // takes the engine's state from the topic before it evaluates.
  const TopicPartition alerts_partition{config_.kafka.topics.front(), 0};
  const bool takes_alerts =
      std::find(partitions.begin(), partitions.end(), alerts_partition) != partitions.end();
  std::optional<std::string> alert_state;
  Result<std::map<TopicPartition, ClusterNode::Restored>> read =
      cluster_->ReadPartitions(partitions, kRestoreTimeout, takes_alerts ? &alert_state : nullptr);
  if (!read) spdlog::error("{}", read.error().message());
  if (takes_alerts) {
    if (alert_state) {
      Status restored = alerts_->engine().Restore(*alert_state);
      if (!restored.ok())
        spdlog::error("cluster: the alert state in the topic: {}; alerts start empty", restored.message());
    } else if (!read) {
      spdlog::warn("cluster: the alert state could not be read; alerts go on from this instance's own");
    }
    alert_holder_ = true;  // even unread: someone must evaluate
    alerts_->SetEvaluating(true);
    spdlog::info("cluster: this instance evaluates the alerts (it holds {})", ToString(alerts_partition));
  }
  for (const TopicPartition& tp : partitions) {
    const SourceKey source = KafkaSource(tp.topic, tp.partition);
    // What this instance holds of it: the state its local checkpoint restored, up to that
    // checkpoint's offset (an entry is erased when the partition leaves: Rebalance::Forget).
    // (A flag and an offset: gcc 12 warns an optional one may be read uninitialised.)
    auto held = checkpoint_offsets_.find({tp.topic, tp.partition});
    const bool local = held != checkpoint_offsets_.end();
    const int64_t local_offset = local ? held->second : 0;
    ClusterNode::Restored* r = nullptr;
    if (read) {
      auto it = read->find(tp);
      if (it != read->end()) r = &it->second;
    }
    if (!read && local) {
      // The topic could not be read: what this instance holds, read on from its offset, is
      // exact; its next publish replaces the topic's records.
      start[tp] = local_offset;
      continue;
    }
    if (read && r == nullptr) {
      // Nothing published of it: as one instance does (its own state, else the group's commit).
      if (local) start[tp] = local_offset;
      continue;
    }
    if (r == nullptr || r->degraded) {
      // Neither this instance nor the topic holds it whole: it is rebuilt from its source's
      // earliest retained offset, and the next publish replaces what the topic holds
      // (ADR 0023, "What a consumer does with a rejection").
      spdlog::warn("cluster: {}: {}; rebuilt from its earliest retained offset", ToString(tp),
                   r != nullptr ? "some of its records in the aggregates topic were rejected"
                                : "its state could not be read from the aggregates topic");
      const Pipeline::Adoption emptied = pipeline_->AdoptSource(source, MovedPartition{}, kRestoreTimeout);
      if (emptied == Pipeline::Adoption::kQueued)
        spdlog::warn("cluster: {}: the shards take its empty state later, before its documents",
                     ToString(tp));
      if (emptied == Pipeline::Adoption::kRefused) {
        // Whatever it held is still there: never read again on top of it.
        spdlog::error("cluster: {}: the pipeline did not drop its state; read on from {}", ToString(tp),
                      local ? std::to_string(local_offset) : std::string("the group's commit"));
        if (local) start[tp] = local_offset;
        continue;
      }
      checkpoint_offsets_.erase({tp.topic, tp.partition});
      start[tp] = StartReread(tp, -1);
      continue;
    }
    if (local && local_offset >= r->source_offset) {
      start[tp] = local_offset;  // the local checkpoint is as new
      continue;
    }
    const size_t series = r->state.series.size();
    size_t crash_ids = 0;
    for (const auto& [epoch, ids] : r->state.crash_ids) crash_ids += ids.size();
    const Pipeline::Adoption adopted = pipeline_->AdoptSource(source, std::move(r->state), kRestoreTimeout);
    if (adopted == Pipeline::Adoption::kRefused) {
      // Nothing changed: what this instance holds of it (if anything) reads on from where it is.
      spdlog::error("cluster: {}: the pipeline did not take its state; read on from {}", ToString(tp),
                    local ? std::to_string(local_offset) : std::string("the group's commit"));
      if (local) start[tp] = local_offset;
      continue;
    }
    // Queued: every shard takes the state before the documents read from here (never a
    // local offset on top of it: what the topic counted would count twice).
    if (adopted == Pipeline::Adoption::kQueued)
      spdlog::warn("cluster: {}: the shards take its state later, before its documents", ToString(tp));
    checkpoint_offsets_[{tp.topic, tp.partition}] = r->source_offset;
    start[tp] = r->source_offset;
    spdlog::info(
        "cluster: {}: restored from the aggregates topic ({} series entries, {} crash ids), from offset {}",
        ToString(tp), series, crash_ids, r->source_offset);
  }
}

void Daemon::StopClusterAlertsIfLeaving(const std::vector<TopicPartition>& partitions, bool publish_last) {
  const TopicPartition alerts_partition{config_.kafka.topics.front(), 0};
  if (!alert_holder_ || std::find(partitions.begin(), partitions.end(), alerts_partition) == partitions.end())
    return;
  // No round after this. A revoke commits the state its next holder goes on from (the last
  // round committed it already, unless that commit failed); a loss commits nothing (another
  // member may hold the alerts already).
  alerts_->SetEvaluating(false);
  alert_holder_ = false;
  if (!publish_last) return;
  if (Status s = cluster_->CommitAlertState(alerts_->engine().Serialize()); !s.ok())
    spdlog::warn("{}; the next holder goes on from the state the last round committed", s.message());
}

void Daemon::LeaveClusterPartitions(const std::vector<TopicPartition>& partitions) {
  // (The alerts left already: StopClusterAlertsIfLeaving.) Their state is their next owner's now (it restores
  // it from the aggregates topic).
  std::vector<SourceKey> sources;
  for (const TopicPartition& tp : partitions) {
    sources.push_back(KafkaSource(tp.topic, tp.partition));
    cluster_->Forget(tp);
    checkpoint_offsets_.erase({tp.topic, tp.partition});
  }
  if (!pipeline_->DropSources(sources, kRestoreTimeout))
    spdlog::error("cluster: the pipeline did not drop the state of {} partition(s) that left",
                  sources.size());
}

}  // namespace seismo
