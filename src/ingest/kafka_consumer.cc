#include "seismo/ingest/kafka_consumer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "ingest/kafka_config.h"
#include "seismo/core/leak.h"

namespace seismo {

// librdkafka's callbacks; friends of KafkaConsumer (its header does not include librdkafka).
struct KafkaConsumerCallbacks {
  static void Rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                        rd_kafka_topic_partition_list_t* partitions, void* opaque);
  static void Commit(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                     rd_kafka_topic_partition_list_t* offsets, void* opaque);
  static void Error(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  static void Log(const rd_kafka_t* rk, int level, const char* fac, const char* buf);
};


namespace {

constexpr auto kStatsRefreshInterval = std::chrono::milliseconds(200);

std::vector<TopicPartition> ToVector(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> out;
  if (list == nullptr) return out;
  out.reserve(static_cast<size_t>(list->cnt));
  for (int i = 0; i < list->cnt; ++i) {
    out.push_back({list->elems[i].topic, list->elems[i].partition});
  }
  return out;
}

template <typename Range>
KafkaPartitionListPtr ToList(const Range& partitions) {
  KafkaPartitionListPtr list(
      rd_kafka_topic_partition_list_new(static_cast<int>(std::size(partitions))));
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
  }
  return list;
}

bool IsCooperative(rd_kafka_t* rk) {
  const char* protocol = rd_kafka_rebalance_protocol(rk);
  return protocol != nullptr && std::strcmp(protocol, "COOPERATIVE") == 0;
}

// Logs and frees an rd_kafka_error_t returned by the incremental API.
void ConsumeError(rd_kafka_error_t* error, std::string_view what) {
  if (error == nullptr) return;
  spdlog::error("kafka consumer: {} failed: {}", what, rd_kafka_error_string(error));
  rd_kafka_error_destroy(error);
}

}  // namespace

std::string ToString(const TopicPartition& tp) {
  return tp.topic + "[" + std::to_string(tp.partition) + "]";
}

Result<OffsetResetPolicy> ParseOffsetResetPolicy(std::string_view value) {
  if (value == "earliest" || value == "smallest" || value == "beginning") {
    return OffsetResetPolicy::kEarliest;
  }
  if (value == "latest" || value == "largest" || value == "end") return OffsetResetPolicy::kLatest;
  if (value == "error") return OffsetResetPolicy::kError;
  return Status::InvalidArgument("auto.offset.reset: expected earliest, latest or error, not \"" +
                                 std::string(value) + "\"");
}

// ---- KafkaMessage / KafkaMessageBatch ----

std::string_view KafkaMessage::payload() const {
  if (msg_->payload == nullptr) return {};
  return {static_cast<const char*>(msg_->payload), msg_->len};
}

std::string_view KafkaMessage::key() const {
  if (msg_->key == nullptr) return {};
  return {static_cast<const char*>(msg_->key), msg_->key_len};
}

std::string_view KafkaMessage::topic() const { return rd_kafka_topic_name(msg_->rkt); }
int32_t KafkaMessage::partition() const { return msg_->partition; }
int64_t KafkaMessage::offset() const { return msg_->offset; }

std::optional<int64_t> KafkaMessage::timestamp_ms() const {
  rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  const int64_t ts = rd_kafka_message_timestamp(msg_, &type);
  if (type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || ts < 0) return std::nullopt;
  return ts;
}

KafkaMessageBatch::~KafkaMessageBatch() { Clear(); }

KafkaMessageBatch::KafkaMessageBatch(KafkaMessageBatch&& other) noexcept
    : messages_(std::move(other.messages_)), payload_bytes_(other.payload_bytes_) {
  other.messages_.clear();
  other.payload_bytes_ = 0;
}

KafkaMessageBatch& KafkaMessageBatch::operator=(KafkaMessageBatch&& other) noexcept {
  if (this != &other) {
    Clear();
    messages_ = std::move(other.messages_);
    payload_bytes_ = other.payload_bytes_;
    other.messages_.clear();
    other.payload_bytes_ = 0;
  }
  return *this;
}

