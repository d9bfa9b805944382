#include "seismo/ingest/kafka_producer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <utility>

#include "ingest/kafka_config.h"

namespace seismo {

namespace {

// A transaction call's outcome: ok, fatal (kFailedPrecondition), or failed (kUnavailable).
// Takes ownership of `error`.
Status TxnStatus(std::string_view what, rd_kafka_error_t* error) {
  if (error == nullptr) return Status::Ok();
  std::string message = std::string(what) + ": " + rd_kafka_error_string(error);
  const bool fatal = rd_kafka_error_is_fatal(error) != 0;
  rd_kafka_error_destroy(error);
  if (fatal) return Status::FailedPrecondition(std::move(message));
  return Status::Unavailable(std::move(message));
}

}  // namespace

KafkaProducer::KafkaProducer(const KafkaProducerOptions& options) : options_(options) {}

Result<std::unique_ptr<KafkaProducer>> KafkaProducer::Create(const KafkaProducerOptions& options) {
  if (options.max_in_flight < 1) {
    return Status::InvalidArgument("producer max_in_flight must be at least 1");
  }
  auto conf = BuildKafkaConf(
      {
          {"bootstrap.servers", options.brokers},
          {"client.id", "seismo-producer"},
          {"linger.ms", "5"},
          {"queue.buffering.max.messages", std::to_string(options.max_in_flight)},
      },
      options.properties);
  if (!conf) return conf.error();

  std::unique_ptr<KafkaProducer> producer(new KafkaProducer(options));
  rd_kafka_conf_set_opaque(conf->get(), producer.get());
  rd_kafka_conf_set_dr_msg_cb(conf->get(), &KafkaProducer::DeliveryReport);
  rd_kafka_conf_set_error_cb(conf->get(), &KafkaProducer::ErrorCallback);
  rd_kafka_conf_set_log_cb(conf->get(), &KafkaProducer::LogCallback);

  std::array<char, 512> errstr{};
  producer->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf->get(), errstr.data(), errstr.size());
  if (producer->rk_ == nullptr) {
    return Status::InvalidArgument(std::string("cannot create Kafka producer: ") + errstr.data());
  }
  conf->release();  // owned by rk_ now
  return producer;
}

KafkaProducer::~KafkaProducer() {
  if (rk_ == nullptr) return;
  rd_kafka_flush(rk_, KafkaTimeoutMs(options_.close_timeout));
  const int left = rd_kafka_outq_len(rk_);
  if (left > 0) {
    spdlog::warn("kafka producer: closing with {} messages still undelivered after {} ms", left,
                 options_.close_timeout.count());
  }
  rd_kafka_destroy(rk_);
}

Status KafkaProducer::Produce(const std::string& topic, std::string_view key,
                              std::string_view value, int32_t partition,
                              std::optional<int64_t> timestamp_ms) {
  return Enqueue(topic, key, value, partition, timestamp_ms);
}

Status KafkaProducer::ProduceTombstone(const std::string& topic, std::string_view key, int32_t partition) {
  return Enqueue(topic, key, std::nullopt, partition, std::nullopt);
}

