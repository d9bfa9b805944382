#include "cluster_node.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

#include "seismo/cluster/partials.h"
#include "seismo/core/hash.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/kafka_topic_reader.h"

namespace seismo {
namespace {

constexpr auto kTransactionTimeout = std::chrono::seconds(30);
constexpr auto kViewBuildInterval = std::chrono::milliseconds(500);

// The client properties of [kafka] (security, addresses) apply to the cluster's clients
// too; librdkafka ignores, with a warning, those of another client kind.
std::map<std::string, std::string> ClientProperties(const Config& c) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : c.kafka.properties) {
    if (k.rfind("group.", 0) == 0 || k.rfind("partition.assignment", 0) == 0 || k == "auto.offset.reset" ||
        k.rfind("enable.auto", 0) == 0 || k == "isolation.level")
      continue;  // the group consumer's own
    out[k] = v;
  }
  return out;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Reads `reader`'s assigned partitions to their end, each record to `on_record`.
Status ReadToEnd(KafkaTopicReader& reader, const std::string& topic, std::chrono::milliseconds timeout,
                 const KafkaTopicReader::RecordCallback& on_record) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!reader.AtEnd()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("cluster: reading '" + topic + "' to its end took longer than " +
                                 std::to_string(timeout.count()) + " ms");
    }
    Result<size_t> n = reader.Poll(std::chrono::milliseconds(100), on_record);
    if (!n) return n.error();
  }
  return Status::Ok();
}

}  // namespace

ClusterNode::ClusterNode(const Config& config, std::string instance_id, Symbols* symbols)
    : config_(config),
      instance_id_(std::move(instance_id)),
      symbols_(symbols),
      options_(ToAggregateOptions(config)) {}

ClusterNode::~ClusterNode() {
  stop_.store(true);
  if (view_thread_.joinable()) view_thread_.join();
}

Result<std::unique_ptr<ClusterNode>> ClusterNode::Create(const Config& config, std::string instance_id,
                                                         Symbols* symbols) {
  std::unique_ptr<ClusterNode> node(new ClusterNode(config, std::move(instance_id), symbols));
  const std::string& topic = config.cluster.aggregates_topic;
  auto reader = KafkaTopicReader::Create({config.kafka.brokers, ClientProperties(config)});
  if (!reader) return reader.error();
  Result<int32_t> partitions = (*reader)->PartitionCount(topic, std::chrono::seconds(30));
  if (!partitions) {
    return Status(partitions.error().code(),
                  "cluster.aggregates_topic: " + partitions.error().message() +
                      " (create it compacted, cleanup.policy=compact: docs/scaling.md)");
  }
  node->aggregates_partitions_ = *partitions;
  auto producer = node->MakeProducer();
  if (!producer) return producer.error();
  node->producer_ = std::move(*producer);
  return node;
}

Result<std::unique_ptr<KafkaProducer>> ClusterNode::MakeProducer(const std::string& role) const {
  KafkaProducerOptions po;
  po.brokers = config_.kafka.brokers;
  po.properties = ClientProperties(config_);
  po.properties["transactional.id"] =
      "seismo/" + config_.cluster.aggregates_topic + "/" + instance_id_ + (role.empty() ? "" : "/" + role);
  po.properties["transaction.timeout.ms"] = "60000";
  po.properties["linger.ms"] = "20";
  auto producer = KafkaProducer::Create(po);
  if (!producer) return producer.error();
  if (Status s = (*producer)->InitTransactions(kTransactionTimeout); !s.ok()) return s;
  return producer;
}

int32_t ClusterNode::AggregatesPartitionOf(const std::string& topic, int32_t partition) const {
  // Every record of one source partition in one aggregates partition, in the order written.
  const std::string name = topic + "/" + std::to_string(partition);
  return static_cast<int32_t>(Hash64(name) % static_cast<uint64_t>(aggregates_partitions_));
}

