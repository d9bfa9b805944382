#include "daemon_rebalance.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "cluster_node.h"
#include "seismo/shard/pipeline.h"

namespace seismo {

std::map<TopicPartition, int64_t> Daemon::Rebalance::OnAssigned(
    const std::vector<TopicPartition>& partitions) {
  spdlog::info("kafka: assigned {} partition(s)", partitions.size());
  daemon_.stall_guard_.MembershipKnown();
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
  // In a cluster a partition's state may be newer in the aggregates topic (another
  // instance owned it since): restored from there, and read on from where it ends.
  if (daemon_.cluster_) daemon_.RestoreFromCluster(partitions, start);
  for (const auto& [tp, offset] : start) handed.Start(tp, offset);
  assigned_.insert(partitions.begin(), partitions.end());
  daemon_.consuming_.store(!assigned_.empty(), std::memory_order_relaxed);
  return start;  // others: the group's committed offsets (or auto.offset.reset)
}

void Daemon::Rebalance::OnRevoking(const std::vector<TopicPartition>& partitions) {
  // Not the revoke of Close(): librdkafka makes it whether or not the group still counts this
  // instance as a member, so it says nothing of what this instance owns.
  if (!daemon_.closing_) daemon_.stall_guard_.MembershipKnown();
  if (daemon_.cluster_) daemon_.StopClusterAlertsIfLeaving(partitions, /*publish_last=*/true);
  // Everything handed so far is aggregated and saved first. A failure is counted and logged
  // by Checkpoint(); the commit below then holds only what the last good checkpoint holds.
  static_cast<void>(daemon_.Checkpoint());
  // Commit only offsets a checkpoint holds. A record handed to the pipeline
  // but not checkpointed (the checkpoint failed, or the shutdown budget ran
  // out) must be read again: the next owner, and this instance after a
  // restart (which starts at the later of its checkpoint and the commit),
  // start at the commit. Without [checkpoint] the commit is the only record.
  // (A cluster's barrier records offsets too: those its publish holds.)
  const bool checkpoints = !daemon_.config_.checkpoint.dir.empty() || daemon_.cluster_;
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

void Daemon::Rebalance::OnLost(const std::vector<TopicPartition>& partitions) {
  daemon_.stall_guard_.MembershipKnown();
  // In a cluster another member may own them already and have published them since: they
  // are not published again from here.
  if (daemon_.cluster_) {
    daemon_.StopClusterAlertsIfLeaving(partitions, /*publish_last=*/false);
    for (const TopicPartition& tp : partitions) handed.Forget(tp);
  }
  static_cast<void>(daemon_.Checkpoint());  // a failure is counted and logged inside
  Forget(partitions);
  spdlog::warn("kafka: lost {} partition(s)", partitions.size());
}

void Daemon::Rebalance::Forget(const std::vector<TopicPartition>& partitions) {
  if (daemon_.cluster_) daemon_.LeaveClusterPartitions(partitions);
  for (const TopicPartition& tp : partitions) {
    handed.Forget(tp);
    assigned_.erase(tp);
    std::erase_if(daemon_.reread_undated_,
                  [&](const auto& u) { return u.first.first == tp.topic && u.first.second == tp.partition; });
    daemon_.gone_partitions_.push_back(daemon_.KafkaSource(tp.topic, tp.partition));
  }
  daemon_.consuming_.store(!assigned_.empty(), std::memory_order_relaxed);
}

}  // namespace seismo
