// Query parameters of the v1 API (docs/api.md): parsing and validation.
//
//   "window=24h&os=Linux&limit=10"  --ParseQueryString-->  [(window,24h), (os,Linux), (limit,10)]
//                                   --ParseQuery------->  Query{window_ms, filters, limit, ...}
//
// Every problem is a Status whose message reads "<parameter>: <problem>", what
// the HTTP layer answers as 400 {"error": message}. Which parameters an endpoint
// accepts is fixed per endpoint; an unknown name is an error, so a typo never
// silently widens a selection.
//
// Threading: pure functions on values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/core/status.h"

namespace seismo {

enum class Endpoint : uint8_t {
  kStatus,             // /api/v1/status
  kBuilds,             // /api/v1/builds
  kHangs,              // /api/v1/hangs
  kHangsTimeseries,    // /api/v1/hangs/timeseries
  kHangsFlamegraph,    // /api/v1/hangs/flamegraph
  kCrashesTop,         // /api/v1/crashes/top
  kCrashesTimeseries,  // /api/v1/crashes/timeseries
  kCrashesSignature,   // /api/v1/crashes/signature
  kAlerts,             // /api/v1/alerts
  kReleases,           // /api/v1/releases
  kHangsFlameDiff,     // /api/v1/hangs/flamegraph/diff
};

// "/api/v1/hangs" -> kHangs; nullopt for any other path (a trailing "/" is not accepted).
std::optional<Endpoint> EndpointFromPath(std::string_view path);
std::string_view EndpointPath(Endpoint e);

// Dimensions a selection can filter on. Rows of a table that has no such
// dimension ignore the filter (crash and build rows derive build_date from
// the first 8 characters of build_id).
enum class Dim : uint8_t { kSource, kChannel, kOs, kBuildDate, kBuildId, kProduct, kVersion,
                           kProcess, kThread, kSignature };
inline constexpr size_t kDimCount = 10;
std::string_view DimName(Dim d);  // the parameter name: "source", "channel", ...

struct Filters {
  std::array<std::optional<std::string>, kDimCount> value;  // nullopt = no filter
  const std::optional<std::string>& operator[](Dim d) const { return value[static_cast<size_t>(d)]; }
  std::optional<std::string>& operator[](Dim d) { return value[static_cast<size_t>(d)]; }
  // Whether no dimension but the source is filtered (what the warm-up's kept sums serve).
  bool OnlySource() const {
    for (size_t d = 0; d < kDimCount; ++d) {
      if (d != static_cast<size_t>(Dim::kSource) && value[d]) return false;
    }
    return true;
  }
};

// Whether a row's `text` of dimension `d` passes a filter asking for `want`: exact, but OS
// names compare ASCII-case-insensitively ("linux" finds "Linux"; ADR 0026).
bool FilterMatches(Dim d, std::string_view text, std::string_view want);

enum class HangsBy : uint8_t { kSignature, kThread, kBuildDate };
enum class FlameFormat : uint8_t { kTree, kCollapsed };

struct Query {
  int64_t window_ms = 0;  // 0 = "all" (everything within the retention)
  Filters filters;        // `process=any` is stored as no filter
  size_t limit = 50;      // 1..1000
  HangsBy by = HangsBy::kSignature;
  FlameFormat format = FlameFormat::kTree;
  bool sparklines = false;                 // /crashes/top only: sparklines=1 adds each row's trend
  uint8_t exclude = 0;                     // /crashes/top only: kExclude* bits (exclude=oom,empty,...)
  std::optional<std::string> alert_rule;   // /alerts only: rule=
  std::optional<std::string> alert_state;  // /alerts only: state=
};

// Signatures Top Crashers can leave out (`exclude=`), as release management triages them:
// out-of-memory crashes, empty dumps, and the browser killing content processes at shutdown.
inline constexpr uint8_t kExcludeOom = 1;    // "oom": signatures starting "OOM |"
inline constexpr uint8_t kExcludeEmpty = 2;  // "empty": signatures starting "EMPTY:"
inline constexpr uint8_t kExcludeShutdownKill =
    4;  // "shutdownkill": "IPCError-{browser,content} | ShutDownKill"
// True when `exclude` leaves `signature` out.
bool Excluded(uint8_t exclude, std::string_view signature);

using Params = std::vector<std::pair<std::string, std::string>>;

// Splits and percent-decodes a raw query string ('+' is a space). Empty
// pieces ("a=1&&b=2") are skipped; a malformed escape is an error.
Result<Params> ParseQueryString(std::string_view raw);

// Validates `params` for `endpoint`. `windows_ms` are the configured windows
// (what `window` may name besides "all"); the default is 24h when configured,
// else the middle one.
Result<Query> ParseQuery(Endpoint endpoint, const Params& params, const std::vector<int64_t>& windows_ms);

// "1h", "24h", "7d", "all" (0): hours up to a day, then days when whole.
std::string WindowName(int64_t window_ms);
int64_t DefaultWindow(const std::vector<int64_t>& windows_ms);
// Bucket widths: whole seconds below an hour ("60s"), else as a window ("1h").
std::string BucketName(int64_t bucket_ms);

}  // namespace seismo
