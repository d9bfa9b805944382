// MockCluster: an in-process Kafka-protocol cluster (librdkafka's mock
// cluster) listening on 127.0.0.1, for `seismo broker`, `seismo demo` and
// tests. It speaks the real protocol (produce, fetch, classic consumer groups,
// offset commit/fetch, auto-creation with 4 partitions) but keeps no data on
// disk, has no TLS/SASL and no admin API: topics are created here.
//
// Limits worth knowing (SPEC §10): each partition keeps at most 5 MiB or
// 100 000 batches and silently drops older data; the first join of a group
// waits 3 s; a fetch returns at most one producer batch per partition.
//
// Ownership: Create() returns the owner. The cluster runs on librdkafka's own
// threads and owns an internal producer handle (librdkafka requires a handle
// as the cluster's parent); destruction closes every listener, and clients
// still connected see their brokers go away.
// Threading: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "seismo/core/status.h"
#include "seismo/ingest/rdkafka_fwd.h"

namespace seismo {

class MockCluster {
 public:
  // Starts `broker_count` (≥ 1) brokers with ids 1..broker_count.
  [[nodiscard]] static Result<std::unique_ptr<MockCluster>> Create(int broker_count);

  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  // "127.0.0.1:port,127.0.0.1:port,..." for bootstrap.servers.
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }
  int broker_count() const { return broker_count_; }

  // Creates `name` with `partitions` partitions, replication factor 1,
  // leaders spread over the brokers. Creating an existing topic is an error.
  [[nodiscard]] Status CreateTopic(const std::string& name, int partitions);

  // Failure injection. A broker that is down closes its connections and
  // refuses new ones until it is up again; its partitions keep their data.
  [[nodiscard]] Status SetBrokerDown(int32_t broker_id);
  [[nodiscard]] Status SetBrokerUp(int32_t broker_id);
  // Adds `rtt_ms` of latency to every response of a broker.
  [[nodiscard]] Status SetBrokerRtt(int32_t broker_id, int rtt_ms);
  // Makes `broker_id` the coordinator of consumer group `group_id` (the
  // coordinator going down forces members to rediscover it).
  [[nodiscard]] Status SetGroupCoordinator(const std::string& group_id, int32_t broker_id);
  // Moves the leadership of one partition to another broker.
  [[nodiscard]] Status SetPartitionLeader(const std::string& topic, int32_t partition,
                                          int32_t broker_id);
  // The next `count` requests of protocol API `api_key` (e.g. 1 = Fetch,
  // 8 = OffsetCommit, 14 = SyncGroup) fail with `error` (an
  // rd_kafka_resp_err_t value, e.g. 16 = NOT_COORDINATOR).
  void InjectRequestErrors(int16_t api_key, int count, int error);
  // The next `count` requests of protocol API `api_key` that reach `broker_id` are answered
  // (successfully) only after `rtt_ms` (e.g. 26 = EndTxn: a slow transaction commit).
  [[nodiscard]] Status DelayRequests(int32_t broker_id, int16_t api_key, int count, int rtt_ms);

 private:
  MockCluster() = default;

  int broker_count_ = 0;
  std::string bootstrap_servers_;
  rd_kafka_t* owner_ = nullptr;              // owned; destroyed after cluster_
  rd_kafka_mock_cluster_t* cluster_ = nullptr;  // owned
};

}  // namespace seismo