Status ClusterNode::Publish(const std::vector<ShardImage>& images,
                            const std::vector<std::optional<Pipeline::PartitionName>>& names,
                            const std::map<TopicPartition, int64_t>& next_offsets,
                            const std::map<Pipeline::PartitionName, RecordCounts>& source_counts,
                            const KafkaGroupMetadata* group) {
  const auto& topics = config_.kafka.topics;
  struct Part {
    std::vector<SeriesImage> series;
    int64_t stream_time_ms = INT64_MIN;
    ShardCounters counters;  // its images' summed
    CrashIds crash_ids;      // its images' remembered
  };
  std::map<TopicPartition, Part> parts;
  for (const auto& [tp, offset] : next_offsets) {
    if (std::find(topics.begin(), topics.end(), tp.topic) != topics.end()) parts[tp];
  }
  for (size_t i = 0; i < images.size() && i < names.size(); ++i) {
    if (!names[i]) continue;
    auto it = parts.find({names[i]->first, names[i]->second});
    if (it == parts.end()) continue;  // not ours to publish (a file, a partition not assigned)
    it->second.series.insert(it->second.series.end(), images[i].series.begin(), images[i].series.end());
    it->second.stream_time_ms = std::max(it->second.stream_time_ms, images[i].stream_time_ms);
    AddCounts(it->second.counters, images[i].counters);
    AddCrashIds(it->second.crash_ids, images[i]);
  }
  std::map<TopicPartition, std::vector<std::string>> bad;
  {
    MutexLock lock(mu_);
    bad = bad_keys_;
  }
  std::vector<std::pair<int32_t, OutgoingRecord>> out;
  for (auto& [tp, part] : parts) {
    // A rejected record of a partition this instance owns: the partition is published
    // again whole, which replaces the bad record under its key (ADR 0023).
    auto bad_it = bad.find(tp);
    if (bad_it != bad.end()) {
      spdlog::warn("cluster: {}: {} record(s) of it were rejected; publishing it again whole", ToString(tp),
                   bad_it->second.size());
      ledger_.Resend(tp.topic, tp.partition);
    }
    const std::vector<PartialRecord> partials =
        SplitIntoPartials(part.series, {tp.topic, tp.partition, 0, 0}, options_.bucket_ms,
                          next_offsets.at(tp), part.stream_time_ms, instance_id_, *symbols_);
    CountsRecord counts{tp.topic, tp.partition, next_offsets.at(tp), instance_id_, {}};
    auto counted = source_counts.find({tp.topic, tp.partition});
    if (counted != source_counts.end()) counts.counts.records = counted->second;
    counts.counts.shards = part.counters;
    std::vector<OutgoingRecord> records;
    static const std::vector<std::string> kNoBadKeys;
    // A bad key the partition no longer has is deleted.
    ledger_.Diff(counts, partials, part.crash_ids, *symbols_, records,
                 bad_it != bad.end() ? bad_it->second : kNoBadKeys);
    const int32_t to = AggregatesPartitionOf(tp.topic, tp.partition);
    for (OutgoingRecord& r : records) out.emplace_back(to, std::move(r));
  }
  if (out.empty()) {
    ledger_.Commit();  // offsets and hashes as they are: nothing was due
    return Status::Ok();
  }
  std::map<TopicPartition, int64_t> offsets;
  for (const auto& [tp, part] : parts) offsets[tp] = next_offsets.at(tp);
  bool commit_failed = false;
  if (Status s = Transact(producer_, "", out, offsets, group, &commit_failed); !s.ok()) {
    // The next publish sends again what differs from the last commit; after a failed commit,
    // whose records may still land, what differs from either (ADR 0024, "A commit that
    // times out").
    if (commit_failed) {
      ledger_.Uncertain();
    } else {
      ledger_.Abort();
    }
    publish_failures_.fetch_add(1);
    return s;
  }
  ledger_.Commit();
  publishes_.fetch_add(1);
  records_published_.fetch_add(out.size());
  last_publish_ms_.store(NowMs());
  return Status::Ok();
}

Status ClusterNode::CommitAlertState(const std::string& state) {
  MutexLock lock(alerts_mu_);
  if (state == published_alert_state_) return Status::Ok();
  if (!alerts_producer_) {
    auto producer = MakeProducer("alerts");
    if (!producer) return Status::Unavailable("cluster: the alerts' producer: " + producer.error().message());
    alerts_producer_ = std::move(*producer);
  }
  // In aggregates partition 0, whose records a new holder reads (ADR 0024, "Alerts").
  const std::vector<std::pair<int32_t, OutgoingRecord>> out = {
      {0, OutgoingRecord{AlertStateKey(), EncodeAlertState({instance_id_, NowMs(), state})}}};
  if (Status s = Transact(alerts_producer_, "alerts", out); !s.ok()) return s;
  published_alert_state_ = state;
  return Status::Ok();
}

