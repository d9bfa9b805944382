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
  const std::string alert_state = alert_holder_ && save_alert_state_ ? save_alert_state_() : std::string();
  Status s = cluster_->Publish(images, pipeline_->PartitionsOf(images), next,
                               alert_holder_ ? &alert_state : nullptr);
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
  if (takes_alerts && read) {
    if (alert_state) {
      Status restored = alerts_->engine().Restore(*alert_state);
      if (!restored.ok())
        spdlog::error("cluster: the alert state in the topic: {}; alerts start empty", restored.message());
    }
    alert_holder_ = true;
    alerts_->SetEvaluating(true);
    spdlog::info("cluster: this instance evaluates the alerts (it holds {})", ToString(alerts_partition));
  }
  for (const TopicPartition& tp : partitions) {
    const SourceKey source = KafkaSource(tp.topic, tp.partition);
    ClusterNode::Restored* r = nullptr;
    if (read) {
      auto it = read->find(tp);
      if (it == read->end()) continue;  // the topic holds nothing of it: as one instance does
      r = &it->second;
    }
    if (r == nullptr || r->degraded) {
      // Neither this instance nor the topic holds it whole: it is rebuilt from its source's
      // earliest retained offset, and the next publish replaces what the topic holds
      // (ADR 0023, "What a consumer does with a rejection").
      spdlog::warn("cluster: {}: {}; rebuilt from its earliest retained offset", ToString(tp),
                   r != nullptr ? "some of its records in the aggregates topic were rejected"
                                : "its state could not be read from the aggregates topic");
      if (!pipeline_->AdoptSource(source, {}, INT64_MIN, kRestoreTimeout))
        spdlog::error("cluster: {}: the pipeline did not take its state", ToString(tp));
      start[tp] = StartReread(tp, -1);
      continue;
    }
    auto local = start.find(tp);
    if (local != start.end() && local->second >= r->source_offset)
      continue;  // the local checkpoint is as new
    const size_t series = r->series.size();
    if (!pipeline_->AdoptSource(source, std::move(r->series), r->stream_time_ms, kRestoreTimeout)) {
      spdlog::error(
          "cluster: {}: the pipeline did not take its state; rebuilt from its earliest retained offset",
          ToString(tp));
      start[tp] = StartReread(tp, -1);
      continue;
    }
    start[tp] = r->source_offset;
    spdlog::info("cluster: {}: restored from the aggregates topic ({} series entries), from offset {}",
                 ToString(tp), series, r->source_offset);
  }
}

void Daemon::LeaveClusterPartitions(const std::vector<TopicPartition>& partitions) {
  const TopicPartition alerts_partition{config_.kafka.topics.front(), 0};
  if (alert_holder_ &&
      std::find(partitions.begin(), partitions.end(), alerts_partition) != partitions.end()) {
    // No round after the state's last publish: its next holder goes on from there.
    alerts_->SetEvaluating(false);
    alert_holder_ = false;
  }
}

}  // namespace seismo