namespace {
// The batch stores const views but owns the messages, so destroying
// through a const_cast is sound.
void DestroyMessage(const rd_kafka_message_t* raw) {
  rd_kafka_message_destroy(const_cast<rd_kafka_message_t*>(raw));
}
}  // namespace

void KafkaMessageBatch::Add(rd_kafka_message_t* msg) {
  payload_bytes_ += msg->len;
  messages_.emplace_back(msg);
}

void KafkaMessageBatch::RemovePartitions(const std::set<TopicPartition>& partitions) {
  std::vector<KafkaMessage> kept;
  kept.reserve(messages_.size());
  for (const KafkaMessage& m : messages_) {
    TopicPartition tp{std::string(m.topic()), m.partition()};
    if (partitions.count(tp) != 0) {
      payload_bytes_ -= m.payload().size();
      DestroyMessage(m.raw());
    } else {
      kept.push_back(m);
    }
  }
  messages_ = std::move(kept);
}

void KafkaMessageBatch::Clear() {
  for (const KafkaMessage& m : messages_) DestroyMessage(m.raw());
  messages_.clear();
  payload_bytes_ = 0;
}

// ---- KafkaConsumer ----

KafkaConsumer::KafkaConsumer(const KafkaConsumerOptions& options, KafkaRebalanceListener* listener)
    : options_(options), listener_(listener), callbacks_(std::make_unique<CallbackTarget>(this)) {}

Result<std::unique_ptr<KafkaConsumer>> KafkaConsumer::Create(const KafkaConsumerOptions& options,
                                                             KafkaRebalanceListener* listener) {
  if (options.brokers.empty()) return Status::InvalidArgument("kafka.brokers is empty");
  if (options.group_id.empty()) return Status::InvalidArgument("kafka.group_id is empty");
  if (options.topics.empty()) return Status::InvalidArgument("kafka.topics is empty");
  // librdkafka resets an out-of-range position silently; it reports it instead with
  // "error", and HandleOffsetReset() applies the configured policy, counting what is lost.
  std::map<std::string, std::string> properties = options.properties;
  auto reset = ParseOffsetResetPolicy(
      properties.count("auto.offset.reset") != 0 ? properties["auto.offset.reset"] : std::string("earliest"));
  if (!reset) return reset.error();
  properties["auto.offset.reset"] = "error";
  auto conf = BuildKafkaConf(
      {
          {"bootstrap.servers", options.brokers},
          {"group.id", options.group_id},
          {"client.id", "seismo-consumer"},
          {"enable.auto.commit", "false"},
          {"enable.auto.offset.store", "false"},
          {"enable.partition.eof", "false"},
          // The mock (and a quiet real topic) holds an empty fetch response
          // for fetch.wait.max.ms; keep it short so new data flows quickly.
          {"fetch.wait.max.ms", "100"},
          {"fetch.error.backoff.ms", "100"},
          {"queued.min.messages", "100000"},
      },
      properties);
  if (!conf) return conf.error();

  std::unique_ptr<KafkaConsumer> consumer(new KafkaConsumer(options, listener));
  consumer->reset_policy_ = *reset;
  rd_kafka_conf_set_opaque(conf->get(), consumer->callbacks_.get());
  rd_kafka_conf_set_rebalance_cb(conf->get(), &KafkaConsumerCallbacks::Rebalance);
  rd_kafka_conf_set_offset_commit_cb(conf->get(), &KafkaConsumerCallbacks::Commit);
  rd_kafka_conf_set_error_cb(conf->get(), &KafkaConsumerCallbacks::Error);
  rd_kafka_conf_set_log_cb(conf->get(), &KafkaConsumerCallbacks::Log);

  std::array<char, 512> errstr{};
  consumer->rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf->get(), errstr.data(), errstr.size());
  if (consumer->rk_ == nullptr) {
    return Status::InvalidArgument(std::string("cannot create Kafka consumer: ") + errstr.data());
  }
  conf->release();  // owned by rk_ now
  // Serve error, log-queue and commit callbacks from Poll() as well.
  rd_kafka_poll_set_consumer(consumer->rk_);

  KafkaPartitionListPtr subscription(
      rd_kafka_topic_partition_list_new(static_cast<int>(options.topics.size())));
  for (const std::string& topic : options.topics) {
    rd_kafka_topic_partition_list_add(subscription.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  }
  const rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer->rk_, subscription.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::InvalidArgument(std::string("kafka subscribe failed: ") +
                                   rd_kafka_err2str(err));
  }
  return consumer;
}