Status ClusterNode::Transact(std::unique_ptr<KafkaProducer>& producer, const std::string& role,
                             const std::vector<std::pair<int32_t, OutgoingRecord>>& out,
                             const std::map<TopicPartition, int64_t>& offsets,
                             const KafkaGroupMetadata* group, bool* commit_failed) {
  const std::string& topic = config_.cluster.aggregates_topic;
  Status s = producer->BeginTransaction(kTransactionTimeout);
  for (size_t i = 0; s.ok() && i < out.size(); ++i) {
    const auto& [partition, r] = out[i];
    s = r.value ? producer->Produce(topic, r.key, *r.value, partition)
                : producer->ProduceTombstone(topic, r.key, partition);
  }
  if (s.ok() && group != nullptr && !offsets.empty()) {
    s = producer->SendOffsetsToTransaction(offsets, *group, kTransactionTimeout);
    if (!s.ok()) offsets_refused_.fetch_add(1);
  }
  if (s.ok()) {
    s = producer->CommitTransaction(kTransactionTimeout);
    if (!s.ok() && commit_failed != nullptr) *commit_failed = true;
  } else {
    Status aborted = producer->AbortTransaction(kTransactionTimeout);
    if (!aborted.ok()) spdlog::warn("cluster: {}", aborted.message());
  }
  if (s.ok()) return s;
  if (s.code() == StatusCode::kFailedPrecondition) {
    // Fenced or broken for good: a new producer takes the transactional id back (another
    // live instance with the same instance_id would fence it again: the id must be unique).
    auto again = MakeProducer(role);
    if (again) {
      producer = std::move(*again);
    } else {
      spdlog::error("cluster: a new transactional producer: {}", again.error().message());
    }
  }
  return Status::Unavailable("cluster: publish to '" + topic + "' failed: " + s.message());
}

Result<std::map<TopicPartition, ClusterNode::Restored>> ClusterNode::ReadPartitions(
    const std::vector<TopicPartition>& tps, std::chrono::milliseconds timeout,
    std::optional<std::string>* alert_state) {
  std::map<TopicPartition, Restored> out;
  if (tps.empty()) return out;
  std::set<int32_t> wanted;
  for (const TopicPartition& tp : tps) wanted.insert(AggregatesPartitionOf(tp.topic, tp.partition));
  if (alert_state != nullptr) wanted.insert(0);
  // Only the partitions asked for: others share their aggregates partition.
  Result<std::unique_ptr<GlobalView>> read = ReadView(
      {wanted.begin(), wanted.end()}, timeout,
      [&](std::string_view k) {
        std::optional<RecordKey> key = DecodeRecordKey(k);
        return !key || key->kind == RecordKind::kAlertState ||
               std::find(tps.begin(), tps.end(), TopicPartition{key->where.topic, key->where.partition}) !=
                   tps.end();
      },
      /*keep_crash_ids=*/true);
  if (!read) return read.error();
  const GlobalView& view = **read;
  if (alert_state != nullptr) {
    *alert_state = std::nullopt;
    if (view.alert_state()) *alert_state = view.alert_state()->state;
    MutexLock lock(alerts_mu_);
    if (*alert_state) published_alert_state_ = **alert_state;
  }
  for (const TopicPartition& tp : tps) {
    std::optional<GlobalView::PartitionState> state = view.StateOf(tp.topic, tp.partition);
    if (!state) continue;
    ledger_.Seed(tp.topic, tp.partition, state->crash_id_chunks);
    Restored& r = out[tp];
    r.state.series = std::move(state->series);
    r.state.counts = state->counts.value_or(PartitionCounts{});
    r.state.stream_time_ms = state->status.stream_time_ms;
    r.state.crash_ids = std::move(state->crash_ids);
    r.source_offset = state->status.source_offset;
    r.degraded = state->status.degraded();
  }
  return out;
}

bool ClusterNode::HasRejectedRecordsOf(const std::map<TopicPartition, int64_t>& owned) const {
  MutexLock lock(mu_);
  for (const auto& [tp, keys] : bad_keys_) {
    if (owned.contains(tp)) return true;
  }
  return false;
}

void ClusterNode::Forget(const TopicPartition& tp) { ledger_.Forget(tp.topic, tp.partition); }

void ClusterNode::Start() {
  view_thread_ = std::thread([this] { RunView(); });
}

ClusterNode::View ClusterNode::view() const {
  MutexLock lock(mu_);
  return {snapshot_, counts_, partitions_};
}

