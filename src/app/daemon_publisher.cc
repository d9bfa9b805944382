// The daemon's publisher thread: every publish interval, the shards' latest snapshots
// merged, made the one readers see, then handed to the publish hook.
#include <chrono>
#include <thread>
#include <utility>

#include "cluster_node.h"
#include "seismo/app/daemon.h"
#include "seismo/shard/pipeline.h"

namespace seismo {
namespace {

constexpr auto kPublishInterval = std::chrono::milliseconds(500);

}  // namespace

void Daemon::Publish() {
  ShardSet& shards = pipeline_->shards();
  const AggregateOptions o = ToAggregateOptions(config_);
  // A cluster's readers see the global view, read back from the aggregates topic; until it
  // was read once, what this instance holds.
  ClusterNode::View view;
  if (cluster_) view = cluster_->view();
  const std::shared_ptr<const Snapshot>& global = view.snapshot;
  if (global && global == last_global_) return;  // nothing new was read
  last_global_ = global;
  std::shared_ptr<Snapshot> made = global
                                       ? std::make_shared<Snapshot>(*global)
                                       : MergeSnapshots(shards.LatestSnapshots(), *symbols_, o.bucket_ms,
                                                        o.windows_ms, o.retention_ms, shards.routed_by_key());
  made->built_at_ms = clock_->Now().ms;
  // Freeing a snapshot of 10^6 series took 50-90 ms under full ingest: whoever lets go of it
  // last (an HTTP request in flight, 4 times in 69 in a 20 s bench) hands it to the release
  // thread instead (core/deferred_release.h).
  const std::shared_ptr<const Snapshot> snap = release_->Wrap<const Snapshot>(std::move(made));
  // The replaced one is let go of after the lock, which every request takes.
  std::shared_ptr<const Snapshot> replaced;
  {
    MutexLock lock(snapshot_mu_);
    replaced = std::exchange(snapshot_, snap);
    if (global) {
      published_partitions_ = std::move(view.partitions);
      view_counts_ = view.counts;
    }
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
  // Sleeps in steps until `until` or done(), so that stopping does not wait out an interval.
  auto pause_until = [this](std::chrono::steady_clock::time_point until, std::chrono::milliseconds step,
                            const auto& done) {
    while (!stop_publisher_.load(std::memory_order_relaxed) && !done() &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(step);
    }
  };
  while (!stop_publisher_.load(std::memory_order_relaxed)) {
    const auto started = std::chrono::steady_clock::now();
    if (cluster_) {
      // The global view is read back from the aggregates topic: the shards' snapshots are
      // not asked for (nobody would take them from their rings).
      Publish();
      pause_until(started + kPublishInterval, std::chrono::milliseconds(20), [] { return false; });
      continue;
    }
    const uint64_t epoch = pipeline_->RequestSnapshots();
    // Each shard takes its snapshot once it has applied the chunks before the request's cut:
    // publish as soon as all have, so a document handed over before the request is visible
    // within milliseconds of it, not an interval later (issue 19's freshness). Never some
    // shards' new snapshots beside others' old ones: that is no cut through the input, and a
    // ratio of two tables on different shards would be off (ADR 0032). A shard slower than
    // the interval delays the publish; only stopping ends the wait.
    pause_until(std::chrono::steady_clock::time_point::max(), std::chrono::milliseconds(2),
                [&] { return shards.SnapshotsAnswered(epoch); });
    if (!shards.SnapshotsAnswered(epoch)) break;  // stopping
    Publish();
    pause_until(started + kPublishInterval, std::chrono::milliseconds(20), [] { return false; });
  }
}

}  // namespace seismo