KafkaConsumer::~KafkaConsumer() {
  if (rk_ == nullptr) return;
  auto strategy = options_.properties.find("partition.assignment.strategy");
  const bool cooperative = strategy != options_.properties.end() &&
                           strategy->second.find("cooperative-sticky") != std::string::npos;
  if (!closed_) {
    const Status s = Close();
    if (!s.ok()) spdlog::warn("kafka consumer: close: {}", s.message());
  }
  if (cooperative && !assignment_received_) {
    // librdkafka 2.0 asserts (aborting the process) when a cooperative-sticky consumer whose
    // group answered its join but never sent it an assignment is destroyed (librdkafka#4312,
    // fixed in 2.3). The handle is left to the process's end instead, its threads with it;
    // their log lines are dropped from now on.
    spdlog::warn("kafka consumer: never assigned; handle not destroyed (librdkafka#4312)");
    {
      MutexLock lock(callbacks_->mu);
      callbacks_->consumer = nullptr;
    }
    // Left on purpose: under AddressSanitizer, its leak check (at exit) is told so, or it
    // fails the process (a daemon stopped before its first assignment exited with SIGABRT).
    IgnoreLeak(rk_);
    IgnoreLeak(callbacks_.release());
    return;
  }
  rd_kafka_destroy(rk_);
}

KafkaMessageBatch KafkaConsumer::Poll(size_t max_messages, std::chrono::milliseconds timeout) {
  KafkaMessageBatch batch;
  if (closed_ || max_messages == 0) return batch;
  pending_ = &batch;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (batch.size() < max_messages) {
    int wait_ms = 0;
    if (batch.empty()) {
      wait_ms = KafkaTimeoutMs(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
    }
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk_, wait_ms);
    if (msg == nullptr) {
      if (!batch.empty() || std::chrono::steady_clock::now() >= deadline) break;
      continue;  // woke up early (a callback was served): keep waiting
    }
    if (msg->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET && msg->rkt != nullptr) {
      HandleOffsetReset({rd_kafka_topic_name(msg->rkt), msg->partition}, msg->offset,
                        rd_kafka_message_errstr(msg));
      rd_kafka_message_destroy(msg);
      continue;
    }
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        std::string reason = rd_kafka_message_errstr(msg);
        if (msg->rkt != nullptr) {
          reason = ToString({rd_kafka_topic_name(msg->rkt), msg->partition}) + ": " + reason;
        }
        RecordError(msg->err, reason, msg->err == RD_KAFKA_RESP_ERR__FATAL);
      }
      rd_kafka_message_destroy(msg);
      continue;
    }
    if (!awaiting_first_.empty()) awaiting_first_.erase({rd_kafka_topic_name(msg->rkt), msg->partition});
    batch.Add(msg);
  }
  pending_ = nullptr;
  messages_.fetch_add(batch.size(), std::memory_order_relaxed);
  bytes_.fetch_add(batch.payload_bytes(), std::memory_order_relaxed);
  RefreshStats(/*force=*/false);
  return batch;
}

