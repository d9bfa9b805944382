#include "seismo/query/api.h"

#include <fmt/format.h>

#include "seismo/core/json_writer.h"
#include "seismo/query/alerts_json.h"
#include "seismo/query/builds_json.h"
#include "seismo/query/crashes_json.h"
#include "seismo/query/flamegraph.h"
#include "seismo/query/hangs_json.h"
#include "seismo/query/params.h"
#include "seismo/query/selection.h"

namespace seismo {

std::string ErrorJson(std::string_view message) {
  JsonWriter w;
  w.BeginObject();
  w.Key("error").String(message);
  w.EndObject();
  return w.Take();
}

ApiAnswer AnswerApi(std::string_view path, std::string_view raw_query, const StateProvider& provider,
                    const ApiSettings& settings, int64_t now_ms, AnswerCache<ApiAnswer>* cache) {
  auto endpoint = EndpointFromPath(path);
  if (!endpoint) return {404, "application/json", ErrorJson("not found")};
  auto params = ParseQueryString(raw_query);
  if (!params) return {400, "application/json", ErrorJson(params.error().message())};
  const std::shared_ptr<const Snapshot> held = provider.snapshot();
  const std::vector<int64_t>& windows = held && !held->windows_ms.empty() ? held->windows_ms : settings.windows_ms;
  auto query = ParseQuery(*endpoint, *params, windows);
  if (!query) return {400, "application/json", ErrorJson(query.error().message())};
  const Snapshot& snap = held ? *held : EmptySnapshot();
  const Query& q = *query;
  if (const auto& process = q.filters[Dim::kProcess]; process && !KnownProcess(snap, *process)) {
    return {
        400, "application/json",
        ErrorJson(fmt::format("process: unknown process '{}' (parent, content, gpu, rdd, socket, utility, "
                              "gmplugin, plugin, another one in the data, or any)",
                              *process))};
  }
  if (*endpoint == Endpoint::kStatus) {
    return {200, "application/json", StatusJson(held.get(), provider.counts(), provider.status(), settings, now_ms)};
  }
  if (*endpoint == Endpoint::kAlerts) {
    JsonWriter w;
    w.BeginObject();
    w.Key("alerts").Raw(FilterAlertsJson(provider.alerts_json(), q));
    w.EndObject();
    return {200, "application/json", w.Take()};
  }
  // The rest is a function of (snapshot, endpoint, query).
  auto compute = [&]() -> ApiAnswer {
    switch (*endpoint) {
      case Endpoint::kBuilds: return {200, "application/json", BuildsJson(snap, q)};
      case Endpoint::kHangs: return {200, "application/json", HangsJson(snap, q)};
      case Endpoint::kHangsTimeseries: return {200, "application/json", HangsTimeseriesJson(snap, q)};
      case Endpoint::kHangsFlamegraph:
        if (q.format == FlameFormat::kCollapsed) {
          return {200, "text/plain; charset=utf-8", FlamegraphCollapsed(snap, q)};
        }
        return {200, "application/json", FlamegraphTreeJson(snap, q)};
      case Endpoint::kCrashesTop: return {200, "application/json", CrashesTopJson(snap, q)};
      case Endpoint::kCrashesTimeseries: return {200, "application/json", CrashesTimeseriesJson(snap, q)};
      case Endpoint::kCrashesSignature: return {200, "application/json", CrashSignatureJson(snap, q)};
      case Endpoint::kStatus:
      case Endpoint::kAlerts: break;
    }
    return {500, "application/json", ErrorJson("internal error")};
  };
  if (cache == nullptr || !held) return compute();
  std::string key(path);
  key += '?';
  key += raw_query;
  return *cache->Get(held, key, compute);
}

}  // namespace seismo
