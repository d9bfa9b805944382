#include "seismo/query/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "seismo/core/time.h"

namespace seismo {
namespace {

struct EndpointEntry {
  Endpoint endpoint;
  std::string_view path;
};

constexpr std::array<EndpointEntry, 11> kEndpoints = {{
    {Endpoint::kStatus, "/api/v1/status"},
    {Endpoint::kBuilds, "/api/v1/builds"},
    {Endpoint::kHangs, "/api/v1/hangs"},
    {Endpoint::kHangsTimeseries, "/api/v1/hangs/timeseries"},
    {Endpoint::kHangsFlamegraph, "/api/v1/hangs/flamegraph"},
    {Endpoint::kCrashesTop, "/api/v1/crashes/top"},
    {Endpoint::kCrashesTimeseries, "/api/v1/crashes/timeseries"},
    {Endpoint::kCrashesSignature, "/api/v1/crashes/signature"},
    {Endpoint::kAlerts, "/api/v1/alerts"},
    {Endpoint::kReleases, "/api/v1/releases"},
    {Endpoint::kHangsFlameDiff, "/api/v1/hangs/flamegraph/diff"},
}};

constexpr std::array<std::string_view, kDimCount> kDimNames = {
    "source", "channel", "os", "build_date", "build_id", "product", "version", "process", "thread", "signature"};

constexpr size_t kMaxLimit = 1000;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> Decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return Status::InvalidArgument("truncated escape");
      const int hi = HexValue(s[i + 1]);
      const int lo = HexValue(s[i + 2]);
      if (hi < 0 || lo < 0) return Status::InvalidArgument("bad escape");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// Dimension filters: every endpoint but status. Window and limit: the endpoints
// that answer from the snapshot's windows (alerts are the engine's current list).
bool AcceptsFilters(Endpoint e) { return e != Endpoint::kStatus; }
bool AcceptsWindow(Endpoint e) {
  return e != Endpoint::kStatus && e != Endpoint::kAlerts && e != Endpoint::kReleases &&
         e != Endpoint::kHangsFlameDiff;
}
// /releases compares builds over their lives, every OS and process together (ADR 0029):
// it is chosen by channel and build (or build date) and hang source only.
bool ReleasesTake(Dim d) {
  return d == Dim::kChannel || d == Dim::kBuildId || d == Dim::kBuildDate || d == Dim::kSource ||
         d == Dim::kSignature;
}
// The differential flame graph compares a build date with its baselines over every OS, as
// /releases does (ADR 0030), within one process, thread or signature when asked.
bool FlameDiffTakes(Dim d) {
  return d == Dim::kChannel || d == Dim::kBuildDate || d == Dim::kSource || d == Dim::kProcess ||
         d == Dim::kThread || d == Dim::kSignature;
}
// Endpoints that compare a build with its baselines: chosen by channel, no window.
bool IsComparison(Endpoint e) { return e == Endpoint::kReleases || e == Endpoint::kHangsFlameDiff; }
bool IsHangs(Endpoint e) {
  return e == Endpoint::kHangs || e == Endpoint::kHangsTimeseries || e == Endpoint::kHangsFlamegraph ||
         e == Endpoint::kHangsFlameDiff;
}
// Hang rows and their usage are kept per (source, channel, os, build_date) (SPEC §3.1):
// a filter on a build's id, version or product cannot narrow them, so it is refused
// rather than ignored (ADR 0026).
bool HangsLack(Dim d) { return d == Dim::kBuildId || d == Dim::kVersion || d == Dim::kProduct; }
constexpr std::array<std::string_view, 3> kAlertStates = {"firing", "pending", "resolved"};

std::string WindowList(const std::vector<int64_t>& windows_ms) {
  std::string out;
  for (int64_t w : windows_ms) out += WindowName(w) + ", ";
  return out + "all";
}

Status Bad(std::string_view param, std::string_view problem) {
  return Status::InvalidArgument(fmt::format("{}: {}", param, problem));
}

}  // namespace

std::optional<Endpoint> EndpointFromPath(std::string_view path) {
  for (const EndpointEntry& e : kEndpoints) {
    if (e.path == path) return e.endpoint;
  }
  return std::nullopt;
}

std::string_view EndpointPath(Endpoint e) { return kEndpoints[static_cast<size_t>(e)].path; }

std::string_view DimName(Dim d) { return kDimNames[static_cast<size_t>(d)]; }

bool FilterMatches(Dim d, std::string_view text, std::string_view want) {
  if (d != Dim::kOs) return text == want;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return std::equal(text.begin(), text.end(), want.begin(), want.end(),
                    [&lower](char a, char b) { return lower(a) == lower(b); });
}

std::string WindowName(int64_t window_ms) {
  if (window_ms == 0) return "all";
  if (window_ms > kDayMs && window_ms % kDayMs == 0) return fmt::format("{}d", window_ms / kDayMs);
  if (window_ms % kHourMs == 0) return fmt::format("{}h", window_ms / kHourMs);
  return FormatDuration(std::chrono::milliseconds(window_ms));
}

std::string BucketName(int64_t bucket_ms) {
  if (bucket_ms < kHourMs && bucket_ms % 1000 == 0) return fmt::format("{}s", bucket_ms / 1000);
  return WindowName(bucket_ms);
}

int64_t DefaultWindow(const std::vector<int64_t>& windows_ms) {
  if (windows_ms.empty()) return 0;
  if (std::find(windows_ms.begin(), windows_ms.end(), kDayMs) != windows_ms.end()) return kDayMs;
  std::vector<int64_t> sorted = windows_ms;
  std::sort(sorted.begin(), sorted.end());
  return sorted[sorted.size() / 2];
}

namespace {

// "IPCError-browser | ShutDownKill" or "IPCError-content | ShutDownKill", alone or with the
// parts later rules add (" | IPC_Message_Name=..."): SignatureIPCChannelError's output for
// the kill, whichever side reported it.
bool IsShutdownKill(std::string_view signature) {
  for (std::string_view side : {"IPCError-browser | ShutDownKill", "IPCError-content | ShutDownKill"}) {
    if (signature.starts_with(side)) {
      const std::string_view rest = signature.substr(side.size());
      if (rest.empty() || rest.starts_with(" | ")) return true;
    }
  }
  return false;
}

}  // namespace

bool Excluded(uint8_t exclude, std::string_view signature) {
  return ((exclude & kExcludeOom) != 0 && signature.starts_with("OOM |")) ||
         ((exclude & kExcludeEmpty) != 0 && signature.starts_with("EMPTY:")) ||
         ((exclude & kExcludeShutdownKill) != 0 && IsShutdownKill(signature));
}

Result<Params> ParseQueryString(std::string_view raw) {
  Params out;
  while (!raw.empty()) {
    size_t amp = raw.find('&');
    std::string_view piece = raw.substr(0, amp);
    raw = amp == std::string_view::npos ? std::string_view() : raw.substr(amp + 1);
    if (piece.empty()) continue;
    size_t eq = piece.find('=');
    auto name = Decode(piece.substr(0, eq));
    auto value = Decode(eq == std::string_view::npos ? std::string_view() : piece.substr(eq + 1));
    if (!name || !value) {
      return Bad(name ? std::string_view(*name) : std::string_view("query"), "malformed percent-encoding");
    }
    out.emplace_back(std::move(*name), std::move(*value));
  }
  return out;
}

Result<Query> ParseQuery(Endpoint endpoint, const Params& params, const std::vector<int64_t>& windows_ms) {
  Query q;
  q.window_ms = DefaultWindow(windows_ms);
  std::vector<std::string_view> seen;
  bool has_signature = false;
  for (const auto& [name, value] : params) {
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) return Bad(name, "given more than once");
    seen.push_back(name);
    const bool filters = AcceptsFilters(endpoint);
    const bool windowed = AcceptsWindow(endpoint);
    if (name == "window" && windowed) {
      if (value == "all") {
        q.window_ms = 0;
        continue;
      }
      auto d = ParseDuration(value);
      if (!d || std::find(windows_ms.begin(), windows_ms.end(), d->count()) == windows_ms.end()) {
        return Bad(name, fmt::format("unknown window '{}' (one of {})", value, WindowList(windows_ms)));
      }
      q.window_ms = d->count();
    } else if (name == "limit" && windowed) {
      size_t limit = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), limit);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() || limit < 1 ||
          limit > kMaxLimit) {
        return Bad(name, fmt::format("'{}' is not an integer in 1..{}", value, kMaxLimit));
      }
      q.limit = limit;
    } else if (name == "by" && endpoint == Endpoint::kHangs) {
      if (value == "signature") {
        q.by = HangsBy::kSignature;
      } else if (value == "thread") {
        q.by = HangsBy::kThread;
      } else if (value == "build_date") {
        q.by = HangsBy::kBuildDate;
      } else {
        return Bad(name, fmt::format("unknown grouping '{}' (signature, thread or build_date)", value));
      }
    } else if (name == "format" && endpoint == Endpoint::kHangsFlamegraph) {
      if (value == "tree") {
        q.format = FlameFormat::kTree;
      } else if (value == "collapsed") {
        q.format = FlameFormat::kCollapsed;
      } else {
        return Bad(name, fmt::format("unknown format '{}' (tree or collapsed)", value));
      }
    } else if (name == "exclude" && endpoint == Endpoint::kCrashesTop) {
      if (value.empty()) return Bad(name, "empty value");
      // Every comma-separated item must be a name: "oom,", ",oom" and "oom,,empty" are refused.
      for (size_t start = 0;;) {
        const size_t comma = value.find(',', start);
        const std::string_view item = std::string_view(value).substr(start, comma - start);
        if (item == "oom") {
          q.exclude |= kExcludeOom;
        } else if (item == "empty") {
          q.exclude |= kExcludeEmpty;
        } else if (item == "shutdownkill") {
          q.exclude |= kExcludeShutdownKill;
        } else {
          return Bad(name, fmt::format("unknown exclusion '{}' (oom, empty, shutdownkill)", item));
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (name == "sparklines" && endpoint == Endpoint::kCrashesTop) {
      if (value != "0" && value != "1") return Bad(name, fmt::format("'{}' is not 0 or 1", value));
      q.sparklines = value == "1";
    } else if ((name == "rule" || name == "state") && endpoint == Endpoint::kAlerts) {
      if (value.empty()) return Bad(name, "empty value");
      if (name == "state" &&
          std::find(kAlertStates.begin(), kAlertStates.end(), value) == kAlertStates.end()) {
        return Bad(name, fmt::format("unknown state '{}' (firing, pending or resolved)", value));
      }
      (name == "rule" ? q.alert_rule : q.alert_state) = value;
    } else {
      auto dim = std::find(kDimNames.begin(), kDimNames.end(), name);
      if (dim == kDimNames.end() || !filters) return Bad(name, "unknown parameter");
      if (value.empty()) return Bad(name, "empty value");
      const Dim d = static_cast<Dim>(dim - kDimNames.begin());
      if (endpoint == Endpoint::kReleases && !ReleasesTake(d)) {
        return Bad(name,
                   "releases are compared over every OS and process (channel, build_id, build_date, source, "
                   "signature)");
      }
      if (endpoint == Endpoint::kHangsFlameDiff && !FlameDiffTakes(d)) {
        return Bad(name,
                   "a build date is compared with its baselines over every OS (channel, build_date, source, "
                   "process, thread, signature)");
      }
      if (IsHangs(endpoint) && HangsLack(d)) {
        return Bad(name, "hangs are kept per build date, not per build (filter by build_date)");
      }
      if (d == Dim::kSource && value != "main" && value != "bhr") {
        return Bad(name, fmt::format("unknown source '{}' (main or bhr)", value));
      }
      if (d == Dim::kSignature) has_signature = true;
      if (d == Dim::kProcess && value == "any") continue;
      q.filters[d] = value;
    }
  }
  if (endpoint == Endpoint::kCrashesSignature && !has_signature) return Bad("signature", "required");
  if (IsComparison(endpoint) && !q.filters[Dim::kChannel]) return Bad("channel", "required");
  return q;
}

}  // namespace seismo