Status KafkaConsumer::SetPaused(const std::vector<TopicPartition>& partitions, bool pause) {
  // Only assigned partitions whose state changes: librdkafka 2.0 may rewind a
  // partition that is resumed without being paused (librdkafka#4637).
  std::vector<TopicPartition> assigned;
  for (const TopicPartition& tp : partitions) {
    if (assignment_.count(tp) != 0 && (paused_.count(tp) != 0) != pause) assigned.push_back(tp);
  }
  if (assigned.empty()) return Status::Ok();
  KafkaPartitionListPtr list = ToList(assigned);
  const rd_kafka_resp_err_t err = pause ? rd_kafka_pause_partitions(rk_, list.get())
                                        : rd_kafka_resume_partitions(rk_, list.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Internal(std::string(pause ? "pause" : "resume") + " failed: " +
                            rd_kafka_err2str(err));
  }
  Status result = Status::Ok();
  for (int i = 0; i < list->cnt; ++i) {
    const auto& elem = list->elems[i];
    TopicPartition tp{elem.topic, elem.partition};
    if (elem.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      result = Status::Internal((pause ? "pause " : "resume ") + ToString(tp) + ": " +
                                rd_kafka_err2str(elem.err));
      continue;
    }
    if (pause) {
      paused_.insert(tp);
    } else {
      paused_.erase(tp);
    }
  }
  RefreshStats(/*force=*/true);
  return result;
}

Status KafkaConsumer::Pause(const std::vector<TopicPartition>& partitions) {
  return SetPaused(partitions, true);
}

Status KafkaConsumer::Resume(const std::vector<TopicPartition>& partitions) {
  return SetPaused(partitions, false);
}

Status KafkaConsumer::PauseAll() {
  pause_all_ = true;
  return SetPaused({assignment_.begin(), assignment_.end()}, true);
}

Status KafkaConsumer::ResumeAll() {
  pause_all_ = false;
  return SetPaused({assignment_.begin(), assignment_.end()}, false);
}

Status KafkaConsumer::Commit(const std::map<TopicPartition, int64_t>& next_offsets,
                             CommitMode mode) {
  Status s = CommitOffsets(next_offsets, mode);
  if (!s.ok()) commit_failures_.fetch_add(1, std::memory_order_relaxed);
  return s;
}

Status KafkaConsumer::CommitOffsets(const std::map<TopicPartition, int64_t>& next_offsets,
                             CommitMode mode) {
  if (closed_) return Status::Unavailable("commit after close");
  if (next_offsets.empty()) return Status::Ok();
  KafkaPartitionListPtr list(
      rd_kafka_topic_partition_list_new(static_cast<int>(next_offsets.size())));
  for (const auto& [tp, offset] : next_offsets) {
    if (offset < 0) {
      return Status::InvalidArgument("commit of negative offset for " + ToString(tp));
    }
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset =
        offset;
  }
  const rd_kafka_resp_err_t err =
      rd_kafka_commit(rk_, list.get(), mode == CommitMode::kAsync ? 1 : 0);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("commit failed: ") + rd_kafka_err2str(err));
  }
  if (mode == CommitMode::kSync) {
    for (int i = 0; i < list->cnt; ++i) {
      if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return Status::Unavailable(
            "commit of " + ToString({list->elems[i].topic, list->elems[i].partition}) +
            " failed: " + rd_kafka_err2str(list->elems[i].err));
      }
    }
  }
  return Status::Ok();
}

Result<std::map<TopicPartition, int64_t>> KafkaConsumer::Committed(
    const std::vector<TopicPartition>& partitions, std::chrono::milliseconds timeout) {
  std::map<TopicPartition, int64_t> out;
  if (partitions.empty()) return out;
  KafkaPartitionListPtr list = ToList(partitions);
  const rd_kafka_resp_err_t err = rd_kafka_committed(rk_, list.get(), KafkaTimeoutMs(timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("committed offsets: ") + rd_kafka_err2str(err));
  }
  for (int i = 0; i < list->cnt; ++i) {
    const auto& elem = list->elems[i];
    if (elem.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("committed offset of " +
                                 ToString({elem.topic, elem.partition}) + ": " +
                                 rd_kafka_err2str(elem.err));
    }
    if (elem.offset >= 0) out[{elem.topic, elem.partition}] = elem.offset;
  }
  return out;
}

KafkaGroupMetadata::~KafkaGroupMetadata() { rd_kafka_consumer_group_metadata_destroy(md_); }

