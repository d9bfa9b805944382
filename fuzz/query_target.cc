// The body of fuzz_query (fuzz_targets.h QueryTarget): any bytes as requests to the HTTP
// API's answers (query/api.h AnswerApi), over a small world of generated documents.
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <vector>

#include "fuzz_targets.h"
#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/parse/parser.h"
#include "seismo/query/api.h"
#include "seismo/query/provider.h"
#include "seismo/signature/generator.h"
#include "seismo/sim/synth.h"

namespace seismo::fuzz {
namespace {

// Every API path, and one that is none.
constexpr std::array<std::string_view, 12> kPaths = {"/api/v1/status",
                                                     "/api/v1/builds",
                                                     "/api/v1/hangs",
                                                     "/api/v1/hangs/timeseries",
                                                     "/api/v1/hangs/flamegraph",
                                                     "/api/v1/hangs/flamegraph/diff",
                                                     "/api/v1/crashes/top",
                                                     "/api/v1/crashes/timeseries",
                                                     "/api/v1/crashes/signature",
                                                     "/api/v1/alerts",
                                                     "/api/v1/releases",
                                                     "/api/v1/nothing"};

// Generated main, bhr and crash pings (sim/synth.h: a few builds, channels and OSes, a few
// hundred stacks, crash signatures), parsed and aggregated as the daemon does, in one shard.
std::shared_ptr<const Snapshot> World() {
  static const std::shared_ptr<const Snapshot> world = [] {
    auto loaded = SignatureGenerator::LoadDefault();
    if (!loaded) std::abort();  // the built-in lists always load
    const std::unique_ptr<SignatureGenerator> signatures = std::move(*loaded);
    auto symbols = std::make_shared<Symbols>();
    const AggregateOptions options;
    ShardState state(options, symbols.get());
    Parser parser({}, signatures.get());
    DeltaEncoder encoder(symbols.get());
    Synth synth(SynthOptions{.seed = 7});
    std::vector<Delta> deltas;
    EventTime last{0};
    for (uint64_t i = 0; i < 300; ++i) {
      for (DocKind kind : {DocKind::kMain, DocKind::kBhr, DocKind::kCrash}) {
        const std::string doc = kind == DocKind::kMain  ? synth.Main(i)
                                : kind == DocKind::kBhr ? synth.Bhr(i)
                                                        : synth.CrashPing(i);
        auto parsed = parser.Parse(doc, DocHints{kind});
        if (!parsed.ok() || !parsed.value().primary_time) continue;
        const EventTime t = *parsed.value().primary_time;
        deltas.clear();
        encoder.Encode(parsed.value(), t, deltas);
        for (const Delta& d : deltas) state.Apply(d);
        last = std::max(last, t);
      }
    }
    state.AdvanceTo(last);
    return std::shared_ptr<const Snapshot>(MergeSnapshots({state.Snapshot()}, *symbols, options.bucket_ms,
                                                          options.windows_ms, options.retention_ms, true,
                                                          symbols));
  }();
  return world;
}

// "" when the answer is one the API may give: 200, 400 or 404, a JSON document (or a 200 of
// collapsed stacks as text), and a view's 200 within the answer bound (but a time series' and
// the Releases view's, bounded by their shape).
std::string CheckAnswer(std::string_view path, std::string_view query, const ApiAnswer& a,
                        const ApiSettings& settings) {
  if (a.status != 200 && a.status != 400 && a.status != 404) return "status " + std::to_string(a.status);
  if (a.content_type == "application/json") {
    thread_local simdjson::dom::parser json;
    simdjson::dom::element e;
    if (json.parse(a.body).get(e) != simdjson::SUCCESS) return "an answer that is not JSON";
  } else if (a.status != 200 || a.content_type.rfind("text/plain", 0) != 0) {
    return "an answer of type " + a.content_type;
  }
  // A time series is bounded by its points (the window over the bucket width: 1 440 for a
  // day of minutes) and the Releases view by its lines' hours, not by max_answer_bytes
  // (docs/api.md).
  const bool series = path.ends_with("/timeseries") || path == "/api/v1/releases";
  // Some answers say back what was asked (a signature, a channel), before any bound: the
  // client's own text, at most six bytes a byte once escaped, is not counted against it (a
  // request is at most [http] max_request_size, far below any sensible max_answer_bytes).
  const size_t echoed = 6 * query.size();
  if (a.status == 200 && IsSnapshotView(path) && !series &&
      a.body.size() > settings.limits.max_bytes + echoed) {
    return "an answer past max_answer_bytes: " + std::to_string(a.body.size()) + " bytes";
  }
  return "";
}

}  // namespace

std::string QueryTarget(std::string_view data) {
  if (data.size() < 2) return "";
  const std::string_view path = kPaths[static_cast<uint8_t>(data[0]) % kPaths.size()];
  // The answer bounds, small so that truncation is reached: 512 bytes to 64 KiB, 1 to 249 nodes.
  const auto bounds = static_cast<uint8_t>(data[1]);
  ApiSettings settings;
  settings.limits.max_bytes = size_t{512} << (bounds & 7);
  settings.limits.max_nodes = 1 + size_t{8} * (bounds >> 3);
  // Up to two raw query strings, split at the first newline: both asked through one cache.
  const std::string_view rest = data.substr(2);
  const size_t newline = rest.find('\n');
  std::vector<std::string_view> queries = {rest.substr(0, newline)};
  if (newline != std::string_view::npos) queries.push_back(rest.substr(newline + 1));

  const OneSnapshot provider(World());
  constexpr int64_t kNowMs = 1'795'100'000'000;
  AnswerCache<ApiAnswer> cache;
  for (std::string_view query : queries) {
    const ApiAnswer direct = AnswerApi(path, query, provider, settings, kNowMs);
    if (std::string problem = CheckAnswer(path, query, direct, settings); !problem.empty()) return problem;
    if (AnswerApi(path, query, provider, settings, kNowMs).body != direct.body) {
      return "the same request answered twice, two answers";
    }
    // Through a cache that may hold the other query's answer: a cache key shared by two
    // queries with different answers would serve the wrong one.
    const ApiAnswer cached = AnswerApi(path, query, provider, settings, kNowMs, &cache);
    if (cached.status != direct.status || cached.body != direct.body) {
      return "an answer through the cache that is not the answer";
    }
  }
  return "";
}

}  // namespace seismo::fuzz
