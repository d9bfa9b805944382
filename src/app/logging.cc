#include "seismo/app/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace seismo {

void SetUpLogging(const LogConfig& log) {
  auto logger = spdlog::get("seismo");
  if (!logger) logger = spdlog::stderr_color_mt("seismo");
  logger->set_level(spdlog::level::from_str(log.level));
  if (log.format == "json") {
    // One object per line; messages are seismo's own text (no user data), so no escaping needed.
    logger->set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l","msg":"%v"})", spdlog::pattern_time_type::utc);
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  }
  spdlog::set_default_logger(logger);
}

}  // namespace seismo