std::unique_ptr<KafkaGroupMetadata> KafkaConsumer::GroupMetadata() const {
  if (closed_) return nullptr;
  rd_kafka_consumer_group_metadata_t* md = rd_kafka_consumer_group_metadata(rk_);
  if (md == nullptr) return nullptr;
  return std::make_unique<KafkaGroupMetadata>(md);
}

Status KafkaConsumer::Close() {
  if (closed_) return Status::Ok();
  const rd_kafka_resp_err_t err = rd_kafka_consumer_close(rk_);  // serves the final revoke
  closed_ = true;
  assignment_.clear();
  paused_.clear();
  RefreshStats(/*force=*/true);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("consumer close: ") + rd_kafka_err2str(err));
  }
  return Status::Ok();
}

std::vector<TopicPartition> KafkaConsumer::assignment() const {
  return {assignment_.begin(), assignment_.end()};
}

Result<std::pair<int64_t, int64_t>> KafkaConsumer::QueryWatermarks(
    const TopicPartition& tp, std::chrono::milliseconds timeout) const {
  int64_t low = -1;
  int64_t high = -1;
  const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk_, tp.topic.c_str(), tp.partition, &low,
                                                                   &high, KafkaTimeoutMs(timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("watermarks of " + ToString(tp) + ": " + rd_kafka_err2str(err));
  }
  return std::make_pair(low, high);
}

KafkaConsumerStats KafkaConsumer::stats() const {
  KafkaConsumerStats s;
  s.messages = messages_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.errors = errors_.load(std::memory_order_relaxed);
  s.rebalances = rebalances_.load(std::memory_order_relaxed);
  s.lost_offsets = lost_offsets_.load(std::memory_order_relaxed);
  s.offset_resets = offset_resets_.load(std::memory_order_relaxed);
  s.commit_failures = commit_failures_.load(std::memory_order_relaxed);
  MutexLock lock(stats_mu_);
  s.partitions = partition_stats_;
  for (const auto& [tp, lost] : lost_) s.lost.push_back(lost);
  s.last_error = last_error_;
  for (const KafkaPartitionStats& p : s.partitions) {
    if (p.lag > 0) s.total_lag += p.lag;
    if (p.paused) ++s.paused_partitions;
  }
  return s;
}

void KafkaConsumer::RefreshStats(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_refresh_ < kStatsRefreshInterval) return;
  last_refresh_ = now;

  std::vector<KafkaPartitionStats> fresh;
  fresh.reserve(assignment_.size());
  if (!assignment_.empty()) {
    KafkaPartitionListPtr list = ToList(assignment_);
    // Local, non-blocking: the application position and the cached
    // watermarks from the latest fetch responses.
    const bool have_positions = rd_kafka_position(rk_, list.get()) == RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int i = 0; i < list->cnt; ++i) {
      const auto& elem = list->elems[i];
      KafkaPartitionStats p;
      p.tp = {elem.topic, elem.partition};
      if (have_positions && elem.offset >= 0) p.next_offset = elem.offset;
      int64_t low = -1;
      int64_t high = -1;
      if (rd_kafka_get_watermark_offsets(rk_, elem.topic, elem.partition, &low, &high) ==
              RD_KAFKA_RESP_ERR_NO_ERROR &&
          high >= 0) {
        p.high_watermark = high;
      }
      if (p.next_offset >= 0 && p.high_watermark >= 0) {
        p.lag = std::max<int64_t>(0, p.high_watermark - p.next_offset);
      }
      p.paused = paused_.count(p.tp) != 0;
      fresh.push_back(std::move(p));
    }
  }
  MutexLock lock(stats_mu_);
  partition_stats_ = std::move(fresh);
}

void KafkaConsumer::RecordError(int code, const std::string& reason, bool fatal) {
  const auto err = static_cast<rd_kafka_resp_err_t>(code);
  errors_.fetch_add(1, std::memory_order_relaxed);
  LogKafkaError(log_limiter_, "consumer", err, reason, fatal);
  MutexLock lock(stats_mu_);
  last_error_ = std::string(rd_kafka_err2name(err)) + ": " + reason;
}

