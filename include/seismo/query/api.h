// The v1 JSON API as one pure entry point: path + raw query string + what a
// StateProvider reports -> status code, content type and body. The HTTP stage
// adds transport concerns (auth, CORS, headers, SSE, static files); everything
// an answer contains is decided here, so it is unit-testable without sockets.
//
//   AnswerApi("/api/v1/hangs", "by=thread&window=1h", provider, settings, now)
//     -> {200, "application/json", "{\"window\":\"1h\",...}"}
//
// Errors: 400 {"error": "<parameter>: <problem>"}; a path that is not an
// endpoint 404 {"error": "not found"}. Before the first snapshot, list
// endpoints answer empty lists.
//
// `cache` (optional): answers that depend only on the snapshot, the path and the
// query are kept per snapshot (query/answer_cache.h); /status and /alerts never are.
//
// Threading: callable from any thread; reads the provider once per call
// (one snapshot for the whole answer).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seismo/query/answer_cache.h"
#include "seismo/query/provider.h"
#include "seismo/query/status_json.h"

namespace seismo {

struct ApiAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

ApiAnswer AnswerApi(std::string_view path, std::string_view raw_query, const StateProvider& provider,
                    const ApiSettings& settings, int64_t now_ms, AnswerCache<ApiAnswer>* cache = nullptr);

// {"error": message}
std::string ErrorJson(std::string_view message);

}  // namespace seismo
