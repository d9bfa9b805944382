// The daemon's publisher thread: every publish interval, the shards' latest snapshots
// merged, handed to the publish hook, then made the one readers see.
#include <chrono>
#include <thread>

#include "seismo/app/daemon.h"
#include "seismo/shard/pipeline.h"

namespace seismo {
namespace {

constexpr auto kPublishInterval = std::chrono::milliseconds(500);

}  // namespace

void Daemon::Publish() {
  ShardSet& shards = pipeline_->shards();
  const AggregateOptions o = ToAggregateOptions(config_);
  auto snap = MergeSnapshots(shards.LatestSnapshots(), *symbols_, o.bucket_ms, o.windows_ms, o.retention_ms);
  snap->built_at_ms = clock_->Now().ms;
  {
    MutexLock lock(hook_mu_);
    if (publish_hook_) publish_hook_(snap);
  }
  MutexLock lock(snapshot_mu_);
  snapshot_ = snap;
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

}  // namespace seismo