void KafkaConsumer::HandleAssign(rd_kafka_topic_partition_list_t* partitions) {
  assignment_received_ = true;
  const std::vector<TopicPartition> tps = ToVector(partitions);
  std::map<TopicPartition, int64_t> starts;
  if (listener_ != nullptr) starts = listener_->OnAssigned(tps);
  // Partitions the listener has no offset for start at the group's commit, else where the
  // policy says: resolved here, so librdkafka (auto.offset.reset=error) reports only
  // positions that are out of range.
  std::vector<TopicPartition> unknown;
  for (const TopicPartition& tp : tps) {
    if (auto it = starts.find(tp); it == starts.end() || it->second < 0) unknown.push_back(tp);
  }
  if (!unknown.empty() && reset_policy_ != OffsetResetPolicy::kError) {
    auto committed = Committed(unknown, std::chrono::seconds(10));
    for (const TopicPartition& tp : unknown) {
      int64_t start = reset_policy_ == OffsetResetPolicy::kEarliest ? RD_KAFKA_OFFSET_BEGINNING
                                                                     : RD_KAFKA_OFFSET_END;
      if (committed) {
        if (auto c = committed->find(tp); c != committed->end()) start = c->second;
      } else {
        start = RD_KAFKA_OFFSET_INVALID;  // librdkafka looks the commit up itself
      }
      logical_starts_[tp] = start;
    }
  }
  for (int i = 0; i < partitions->cnt; ++i) {
    auto& elem = partitions->elems[i];
    auto it = starts.find({elem.topic, elem.partition});
    elem.offset = (it != starts.end() && it->second >= 0) ? it->second : RD_KAFKA_OFFSET_INVALID;
    if (auto l = logical_starts_.find({elem.topic, elem.partition}); l != logical_starts_.end()) {
      if (elem.offset < 0) elem.offset = l->second;
      logical_starts_.erase(l);
    }
    if (elem.offset >= 0) start_offsets_[{elem.topic, elem.partition}] = elem.offset;
  }
  if (IsCooperative(rk_)) {
    ConsumeError(rd_kafka_incremental_assign(rk_, partitions), "incremental assign");
  } else {
    const rd_kafka_resp_err_t err = rd_kafka_assign(rk_, partitions);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      RecordError(err, "assign failed", /*fatal=*/false);
    }
  }
  assignment_.insert(tps.begin(), tps.end());
  for (const TopicPartition& tp : tps) {
    last_reset_.erase(tp);
    awaiting_first_.erase(tp);
  }
  spdlog::info("kafka consumer: assigned {} partitions ({} with checkpointed offsets)",
               tps.size(), starts.size());
  if (pause_all_) {
    const Status s = SetPaused(tps, true);
    if (!s.ok()) spdlog::warn("kafka consumer: pausing new partitions: {}", s.message());
  }
}