Status KafkaProducer::Enqueue(const std::string& topic, std::string_view key,
                              std::optional<std::string_view> value, int32_t partition,
                              std::optional<int64_t> timestamp_ms) {
  // A plain time point and a flag: gcc 12 at -O1 under TSan warns an optional one may be
  // read uninitialised.
  const bool bounded = options_.enqueue_timeout.has_value();
  const auto deadline = std::chrono::steady_clock::now() +
                        options_.enqueue_timeout.value_or(decltype(options_.enqueue_timeout)::value_type{});
  // The vu-array form of rd_kafka_producev (its macros use C casts). Key and
  // value pointers are non-const in the union but, with MSG_F_COPY, only read.
  std::array<rd_kafka_vu_t, 6> vus{};
  vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[0].u.cstr = topic.c_str();
  vus[1].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[1].u.i32 = partition;
  vus[2].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[2].u.i = RD_KAFKA_MSG_F_COPY;
  vus[3].vtype = RD_KAFKA_VTYPE_VALUE;
  // A null pointer is a tombstone (a value of no bytes is not).
  vus[3].u.mem.ptr = value ? const_cast<char*>(value->data() != nullptr ? value->data() : "") : nullptr;
  vus[3].u.mem.size = value ? value->size() : 0;
  vus[4].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
  vus[4].u.i64 = timestamp_ms.value_or(0);  // 0 = now
  size_t vu_count = 5;
  if (!key.empty()) {
    vus[5].vtype = RD_KAFKA_VTYPE_KEY;
    vus[5].u.mem.ptr = const_cast<char*>(key.data());
    vus[5].u.mem.size = key.size();
    vu_count = 6;
  }
  for (;;) {
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    if (rd_kafka_error_t* error = rd_kafka_produceva(rk_, vus.data(), vu_count)) {
      err = rd_kafka_error_code(error);
      rd_kafka_error_destroy(error);
    }
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    if (err == RD_KAFKA_RESP_ERR__STATE || err == RD_KAFKA_RESP_ERR__FATAL) {
      // Refused in the producer's state: outside a transaction, fatally failed, or (seen with
      // librdkafka 2.0.2 after a commit that timed out was finished by the next begin) refusing
      // in every transaction it begins. Only a new producer is sure to go on.
      return Status::FailedPrecondition("produce to '" + topic + "': " + rd_kafka_err2str(err));
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return Status::InvalidArgument("produce to '" + topic + "': " + rd_kafka_err2str(err));
    }
    // Full: make room by serving delivery reports; never drop.
    if (bounded && std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("produce to '" + topic + "': local queue full for " +
                                 std::to_string(options_.enqueue_timeout->count()) + " ms");
    }
    rd_kafka_poll(rk_, 10);
  }
  enqueued_.fetch_add(1, std::memory_order_relaxed);
  rd_kafka_poll(rk_, 0);
  return Status::Ok();
}

void KafkaProducer::Poll(std::chrono::milliseconds timeout) { rd_kafka_poll(rk_, KafkaTimeoutMs(timeout)); }

Status KafkaProducer::Flush(std::chrono::milliseconds timeout) {
  const rd_kafka_resp_err_t err = rd_kafka_flush(rk_, KafkaTimeoutMs(timeout));
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();
  return Status::Unavailable(std::to_string(rd_kafka_outq_len(rk_)) +
                             " messages still in flight after " +
                             std::to_string(timeout.count()) + " ms");
}

KafkaProducerStats KafkaProducer::stats() const {
  KafkaProducerStats s;
  s.enqueued = enqueued_.load(std::memory_order_relaxed);
  s.acknowledged = acknowledged_.load(std::memory_order_relaxed);
  s.failed = failed_.load(std::memory_order_relaxed);
  const int outq = rd_kafka_outq_len(rk_);
  s.in_flight = outq > 0 ? static_cast<uint64_t>(outq) : 0;
  MutexLock lock(error_mu_);
  s.last_error = last_error_;
  return s;
}

Status KafkaProducer::InitTransactions(std::chrono::milliseconds timeout) {
  return TxnStatus("init transactions", rd_kafka_init_transactions(rk_, KafkaTimeoutMs(timeout)));
}

Status KafkaProducer::BeginTransaction(std::chrono::milliseconds timeout) {
  if (unfinished_ != Ending::kNone) {
    Status finished = Finish(unfinished_, timeout);
    // An earlier commit that had to be aborted after all leaves the producer ready: say so
    // and begin; one still in progress, or a fatal error, is this call's failure too.
    if (!finished.ok()) {
      if (unfinished_ != Ending::kNone || finished.code() == StatusCode::kFailedPrecondition) return finished;
      spdlog::warn("kafka: an earlier transaction: {}", finished.message());
    }
  }
  return TxnStatus("begin transaction", rd_kafka_begin_transaction(rk_));
}

Status KafkaProducer::SendOffsetsToTransaction(const std::map<TopicPartition, int64_t>& next_offsets,
                                               const KafkaGroupMetadata& group,
                                               std::chrono::milliseconds timeout) {
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(next_offsets.size()));
  for (const auto& [tp, offset] : next_offsets)
    rd_kafka_topic_partition_list_add(list, tp.topic.c_str(), tp.partition)->offset = offset;
  rd_kafka_error_t* error =
      rd_kafka_send_offsets_to_transaction(rk_, list, group.get(), KafkaTimeoutMs(timeout));
  rd_kafka_topic_partition_list_destroy(list);
  return TxnStatus("send offsets to transaction", error);
}

