// Process-wide logging setup ([log] level and format). spdlog to stderr.
#pragma once

#include "seismo/app/config.h"

namespace seismo {

void SetUpLogging(const LogConfig& log);

}  // namespace seismo