void KafkaConsumer::HandleOffsetReset(const TopicPartition& tp, int64_t failed, const std::string& reason) {
  if (assignment_.count(tp) == 0) return;  // given up since librdkafka queued the error
  if (failed < 0) {
    // "No offset" again for a partition that returned messages since it was moved: a late
    // report of an earlier lookup; acting on it would rewind. (Still awaiting its first
    // message: the lookup failed, e.g. the leader is down, so it is moved again.)
    if (last_reset_.count(tp) != 0 && awaiting_first_.count(tp) == 0) return;
    awaiting_first_.insert(tp);
  } else if (auto last = last_reset_.find(tp); last != last_reset_.end()) {
    // The same out-of-range position again, though it was moved elsewhere: stale.
    const auto [from, to] = last->second;
    if (from == failed && to != failed) return;
  }
  if (failed < 0) {  // no checkpointed or committed offset: where the policy says
    if (reset_policy_ == OffsetResetPolicy::kError) {
      RecordError(RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, ToString(tp) + ": " + reason, false);
      return;
    }
    Reposition(
        tp, failed,
        reset_policy_ == OffsetResetPolicy::kEarliest ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END);
    return;
  }
  offset_resets_.fetch_add(1, std::memory_order_relaxed);
  if (reset_policy_ == OffsetResetPolicy::kError) {
    RecordError(RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, ToString(tp) + ": " + reason, false);
    return;
  }
  // A rare event: one round trip to the leader tells which side of the log it fell off.
  auto marks = QueryWatermarks(tp, std::chrono::seconds(10));
  if (!marks) {
    RecordError(RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, marks.error().message(), false);
    Reposition(tp, failed, failed);  // try again: the next fetch reports it again if it still is
    return;
  }
  const auto [low, high] = *marks;
  if (failed < low) {
    // Retention (or DeleteRecords) removed [failed, low) before it was read: report it,
    // never skip silently, and keep reading what is left.
    const uint64_t lost = static_cast<uint64_t>(low - failed);
    lost_offsets_.fetch_add(lost, std::memory_order_relaxed);
    {
      MutexLock lock(stats_mu_);
      KafkaLostOffsets& l = lost_[tp];
      l.tp = tp;
      l.offsets += lost;
      l.last_from = failed;
      l.last_to = low;
      last_error_ = "lost offsets: " + ToString(tp) + " " + std::to_string(failed) + ".." +
                    std::to_string(low - 1) + " deleted by the broker before they were read";
    }
    spdlog::error(
        "kafka consumer: {} offsets {}..{} were deleted by the broker (retention) before seismo "
        "read them: {} record(s) lost; resuming at the log start {}",
        ToString(tp), failed, low - 1, lost, low);
    Reposition(tp, failed, low);
  } else if (failed > high) {
    const int64_t target = reset_policy_ == OffsetResetPolicy::kEarliest ? low : high;
    spdlog::warn(
        "kafka consumer: {} position {} is past the partition's end {} (truncated or "
        "recreated); restarting at {} ({})",
        ToString(tp), failed, high, target,
        reset_policy_ == OffsetResetPolicy::kEarliest ? "earliest" : "latest");
    Reposition(tp, failed, target);
  } else {
    Reposition(tp, failed, failed);  // in range again (the leader moved meanwhile): read on
  }
}

void KafkaConsumer::Reposition(const TopicPartition& tp, int64_t failed, int64_t offset) {
  last_reset_[tp] = {failed, offset};
  if (IsCooperative(rk_)) {
    KafkaPartitionListPtr list = ToList(std::vector<TopicPartition>{tp});
    list->elems[0].offset = offset;
    rd_kafka_error_t* error = rd_kafka_incremental_unassign(rk_, list.get());
    if (error == nullptr) error = rd_kafka_incremental_assign(rk_, list.get());
    ConsumeError(error, "repositioning " + ToString(tp));
  } else {
    // An eager assignment changes only as a whole: the other partitions go on
    // from their positions (what was fetched but not returned is fetched again).
    KafkaPartitionListPtr list = ToList(assignment_);
    (void)rd_kafka_position(rk_, list.get());
    for (int i = 0; i < list->cnt; ++i) {
      auto& elem = list->elems[i];
      const TopicPartition p{elem.topic, elem.partition};
      if (p == tp) {
        elem.offset = offset;
      } else if (elem.offset < 0) {  // nothing returned yet: where it was assigned to start
        auto start = start_offsets_.find(p);
        elem.offset = start != start_offsets_.end() ? start->second : RD_KAFKA_OFFSET_INVALID;
      }
    }
    const rd_kafka_resp_err_t err = rd_kafka_assign(rk_, list.get());
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      RecordError(err, "repositioning " + ToString(tp) + " failed", /*fatal=*/false);
    }
  }
  // A new assignment fetches: keep the backpressure pauses it reset (eager: all of them).
  if (!paused_.empty()) {
    KafkaPartitionListPtr list =
        IsCooperative(rk_) ? ToList(std::vector<TopicPartition>{tp}) : ToList(paused_);
    if (IsCooperative(rk_) && paused_.count(tp) == 0) return;
    (void)rd_kafka_pause_partitions(rk_, list.get());
  }
}

