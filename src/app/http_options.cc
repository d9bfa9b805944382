#include "http_options.h"

namespace seismo {

Result<HttpServerOptions> HttpOptionsFromConfig(const Config& config) {
  HttpServerOptions http;
  http.listen = config.http.listen;
  http.document_root = config.http.static_dir;
  http.cors_origins = config.http.cors_origins;
  http.num_threads = config.http.num_threads;
  http.max_sse_clients = config.http.max_sse_clients;
  http.max_request_size = static_cast<size_t>(config.http.max_request_size);
  http.request_timeout_ms = static_cast<int>(config.http.request_timeout.count());
  http.api.windows_ms = ToAggregateOptions(config).windows_ms;
  http.api.bucket_ms = config.aggregate.bucket.count();
  http.api.limits.max_bytes = static_cast<size_t>(config.http.max_answer_bytes);
  http.api.limits.max_nodes = static_cast<size_t>(config.http.max_answer_nodes);
  http.api.baselines = BaselinePolicyOf(config.alerts);
  http.answer_memory = static_cast<uint64_t>(config.http.answer_memory);
  // The warm-up is background work, as ingest is: it runs at [ingest] nice (ADR 0025).
  http.warm_nice = config.ingest.nice;
  if (!config.http.auth_token_file.empty()) {
    auto token = ReadTokenFile(config.http.auth_token_file);
    if (!token) return token.error();
    http.auth_token = *token;
  }
  return http;
}

std::string HealthListenAddress(const Config& config) {
  const std::string& h = config.http.health_listen;
  if (h == "off") return "";
  if (!h.empty()) return h;
  const std::string& listen = config.http.listen;
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return "";  // the main server refuses it first
  int port = 0;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (...) {
    return "";
  }
  return listen.substr(0, colon) + ":" + std::to_string(port == 0 ? 0 : port + 1);
}

}  // namespace seismo
