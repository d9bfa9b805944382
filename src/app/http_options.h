// The HTTP server options a config describes ([http] plus the windows the API serves).
#pragma once

#include "seismo/app/config.h"
#include "seismo/core/status.h"
#include "seismo/http/access.h"
#include "seismo/http/server.h"

namespace seismo {

// Fails (kInvalidArgument / kIoError) only when [http] auth_token_file cannot be read.
Result<HttpServerOptions> HttpOptionsFromConfig(const Config& config);

// Where [http] health_listen says the health listener listens ("" = none): by default
// the host of `listen` and the next port, or port 0 when `listen` asks for port 0.
std::string HealthListenAddress(const Config& config);

}  // namespace seismo
