#include "seismo/ingest/kafka_topic_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "ingest/kafka_config.h"

namespace seismo {
namespace {

struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* m) const { rd_kafka_metadata_destroy(m); }
};

}  // namespace

Result<std::unique_ptr<KafkaTopicReader>> KafkaTopicReader::Create(const KafkaTopicReaderOptions& options) {
  auto conf = BuildKafkaConf(
      {
          {"bootstrap.servers", options.brokers},
          {"client.id", "seismo-topic-reader"},
          // librdkafka's consumer poll wants a group id; assign() never joins the group,
          // and nothing is committed to it.
          {"group.id", "seismo-topic-reader"},
          {"isolation.level", "read_committed"},
          {"enable.partition.eof", "true"},
          {"enable.auto.commit", "false"},
          {"enable.auto.offset.store", "false"},
      },
      options.properties);
  if (!conf) return conf.error();
  std::unique_ptr<KafkaTopicReader> reader(new KafkaTopicReader());
  rd_kafka_conf_set_opaque(conf->get(), reader.get());
  rd_kafka_conf_set_log_cb(conf->get(), &KafkaTopicReader::LogCallback);
  std::array<char, 512> errstr{};
  reader->rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf->get(), errstr.data(), errstr.size());
  if (reader->rk_ == nullptr)
    return Status::InvalidArgument(std::string("cannot create Kafka reader: ") + errstr.data());
  conf->release();
  rd_kafka_poll_set_consumer(reader->rk_);
  return reader;
}

KafkaTopicReader::~KafkaTopicReader() {
  if (rk_ == nullptr) return;
  // No group: closing leaves nothing and commits nothing.
  rd_kafka_consumer_close(rk_);
  rd_kafka_destroy(rk_);
}

Result<int32_t> KafkaTopicReader::PartitionCount(const std::string& topic,
                                                 std::chrono::milliseconds timeout) {
  // Every topic's metadata: a request naming the topic may create it (auto.create.topics).
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 1, nullptr, &raw, KafkaTimeoutMs(timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("metadata of '" + topic + "': " + rd_kafka_err2str(err));
  }
  std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter> metadata(raw);
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = metadata->topics[i];
    if (topic != t.topic) continue;
    if (t.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || t.partition_cnt == 0) {
      return Status::NotFound("topic '" + topic + "' does not exist");
    }
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("metadata of '" + topic + "': " + rd_kafka_err2str(t.err));
    }
    return t.partition_cnt;
  }
  return Status::NotFound("topic '" + topic + "' does not exist");
}

Status KafkaTopicReader::Assign(const std::string& topic, std::vector<int32_t> partitions,
                                std::chrono::milliseconds timeout) {
  if (partitions.empty()) {
    Result<int32_t> count = PartitionCount(topic, timeout);
    if (!count) return count.error();
    for (int32_t p = 0; p < *count; ++p) partitions.push_back(p);
  }
  KafkaPartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (int32_t p : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  if (rd_kafka_resp_err_t err = rd_kafka_assign(rk_, list.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("assign '" + topic + "': " + rd_kafka_err2str(err));
  }
  assigned_ = std::set<int32_t>(partitions.begin(), partitions.end());
  at_end_.clear();
  return Status::Ok();
}

Result<size_t> KafkaTopicReader::Poll(std::chrono::milliseconds timeout, const RecordCallback& on_record) {
  size_t handed = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    // Records keep coming: return at the deadline all the same, so the caller gets its turn.
    if (handed > 0 && left.count() <= 0) return handed;
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk_, handed > 0 ? 0 : KafkaTimeoutMs(left));
    if (msg == nullptr) return handed;
    const rd_kafka_resp_err_t err = msg->err;
    if (err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end_.insert(msg->partition);
    } else if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::string reason = rd_kafka_message_errstr(msg);
      rd_kafka_message_destroy(msg);
      if (err == RD_KAFKA_RESP_ERR__FATAL) return Status::Unavailable("topic reader: " + reason);
      LogKafkaError(log_limiter_, "topic reader", err, reason, /*fatal=*/false);
      if (std::chrono::steady_clock::now() >= deadline) return handed;
      continue;
    } else {
      KafkaTopicRecord record;
      record.partition = msg->partition;
      record.offset = msg->offset;
      rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
      record.timestamp_ms = rd_kafka_message_timestamp(msg, &type);
      record.key = std::string_view(static_cast<const char*>(msg->key), msg->key_len);
      if (msg->payload != nullptr)
        record.value = std::string_view(static_cast<const char*>(msg->payload), msg->len);
      on_record(record);
      ++handed;
    }
    rd_kafka_message_destroy(msg);
  }
}

void KafkaTopicReader::LogCallback(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  auto* self = static_cast<KafkaTopicReader*>(rd_kafka_opaque(rk));
  if (self == nullptr) return;
  LogKafkaLine(self->log_limiter_, "topic reader", level, fac, buf);
}

}  // namespace seismo
