#include "seismo/ingest/mock_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <array>
#include <vector>

#include "ingest/kafka_config.h"

namespace seismo {

namespace {

Status FromErr(rd_kafka_resp_err_t err, const std::string& what) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();
  return Status::InvalidArgument(what + ": " + rd_kafka_err2str(err));
}

// The owner handle is never used to produce; its log lines are the mock's.
LogRateLimiter& MockLogLimiter() {
  static LogRateLimiter limiter;
  return limiter;
}

void MockLogCallback(const rd_kafka_t* /*rk*/, int level, const char* fac, const char* buf) {
  LogKafkaLine(MockLogLimiter(), "mock", level, fac, buf);
}

}  // namespace

Result<std::unique_ptr<MockCluster>> MockCluster::Create(int broker_count) {
  if (broker_count < 1) {
    return Status::InvalidArgument("mock cluster needs at least 1 broker, got " +
                                   std::to_string(broker_count));
  }
  // Notices (level 5) from the owner handle are noise, e.g. "no bootstrap.servers".
  auto conf = BuildKafkaConf({{"client.id", "seismo-mock-cluster"}, {"log_level", "4"}}, {});
  if (!conf) return conf.error();
  rd_kafka_conf_set_log_cb(conf->get(), MockLogCallback);

  std::unique_ptr<MockCluster> cluster(new MockCluster());
  std::array<char, 512> errstr{};
  cluster->owner_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf->get(), errstr.data(), errstr.size());
  if (cluster->owner_ == nullptr) {
    return Status::Internal(std::string("cannot create mock cluster owner: ") + errstr.data());
  }
  conf->release();  // now owned by owner_
  cluster->cluster_ = rd_kafka_mock_cluster_new(cluster->owner_, broker_count);
  if (cluster->cluster_ == nullptr) {
    return Status::Unavailable("cannot start the mock Kafka cluster (no free loopback ports?)");
  }
  cluster->broker_count_ = broker_count;
  cluster->bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(cluster->cluster_);
  return cluster;
}

MockCluster::~MockCluster() {
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
  if (owner_ != nullptr) rd_kafka_destroy(owner_);
}

Status MockCluster::CreateTopic(const std::string& name, int partitions) {
  if (name.empty()) return Status::InvalidArgument("topic name is empty");
  if (partitions < 1) {
    return Status::InvalidArgument("topic '" + name + "' needs at least 1 partition");
  }
  return FromErr(rd_kafka_mock_topic_create(cluster_, name.c_str(), partitions, 1),
                 "create topic '" + name + "'");
}

Status MockCluster::SetBrokerDown(int32_t broker_id) {
  return FromErr(rd_kafka_mock_broker_set_down(cluster_, broker_id),
                 "broker " + std::to_string(broker_id) + " down");
}

Status MockCluster::SetBrokerUp(int32_t broker_id) {
  return FromErr(rd_kafka_mock_broker_set_up(cluster_, broker_id),
                 "broker " + std::to_string(broker_id) + " up");
}

Status MockCluster::SetBrokerRtt(int32_t broker_id, int rtt_ms) {
  return FromErr(rd_kafka_mock_broker_set_rtt(cluster_, broker_id, rtt_ms),
                 "broker " + std::to_string(broker_id) + " rtt");
}

Status MockCluster::SetGroupCoordinator(const std::string& group_id, int32_t broker_id) {
  return FromErr(rd_kafka_mock_coordinator_set(cluster_, "group", group_id.c_str(), broker_id),
                 "coordinator of group '" + group_id + "'");
}

Status MockCluster::SetPartitionLeader(const std::string& topic, int32_t partition,
                                       int32_t broker_id) {
  return FromErr(rd_kafka_mock_partition_set_leader(cluster_, topic.c_str(), partition, broker_id),
                 "leader of " + topic + "[" + std::to_string(partition) + "]");
}

void MockCluster::InjectRequestErrors(int16_t api_key, int count, int error) {
  if (count <= 0) return;
  std::vector<rd_kafka_resp_err_t> errors(static_cast<size_t>(count),
                                          static_cast<rd_kafka_resp_err_t>(error));
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, errors.size(), errors.data());
}

Status MockCluster::DelayRequests(int32_t broker_id, int16_t api_key, int count, int rtt_ms) {
  for (int i = 0; i < count; ++i) {
    Status s = FromErr(rd_kafka_mock_broker_push_request_error_rtts(cluster_, broker_id, api_key, 1,
                                                                    RD_KAFKA_RESP_ERR_NO_ERROR, rtt_ms),
                       "delay of broker " + std::to_string(broker_id) + "'s requests");
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace seismo