void KafkaConsumer::HandleRevoke(rd_kafka_topic_partition_list_t* partitions) {
  const std::vector<TopicPartition> tps = ToVector(partitions);
  const std::set<TopicPartition> revoked(tps.begin(), tps.end());
  // Fetched but not yet handed out: the next owner will read them.
  if (pending_ != nullptr) pending_->RemovePartitions(revoked);
  const bool lost = rd_kafka_assignment_lost(rk_) != 0;
  if (listener_ != nullptr) {
    if (lost) {
      listener_->OnLost(tps);
    } else {
      listener_->OnRevoking(tps);
    }
  }
  if (IsCooperative(rk_)) {
    ConsumeError(rd_kafka_incremental_unassign(rk_, partitions), "incremental unassign");
  } else {
    const rd_kafka_resp_err_t err = rd_kafka_assign(rk_, nullptr);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      RecordError(err, "unassign failed", /*fatal=*/false);
    }
  }
  for (const TopicPartition& tp : tps) {
    assignment_.erase(tp);
    paused_.erase(tp);
    last_reset_.erase(tp);
    start_offsets_.erase(tp);
    awaiting_first_.erase(tp);
  }
  spdlog::info("kafka consumer: {} {} partitions", lost ? "lost" : "revoked", tps.size());
}

void KafkaConsumerCallbacks::Rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                       rd_kafka_topic_partition_list_t* partitions,
                                       void* opaque) {
  // Served inside Poll()/Close() on the poll thread, while the consumer exists.
  KafkaConsumer* self = static_cast<KafkaConsumer::CallbackTarget*>(opaque)->OnPollThread();
  self->rebalances_.fetch_add(1, std::memory_order_relaxed);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    self->HandleAssign(partitions);
  } else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
    self->HandleRevoke(partitions);
  } else {
    self->RecordError(err, "rebalance error", /*fatal=*/false);
    if (IsCooperative(rk)) {
      ConsumeError(rd_kafka_incremental_unassign(rk, partitions), "incremental unassign");
    } else {
      (void)rd_kafka_assign(rk, nullptr);
    }
    self->assignment_.clear();
    self->paused_.clear();
  }
  self->RefreshStats(/*force=*/true);
}

void KafkaConsumerCallbacks::Commit(rd_kafka_t* /*rk*/, rd_kafka_resp_err_t err,
                                    rd_kafka_topic_partition_list_t* offsets, void* opaque) {
  KafkaConsumer* self =
      static_cast<KafkaConsumer::CallbackTarget*>(opaque)->OnPollThread();  // poll thread, as above
  // _NO_OFFSET: nothing to commit, not a failure.
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
    self->RecordError(err, "offset commit failed", /*fatal=*/false);
    return;
  }
  if (offsets == nullptr) return;
  for (int i = 0; i < offsets->cnt; ++i) {
    if (offsets->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      self->RecordError(offsets->elems[i].err,
                        "offset commit of " +
                            ToString({offsets->elems[i].topic, offsets->elems[i].partition}) +
                            " failed",
                        /*fatal=*/false);
    }
  }
}

void KafkaConsumerCallbacks::Error(rd_kafka_t* /*rk*/, int err, const char* reason,
                                  void* opaque) {
  // Served through the consumer queue (rd_kafka_poll_set_consumer), so on the poll thread.
  KafkaConsumer* self = static_cast<KafkaConsumer::CallbackTarget*>(opaque)->OnPollThread();
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  self->RecordError(code, reason, code == RD_KAFKA_RESP_ERR__FATAL);
}

void KafkaConsumerCallbacks::Log(const rd_kafka_t* rk, int level, const char* fac,
                                const char* buf) {
  // Any librdkafka thread, possibly after the consumer is gone (see ~KafkaConsumer).
  auto* target = static_cast<KafkaConsumer::CallbackTarget*>(rd_kafka_opaque(rk));
  if (target == nullptr) return;
  MutexLock lock(target->mu);
  if (target->consumer == nullptr) return;
  LogKafkaLine(target->consumer->log_limiter_, "consumer", level, fac, buf);
}

}  // namespace seismo