Status KafkaProducer::CommitTransaction(std::chrono::milliseconds timeout) {
  if (unfinished_ == Ending::kAbort) {
    return Status::Unavailable(
        "commit transaction: the last abort is still in progress (the next begin finishes it)");
  }
  return Finish(Ending::kCommit, timeout);
}

Status KafkaProducer::AbortTransaction(std::chrono::milliseconds timeout) {
  if (unfinished_ == Ending::kCommit) {
    return Status::Unavailable(
        "abort transaction: the last commit is still in progress (the next begin finishes it)");
  }
  return Finish(Ending::kAbort, timeout);
}

Status KafkaProducer::Finish(Ending ending, std::chrono::milliseconds timeout) {
  const bool commit = ending == Ending::kCommit;
  const char* what = commit ? "commit transaction" : "abort transaction";
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::max(
        std::chrono::milliseconds(1),
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
    rd_kafka_error_t* error = commit ? rd_kafka_commit_transaction(rk_, KafkaTimeoutMs(left))
                                     : rd_kafka_abort_transaction(rk_, KafkaTimeoutMs(left));
    if (error == nullptr) {
      unfinished_ = Ending::kNone;
      return Status::Ok();
    }
    const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
    const bool fatal = rd_kafka_error_is_fatal(error) != 0;
    const bool must_abort = rd_kafka_error_txn_requires_abort(error) != 0;
    const bool retriable = rd_kafka_error_is_retriable(error) != 0;
    std::string message = std::string(what) + ": " + rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
    if (!fatal && (code == RD_KAFKA_RESP_ERR__CONFLICT || code == RD_KAFKA_RESP_ERR__PREV_IN_PROGRESS)) {
      // Another transaction call is under way: this one changed nothing (retriable, but
      // retrying it could only conflict again).
      return Status::Unavailable(std::move(message));
    }
    if (!fatal && !must_abort && retriable) {
      // A time-out: the call goes on in the background and only the same call may finish it.
      if (std::chrono::steady_clock::now() < deadline) {
        rd_kafka_poll(rk_, 10);  // a retriable error that came back at once does not spin
        continue;
      }
      unfinished_ = ending;
      return Status::Unavailable(message + " (still in progress: the next begin finishes it)");
    }
    unfinished_ = Ending::kNone;
    if (commit && must_abort && !fatal) {
      // So that the next Begin can start: nothing of this transaction is seen. The abort has
      // a time of its own (the commit may have used all of its).
      Status aborted = Finish(Ending::kAbort, timeout);
      if (aborted.ok()) return Status::Unavailable(std::move(message));
      return Status(aborted.code(), message + "; then " + aborted.message());
    }
    // Fatal, or neither retriable nor abortable: librdkafka says to treat the producer as
    // broken for good; only a new one goes on.
    return Status::FailedPrecondition(std::move(message));
  }
}

void KafkaProducer::DeliveryReport(rd_kafka_t* /*rk*/, const rd_kafka_message_t* msg,
                                   void* opaque) {
  auto* self = static_cast<KafkaProducer*>(opaque);
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    self->acknowledged_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  self->failed_.fetch_add(1, std::memory_order_relaxed);
  std::string reason = std::string("delivery to '") + rd_kafka_topic_name(msg->rkt) +
                       "' failed: " + rd_kafka_err2str(msg->err);
  LogKafkaError(self->log_limiter_, "producer", msg->err, reason, /*fatal=*/false);
  MutexLock lock(self->error_mu_);
  self->last_error_ = std::move(reason);
}

void KafkaProducer::ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto* self = static_cast<KafkaProducer*>(opaque);
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  LogKafkaError(self->log_limiter_, "producer", code, reason,
                code == RD_KAFKA_RESP_ERR__FATAL && rk != nullptr);
}

void KafkaProducer::LogCallback(const rd_kafka_t* rk, int level, const char* fac,
                                const char* buf) {
  auto* self = static_cast<KafkaProducer*>(rd_kafka_opaque(rk));
  if (self == nullptr) return;
  LogKafkaLine(self->log_limiter_, "producer", level, fac, buf);
}

}  // namespace seismo
