#include "ingest/kafka_config.h"

#include <spdlog/spdlog.h>

#include <array>

namespace seismo {

Result<KafkaConfPtr> BuildKafkaConf(const std::map<std::string, std::string>& defaults,
                                    const std::map<std::string, std::string>& user) {
  KafkaConfPtr conf(rd_kafka_conf_new());
  std::array<char, 512> errstr{};
  for (const auto* props : {&defaults, &user}) {
    for (const auto& [key, value] : *props) {
      if (rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), errstr.data(),
                            errstr.size()) != RD_KAFKA_CONF_OK) {
        return Status::InvalidArgument("kafka property '" + key + "' = '" + value +
                                       "': " + errstr.data());
      }
    }
  }
  return conf;
}

namespace {

spdlog::level::level_enum SyslogToSpdlog(int level) {
  // librdkafka uses syslog levels: 0 emerg .. 3 err, 4 warning, 5 notice, 6 info, 7 debug.
  // Its level-3 lines (e.g. FAIL: connection refused) are transient and are
  // also reported through the error callback, which decides what is fatal:
  // log lines therefore stop at warning.
  if (level <= 4) return spdlog::level::warn;
  if (level <= 6) return spdlog::level::info;
  return spdlog::level::debug;
}

// spdlog's registry is a function-local static built inside libspdlog on first use.
// librdkafka's threads log through it, and the first to do so would build it: the library
// is not instrumented, so ThreadSanitizer cannot see that construction ordered before the
// reads of other threads. Building it during static initialisation, on the main thread
// before any thread exists, orders it before every use.
[[maybe_unused]] const spdlog::logger* const kLoggerRegistryBuiltEarly = spdlog::default_logger_raw();

}  // namespace

void LogKafkaLine(LogRateLimiter& limiter, std::string_view client, int level,
                  std::string_view facility, std::string_view text) {
  const auto spd_level = SyslogToSpdlog(level);
  if (!spdlog::should_log(spd_level)) return;
  uint64_t suppressed = 0;
  if (!limiter.Allow(facility, &suppressed)) return;
  if (suppressed > 0) {
    spdlog::log(spd_level, "kafka {}: {} earlier '{}' log lines suppressed", client, suppressed,
                facility);
  }
  spdlog::log(spd_level, "kafka {} [{}]: {}", client, facility, text);
}

void LogKafkaError(LogRateLimiter& limiter, std::string_view client, rd_kafka_resp_err_t err,
                   std::string_view reason, bool fatal) {
  const auto level = fatal ? spdlog::level::err : spdlog::level::warn;
  uint64_t suppressed = 0;
  if (!limiter.Allow(rd_kafka_err2name(err), &suppressed)) return;
  if (suppressed > 0) {
    spdlog::log(level, "kafka {}: {} earlier {} errors suppressed", client, suppressed,
                rd_kafka_err2name(err));
  }
  spdlog::log(level, "kafka {}: {}{}: {}", client, fatal ? "fatal " : "", rd_kafka_err2name(err),
              reason);
}

}  // namespace seismo
