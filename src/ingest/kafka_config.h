// Shared plumbing for seismo's librdkafka clients (KafkaConsumer,
// KafkaProducer, MockCluster): RAII owners for the C handles, building an
// rd_kafka_conf_t from seismo defaults plus user properties, and routing
// librdkafka's own log lines to spdlog without flooding it.
//
// Only the ingest stage includes librdkafka: this header is private to its sources
// (public headers use seismo/ingest/rdkafka_fwd.h). It exposes no state.
#pragma once

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "seismo/core/status.h"
#include "seismo/ingest/log_rate_limiter.h"

namespace seismo {

// A duration as the int milliseconds librdkafka's calls take: negative counts as 0 (librdkafka
// reads -1 as "wait forever", which no seismo caller means), the top clamped to INT32_MAX.
inline int KafkaTimeoutMs(std::chrono::milliseconds d) {
  return static_cast<int>(std::clamp<int64_t>(d.count(), 0, INT32_MAX));
}

// Owners for librdkafka objects. A configuration handed to rd_kafka_new()
// successfully belongs to the handle: call release() on the ConfPtr then.
struct KafkaConfDeleter {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
using KafkaConfPtr = std::unique_ptr<rd_kafka_conf_t, KafkaConfDeleter>;

struct KafkaPartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using KafkaPartitionListPtr =
    std::unique_ptr<rd_kafka_topic_partition_list_t, KafkaPartitionListDeleter>;

// Builds a configuration: `defaults` first, then `user` (so user properties
// win), each passed to librdkafka as is. An unknown property or a bad value
// is kInvalidArgument naming the property and librdkafka's reason.
[[nodiscard]] Result<KafkaConfPtr> BuildKafkaConf(
    const std::map<std::string, std::string>& defaults,
    const std::map<std::string, std::string>& user);

// Logs one librdkafka log line (syslog `level`, facility, text) through
// spdlog (notice/info → info, debug → debug, anything worse → warning: the
// error callback, not the log, decides what is an error), rate-limited per
// facility. `client` names the seismo client ("consumer", "producer", "mock").
void LogKafkaLine(LogRateLimiter& limiter, std::string_view client, int level,
                  std::string_view facility, std::string_view text);

// Logs an error reported by librdkafka's error callback (or a failed
// delivery, a failed commit), rate-limited per error code. Fatal errors are
// logged at error level, the rest (transient: broker down, transport) as warnings.
void LogKafkaError(LogRateLimiter& limiter, std::string_view client, rd_kafka_resp_err_t err,
                   std::string_view reason, bool fatal);

}  // namespace seismo