void ClusterNode::RunView() {
  const std::string& topic = config_.cluster.aggregates_topic;
  std::unique_ptr<KafkaTopicReader> reader;
  bool changed = false;
  auto next_build = std::chrono::steady_clock::now();
  while (!stop_.load()) {
    if (!reader) {
      auto r = KafkaTopicReader::Create({config_.kafka.brokers, ClientProperties(config_)});
      Status s = r ? (*r)->Assign(topic, {}, std::chrono::seconds(10)) : r.error();
      if (!s.ok()) {
        {
          MutexLock lock(mu_);
          view_error_ = s.message();
        }
        // Try again in a second (stop-aware).
        for (int i = 0; i < 10 && !stop_.load(); ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      reader = std::move(*r);
      MutexLock turn(view_mu_);
      live_view_ = std::make_unique<GlobalView>(options_, symbols_);
    }
    MutexLock turn(view_mu_);  // a sweep waits for the turn's end (SweepWhileViewPaused)
    GlobalView* view = live_view_.get();
    Result<size_t> n = reader->Poll(std::chrono::milliseconds(100), [&](const KafkaTopicRecord& r) {
      if (auto rejected = view->Apply(r.key, r.value, r.timestamp_ms)) spdlog::warn("cluster: {}", *rejected);
      changed = true;
    });
    if (!n) {
      MutexLock lock(mu_);
      view_error_ = n.error().message();
      reader.reset();  // read the topic again from its start
      continue;
    }
    // The first view once the topic was read to its end; then one per interval of changes.
    const auto now = std::chrono::steady_clock::now();
    if (!reader->AtEnd() || (!changed && snapshot() != nullptr) || now < next_build) continue;
    std::shared_ptr<const Snapshot> built = view->Build();
    next_build = now + kViewBuildInterval;
    changed = false;
    std::vector<ClusterStatus::Partition> partitions;
    for (const GlobalView::PartitionStatus& p : view->Partitions()) {
      partitions.push_back({p.topic, p.partition, p.owner, p.source_offset, p.stream_time_ms,
                            p.latest_record_ms, p.buckets, p.rejected, p.degraded()});
    }
    std::map<TopicPartition, std::vector<std::string>> bad;
    for (auto& [id, keys] : view->BadKeys()) bad[{id.first, id.second}] = std::move(keys);
    // The view this one replaces is freed after the lock (see Daemon::Publish).
    std::shared_ptr<const Snapshot> replaced;
    MutexLock lock(mu_);
    replaced = std::exchange(snapshot_, std::move(built));
    counts_ = view->counts();
    partitions_ = std::move(partitions);
    bad_keys_ = std::move(bad);
    rejected_ = view->rejected();
    view_error_.clear();
  }
}

Result<std::unique_ptr<GlobalView>> ClusterNode::ReadView(const std::vector<int32_t>& partitions,
                                                          std::chrono::milliseconds timeout,
                                                          const std::function<bool(std::string_view)>& keep,
                                                          bool keep_crash_ids) {
  auto reader = KafkaTopicReader::Create({config_.kafka.brokers, ClientProperties(config_)});
  if (!reader) return reader.error();
  const std::string& topic = config_.cluster.aggregates_topic;
  if (Status s = (*reader)->Assign(topic, partitions, timeout); !s.ok()) return s;
  auto view = std::make_unique<GlobalView>(options_, symbols_, keep_crash_ids);
  Status read = ReadToEnd(**reader, topic, timeout, [&](const KafkaTopicRecord& r) {
    if (keep && !keep(r.key)) return;
    if (auto rejected = view->Apply(r.key, r.value, r.timestamp_ms)) spdlog::warn("cluster: {}", *rejected);
  });
  if (!read.ok()) return read;
  return view;
}

Result<ClusterNode::View> ClusterNode::ReadWholeView(std::chrono::milliseconds timeout) {
  Result<std::unique_ptr<GlobalView>> view = ReadView({}, timeout, nullptr);
  if (!view) return view.error();
  return View{(*view)->Build(), (*view)->counts(), {}};
}

bool ClusterNode::SweepWhileViewPaused(const std::function<bool(const Pipeline::ExtraMarks&)>& sweep) {
  MutexLock paused(view_mu_);
  const GlobalView* view = live_view_.get();
  return sweep([&](std::vector<uint64_t>& text, std::vector<uint64_t>& stacks) {
    if (view != nullptr) view->MarkIds(text, stacks);
    ledger_.MarkIds(text, stacks);
  });
}

ClusterStatus ClusterNode::status() const {
  ClusterStatus s;
  s.enabled = true;
  s.instance_id = instance_id_;
  s.aggregates_topic = config_.cluster.aggregates_topic;
  s.publishes = publishes_.load();
  s.publish_failures = publish_failures_.load();
  s.publish_offsets_refused = offsets_refused_.load();
  s.records_published = records_published_.load();
  s.last_publish_ms = last_publish_ms_.load();
  MutexLock lock(mu_);
  s.partitions = partitions_;
  for (size_t r = 0; r < kRecordRejectCount; ++r) {
    s.rejected.emplace_back(std::string(RecordRejectName(static_cast<RecordReject>(r))), rejected_[r]);
  }
  s.view_error = view_error_;
  return s;
}

}  // namespace seismo
