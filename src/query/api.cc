#include "seismo/query/api.h"

#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <iterator>
#include <optional>
#include <tuple>
#include <utility>

#include "seismo/aggregate/row_changes.h"
#include "seismo/core/hash.h"
#include "seismo/core/huge_pages.h"
#include "seismo/core/json_writer.h"
#include "seismo/query/alerts_json.h"
#include "seismo/query/builds_json.h"
#include "seismo/query/crashes_json.h"
#include "seismo/query/flame_diff.h"
#include "seismo/query/flamegraph.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/hangs_json.h"
#include "seismo/query/params.h"
#include "seismo/query/releases_json.h"
#include "seismo/query/selection.h"

namespace seismo {

std::string ErrorJson(std::string_view message) {
  JsonWriter w;
  w.BeginObject();
  w.Key("error").String(message);
  w.EndObject();
  return w.Take();
}

namespace {

// Bytes of working memory an answer may take per series of the snapshot (hash maps of
// groups and stacks, the flame graph's stack list and prefix sums), and per flame-graph
// node (the node and the candidates waiting).
constexpr uint64_t kBytesPerSeries = 128;
constexpr uint64_t kBytesPerNode = 220;
// An answer's large arrays (a flame graph's stacks, sort keys and their scratch, IdSums'
// entries) are whole huge pages each (core/huge_pages.h): up to this many, each with at most
// a huge page more than its bytes.
constexpr uint64_t kLargeArrays = 8;
// How long a request waits for the answers in flight to be sent before it is refused.
constexpr std::chrono::milliseconds kAdmissionPatience{200};

// The answer's key in the cache: the endpoint and every field of the parsed query (each
// value with its length: a value may hold any byte). A field added to Query must be added
// here, or two queries that differ in it share one answer (ApiCache.*).
std::string CacheKey(Endpoint endpoint, const Query& q) {
  std::string key(EndpointPath(endpoint));
  auto add = [&key](std::string_view name, std::string_view value) {
    key += '\n';
    key += name;
    key += '=';
    key += std::to_string(value.size());
    key += ':';
    key += value;
  };
  add("window", std::to_string(q.window_ms));
  add("limit", std::to_string(q.limit));
  add("by", std::to_string(static_cast<int>(q.by)));
  add("format", std::to_string(static_cast<int>(q.format)));
  add("sparklines", q.sparklines ? "1" : "0");
  add("exclude", std::to_string(q.exclude));
  if (q.alert_rule) add("rule", *q.alert_rule);
  if (q.alert_state) add("state", *q.alert_state);
  for (size_t d = 0; d < kDimCount; ++d) {
    if (q.filters.value[d]) add(DimName(static_cast<Dim>(d)), *q.filters.value[d]);
  }
  return key;
}

// The 400 of a process filter no row of `snap` can match (KnownProcess), or nullopt.
std::optional<ApiAnswer> UnknownProcess(const Snapshot& snap, const Query& q) {
  const auto& process = q.filters[Dim::kProcess];
  if (!process || KnownProcess(snap, *process)) return std::nullopt;
  return ApiAnswer{
      400, "application/json",
      ErrorJson(fmt::format("process: unknown process '{}' (parent, content, gpu, rdd, socket, utility, "
                            "gmplugin, plugin, another one in the data, or any)",
                            *process))};
}

// The answers that are a function of (snapshot, endpoint, query), the process filter checked
// (UnknownProcess) before. `shared`: the hang rows a warm-up round's answers read (hang_rows.h),
// or none.
ApiAnswer Compute(Endpoint endpoint, const Snapshot& snap, const Query& q, const ApiSettings& settings,
                  const HangRows* shared = nullptr, FlameCarry* flame = nullptr,
                  const HangGroups* groups = nullptr, const BucketSums* buckets = nullptr,
                  const BuildDateSums* build_dates = nullptr) {
  const AnswerLimits& limits = settings.limits;
  switch (endpoint) {
    case Endpoint::kBuilds:
      return {200, "application/json", BuildsJson(snap, q, settings.baselines, shared, build_dates, limits)};
    case Endpoint::kReleases:
      return {200, "application/json", ReleasesJson(snap, q, settings.baselines)};
    case Endpoint::kHangsFlameDiff:
      return {200, "application/json", FlamegraphDiffJson(snap, q, settings.baselines, limits)};
    case Endpoint::kHangs:
      return {200, "application/json", HangsJson(snap, q, limits, shared, groups)};
    case Endpoint::kHangsTimeseries:
      return {200, "application/json", HangsTimeseriesJson(snap, q, buckets)};
    case Endpoint::kHangsFlamegraph:
      if (q.format == FlameFormat::kCollapsed) {
        return {200, "text/plain; charset=utf-8", FlamegraphCollapsed(snap, q, limits, shared, flame)};
      }
      return {200, "application/json", FlamegraphTreeJson(snap, q, limits, shared, flame)};
    case Endpoint::kCrashesTop:
      return {200, "application/json", CrashesTopJson(snap, q, limits)};
    case Endpoint::kCrashesTimeseries:
      return {200, "application/json", CrashesTimeseriesJson(snap, q)};
    case Endpoint::kCrashesSignature:
      return {200, "application/json", CrashSignatureJson(snap, q, limits)};
    case Endpoint::kStatus:
    case Endpoint::kAlerts:
      break;
  }
  return {500, "application/json", ErrorJson("internal error")};
}

// What the warm-up holds for a structure it keeps of `bytes` now: an eighth more, room for the
// table to grow into before a larger hold is taken.
uint64_t WithRoomToGrow(uint64_t bytes) { return bytes + bytes / 8; }

// A hold of `bytes` for what the warm-up keeps between rounds, taken only when a request that
// misses the cache (an answer's `estimate`) still fits beside it; none otherwise.
std::shared_ptr<const AnswerBudget::Hold> ReserveBesideARequest(AnswerBudget& budget, uint64_t bytes,
                                                                uint64_t estimate) {
  if (budget.in_use() + bytes + estimate > budget.capacity()) return nullptr;
  return budget.TryReserve(bytes, std::chrono::milliseconds(0));
}

ApiAnswer Busy() {
  return {503, "application/json",
          ErrorJson("busy: the answers in flight hold all of http.answer_memory; retry in a moment")};
}

// The dashboard's first requests (dashboards/js/views/*.js with no filter set) and every
// endpoint without parameters (what scripts/bench asks for); and /releases?channel=C for
// every channel of the snapshot (WarmDefaultAnswers).
constexpr std::pair<std::string_view, std::string_view> kDefaultAnswers[] = {
    {"/api/v1/builds", "limit=200"},
    {"/api/v1/builds", ""},
    {"/api/v1/hangs", "by=build_date&limit=25"},
    {"/api/v1/hangs", ""},
    {"/api/v1/hangs", "by=thread"},
    {"/api/v1/hangs/timeseries", ""},
    {"/api/v1/hangs/flamegraph", ""},
    {"/api/v1/crashes/top", ""},
    {"/api/v1/crashes/timeseries", ""},
};

}  // namespace

uint64_t EstimateAnswerBytes(const Snapshot& snap, const ApiSettings& settings) {
  uint64_t series = 0;
  for (size_t t = 0; t < kTableCount; ++t) series += snap.table(static_cast<Table>(t)).size();
  return AnswerBytesFor(series, settings);
}

uint64_t AnswerBytesFor(uint64_t series, const ApiSettings& settings) {
  const uint64_t arrays = series * kBytesPerSeries;
  const uint64_t pages = arrays < kHugePageBlockFrom ? 0 : kLargeArrays * kHugePageBytes;
  return arrays + pages + settings.limits.max_nodes * kBytesPerNode + 4 * settings.limits.max_bytes;
}

namespace {

// What an answer reads at most, to be built over the newest snapshot on request rather than
// served from an older one (ADR 0039): a view of one signature, or of a thread or process
// indexed ahead.
constexpr size_t kFewRows = 4096;

// The rows the answer over `snap` reads, when they are at most kFewRows from an index `snap`
// has made, and the usage tables beside them; nullopt otherwise. The hang and crash views read
// their rows through CandidateRows, but `/hangs` by signature reads every row of each signature
// it shows (from the signature index) unless it filters on one signature.
std::optional<uint64_t> RowsReadIfFew(Endpoint endpoint, const Snapshot& snap, const Query& q) {
  std::optional<size_t> rows;
  switch (endpoint) {
    case Endpoint::kHangs:
      if (q.by == HangsBy::kSignature && !q.filters[Dim::kSignature]) break;
      [[fallthrough]];
    case Endpoint::kHangsTimeseries:
    case Endpoint::kHangsFlamegraph:
      rows = RowsFromMadeIndexes(snap, Table::kHangs, q.filters);
      break;
    case Endpoint::kCrashesTop:
    case Endpoint::kCrashesTimeseries:
    case Endpoint::kCrashesSignature:
      rows = RowsFromMadeIndexes(snap, Table::kCrashes, q.filters);
      break;
    default:
      break;
  }
  if (!rows || *rows > kFewRows) return std::nullopt;
  return *rows + snap.table(Table::kUsage).size() + snap.table(Table::kBuildUsage).size();
}

}  // namespace

ApiAnswer AnswerApi(std::string_view path, std::string_view raw_query, const StateProvider& provider,
                    const ApiSettings& settings, int64_t now_ms, AnswerCache<ApiAnswer>* cache,
                    AnswerBudget* budget, const std::shared_ptr<const Snapshot>& warmed,
                    const std::shared_ptr<const Snapshot>& views_warmed) {
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
  if (*endpoint == Endpoint::kStatus) {
    return {200, "application/json", StatusJson(held.get(), provider.counts(), provider.status(), settings, now_ms)};
  }
  if (*endpoint == Endpoint::kAlerts) {
    if (auto unknown = UnknownProcess(snap, q)) return *std::move(unknown);
    JsonWriter w;
    w.BeginObject();
    w.Key("alerts").Raw(FilterAlertsJson(provider.alerts_json(), q));
    w.EndObject();
    return {200, "application/json", w.Take()};
  }
  // The rest is a function of (snapshot, endpoint, query).
  const std::string key = cache != nullptr && held ? CacheKey(*endpoint, q) : std::string();
  std::shared_ptr<const ApiAnswer> stored = key.empty() ? nullptr : cache->Find(held, key);
  // Not built for the newest snapshot yet: the newest kept snapshot's answer that is no older
  // than the newest warmed one (a default answer, served from there while the warm-up builds
  // the next, never built on request), or for a view in use no older than the snapshot the
  // views were built over while the warm-up builds them over the newest warmed one (ADR 0035).
  // The newest, so an answer a request built over a snapshot newer than those is not followed
  // by an older one.
  // A view a made index narrows to a few rows is built over the newest snapshot instead, when
  // the cache keeps that snapshot's answers (the warm-up's, which made the index): it costs
  // little, counts a document a warm-up round sooner, and is never followed by an older
  // answer (ADR 0039).
  std::optional<uint64_t> few_rows;
  if (!stored && !key.empty() && (warmed || views_warmed)) {
    if (cache->Protects(held)) few_rows = RowsReadIfFew(*endpoint, snap, q);
    if (!few_rows) {
      int64_t floor = INT64_MAX;
      for (const auto* s : {&warmed, &views_warmed}) {
        if (*s) floor = std::min(floor, (*s)->built_at_ms);
      }
      stored = cache->FindNewest(key, floor);
      // An older snapshot's 400 (a process its rows did not hold) may not be the newest's.
      if (stored && stored->status != 200) stored = nullptr;
    }
  }
  // A process filter outside the built-in names is checked on a miss only, over the newest
  // snapshot (the check may walk the hang and crash tables), before the budget: its 400 takes no
  // memory, and is kept like an answer, so that a client repeating it is answered from the cache.
  if (!stored) {
    if (auto unknown = UnknownProcess(snap, q)) {
      return key.empty() ? *std::move(unknown) : *cache->Get(held, key, [&] { return *unknown; });
    }
  }
  std::shared_ptr<const AnswerBudget::Hold> hold;
  if (budget != nullptr) {
    const uint64_t bytes = stored     ? 2 * stored->body.size()
                           : few_rows ? AnswerBytesFor(*few_rows, settings)
                                      : EstimateAnswerBytes(snap, settings);
    hold = budget->TryReserve(bytes, kAdmissionPatience);
    if (!hold) return Busy();
  }
  ApiAnswer a = stored        ? *stored
                : key.empty() ? Compute(*endpoint, snap, q, settings)
                              : *cache->Get(held, key, [&] { return Compute(*endpoint, snap, q, settings); });
  a.hold = std::move(hold);
  return a;
}

namespace {

// Which of kHangFieldsIndexedAhead's indexes a round over a hang table of `hang_rows` makes
// (ADR 0036): a dimension's while a value in use is not known to hold half the table or more.
// Verdicts of values no longer in use are dropped, and all of a dimension's once the table has
// doubled or halved since they were measured.
std::vector<size_t> AheadIndexesToMake(WarmCarry& carry, size_t hang_rows) {
  std::vector<size_t> make;
  for (size_t i = 0; i < kHangFieldsIndexedAhead.size(); ++i) {
    const std::vector<std::string>& values = carry.filter_values_in_use[i];
    std::vector<std::string>& unselective = carry.unselective[i];
    const size_t measured_at = carry.unselective_at[i];
    if (hang_rows > 2 * measured_at || measured_at > 2 * hang_rows) unselective.clear();
    std::erase_if(unselective,
                  [&values](const std::string& v) { return std::ranges::find(values, v) == values.end(); });
    if (unselective.size() < values.size()) make.push_back(i);
  }
  return make;
}

// The verdicts of the values in use of each dimension in `made`, from its index just made over
// `snap`: those that hold half the hang table or more.
void JudgeSelectivity(const Snapshot& snap, std::span<const size_t> made, WarmCarry& carry) {
  const size_t hang_rows = snap.table(Table::kHangs).size();
  for (const size_t i : made) {
    std::vector<std::string>& unselective = carry.unselective[i];
    unselective.clear();
    carry.unselective_at[i] = hang_rows;
    for (const std::string& value : carry.filter_values_in_use[i]) {
      const auto held =
          snap.RowsWithTextHashIfMade(Table::kHangs, kHangFieldsIndexedAhead[i].field, Hash64(value));
      if (!held) {  // not made (out of memory): no verdicts
        unselective.clear();
        break;
      }
      if (hang_rows > 0 && 2 * held->size() >= hang_rows) unselective.push_back(value);
    }
  }
}

}  // namespace

void WarmDefaultAnswers(const std::shared_ptr<const Snapshot>& snap, const ApiSettings& settings,
                        AnswerCache<ApiAnswer>& cache, AnswerBudget* budget, WarmCarry* carry) {
  if (!snap) return;
  const uint64_t estimate = EstimateAnswerBytes(*snap, settings);
  if (budget != nullptr && estimate > budget->capacity() / 2) {
    if (carry != nullptr) carry->DropAll();  // nothing built ahead: nothing held for it either
    return;
  }
  // What changed in the hang table since the previous round's snapshot (ADR 0034): this
  // round's hang text indexes are made from that round's with it, and the carried rows updated.
  // Out of memory in any of these: what failed is made in full (the index by its first
  // reader, the rows anew); on the warm-up thread, never let it end the process.
  std::optional<RowChanges> hang_changes;
  if (carry != nullptr && carry->snap) {
    try {
      hang_changes = ChangedRows(*carry->snap, *snap, Table::kHangs);
    } catch (const std::exception&) {
    }
  }
  // The hang text indexes the round makes: the signature's, and those CandidateRows reads only
  // where made (a thread's or a process's rows, selection.h) while a view in use filters on a
  // value of theirs not known to hold half the table (ADR 0036).
  std::vector<size_t> hang_indexed = {hang_field::kSignature};
  std::vector<size_t> ahead_made;  // of kHangFieldsIndexedAhead
  if (carry != nullptr) {
    try {
      ahead_made = AheadIndexesToMake(*carry, snap->table(Table::kHangs).size());
      for (const size_t i : ahead_made) hang_indexed.push_back(kHangFieldsIndexedAhead[i].field);
    } catch (const std::exception&) {
      ahead_made.clear();
      hang_indexed.resize(1);
    }
  }
  if (hang_changes) {
    for (const size_t field : hang_indexed) {
      try {
        if (snap->IndexTextsFrom(*carry->snap, Table::kHangs, field, hang_changes->removed,
                                 hang_changes->added) &&
            field == hang_field::kSignature) {
          ++carry->index_carried;
        }
      } catch (const std::exception&) {
      }
    }
    // The build index the /builds and Releases answers read, from the previous one's too
    // (when that round's answers made it).
    try {
      if (snap->BuildsFrom(*carry->snap, hang_changes->removed, hang_changes->added)) ++carry->builds_carried;
    } catch (const std::exception&) {
    }
  }
  // The indexes a signature's pages and a thread's or process's views read (selection.h
  // CandidateRows), built off the request path too (unless made above); each on its own, so
  // that one out of memory leaves the others made.
  auto make_index = [&snap](Table t, size_t field) {
    try {
      snap->RowsWithTextHash(t, field, 0);
    } catch (const std::exception&) {
    }
  };
  for (const size_t field : hang_indexed) make_index(Table::kHangs, field);
  make_index(Table::kCrashes, crash_field::kSignature);
  if (!ahead_made.empty()) {
    try {
      JudgeSelectivity(*snap, ahead_made, *carry);
    } catch (const std::exception&) {
      for (const size_t i : ahead_made) carry->unselective[i].clear();  // no verdicts: measured again
    }
  }
  const std::vector<int64_t>& windows = snap->windows_ms.empty() ? settings.windows_ms : snap->windows_ms;
  std::vector<std::pair<Endpoint, Params>> answers;
  for (const auto& [path, raw_query] : kDefaultAnswers) {
    const std::optional<Endpoint> endpoint = EndpointFromPath(path);
    auto params = ParseQueryString(raw_query);
    if (endpoint && params) answers.emplace_back(*endpoint, std::move(*params));
  }
  // The Releases view of each channel, as the dashboard opens it (its newest build).
  absl::flat_hash_set<Sym> channels;
  for (const SeriesData* s : snap->table(Table::kBuildUsage)) channels.insert(s->key[build_field::kChannel]);
  std::vector<std::string> names;
  for (Sym c : channels) names.emplace_back(snap->Text(c));
  std::sort(names.begin(), names.end());
  for (std::string& name : names)
    answers.emplace_back(Endpoint::kReleases, Params{{"channel", std::move(name)}});
  // The hang rows of the default window, every source: read by the /builds, /hangs and flame
  // graph answers, where each walked the hang table and summed its windows (hang_rows.h). Made
  // for the first of them when the budget has room for them beside the round's answer and one
  // request's (one that misses the cache still fits, as without them), else each answer walks
  // the table; given back after the last, so the answers after those hold what they held
  // before, unless a `carry` keeps them for the next round (then the budget holds them too).
  auto reads_rows = [](Endpoint e) {
    return e == Endpoint::kBuilds || e == Endpoint::kHangs || e == Endpoint::kHangsFlamegraph;
  };
  const auto readers_end = std::stable_partition(
      answers.begin(), answers.end(), [&reads_rows](const auto& answer) { return reads_rows(answer.first); });
  std::optional<HangRows> shared;
  std::shared_ptr<const AnswerBudget::Hold> shared_hold;
  bool shared_tried = false;
  RowDelta delta;             // what the rows' update changed, for the groups
  bool rows_updated = false;  // the rows were updated (not made anew): `delta` is what changed
  auto make_rows = [&] {
    // Carried rows first, updated while their hold covers the rows of this snapshot (a larger
    // one taken in its place when the table grew) and a request that misses the cache still
    // fits beside them.
    const uint64_t needed = HangRows::BytesFor(snap->table(Table::kHangs).size());
    const uint64_t bytes = carry != nullptr ? WithRoomToGrow(needed) : needed;
    auto covered = [&] {
      if (budget == nullptr) return true;
      if (!carry->hold || 2 * estimate + bytes > budget->capacity()) return false;
      if (carry->hold->bytes() < needed) {
        if (auto larger = budget->TryReserve(bytes, std::chrono::milliseconds(0)))
          carry->hold = std::move(larger);
      }
      return carry->hold->bytes() >= needed;
    };
    if (carry != nullptr && carry->rows && carry->snap && hang_changes &&
        carry->rows->Serves(DefaultWindow(windows), Filters{}) && covered()) {
      try {
        if (carry->rows->Update(*carry->snap, *snap, *hang_changes, &delta)) {
          shared = std::move(carry->rows);
          shared_hold = std::move(carry->hold);
          ++carry->rows_updated;
          rows_updated = true;
          return;
        }
      } catch (const std::exception&) {
        // out of memory midway: the rows are neither before's nor after's; made anew below
      }
    }
    if (carry != nullptr) carry->DropRows();  // given back before new ones are reserved
    if (budget != nullptr && (2 * estimate + bytes > budget->capacity() ||
                              !(shared_hold = budget->TryReserve(bytes, std::chrono::milliseconds(0))))) {
      return;
    }
    try {
      shared.emplace(*snap, DefaultWindow(windows), Filters{});
    } catch (const std::exception&) {
      shared.reset();  // out of memory: the answers walk the table
      shared_hold.reset();
    }
  };
  // A hold for what the carry keeps between rounds, `needed` bytes now: true while it covers
  // them (a larger one taken in its place when they grew) and a request that misses the cache
  // still fits beside it; else what it held is given back (`drop`).
  auto carried_hold = [&](std::shared_ptr<const AnswerBudget::Hold>& hold, uint64_t needed, auto&& drop) {
    if (budget == nullptr) return true;
    if (hold && hold->bytes() >= needed) {
      if (budget->in_use() + estimate <= budget->capacity()) return true;
      drop();  // a request that misses the cache would not fit beside it
      return false;
    }
    const uint64_t bytes = WithRoomToGrow(needed);
    // A larger hold: taken beside the one held, keeping what it covers, when both fit; else
    // after that is given back (and made anew).
    if (hold) {
      if (auto larger = ReserveBesideARequest(*budget, bytes, estimate)) {
        hold = std::move(larger);
        return true;
      }
    }
    drop();
    hold = ReserveBesideARequest(*budget, bytes, estimate);
    return hold != nullptr;
  };
  // The flame graph's stacks in frame order, kept from round to round (stack_order.h), while
  // their hold covers this snapshot's and a request that misses the cache still fits beside
  // them; else given back, and the flame graph sorts its stacks.
  auto stacks_covered = [&] {
    if (carry == nullptr) return false;
    if (snap->table(Table::kHangs).empty()) {  // nothing to order: nothing held
      carry->DropStacks();
      return false;
    }
    const uint64_t needed = StackOrder::BytesFor(
        snap->table(Table::kHangs).size(), snap->symbols != nullptr ? snap->symbols->stacks().IdBound() : 0);
    return carried_hold(carry->stacks_hold, needed, [&] { carry->DropStacks(); });
  };
  // The default /hangs answers' groups (hang_groups.h), of the rows' window and the default
  // source: brought from the carried ones with what the rows' update changed, else made from
  // the rows, while their hold covers them; else given back, and each answer sums the rows.
  constexpr HangsBy kGroupings[] = {HangsBy::kSignature, HangsBy::kThread, HangsBy::kBuildDate};
  constexpr size_t kByStack = std::size(kGroupings);  // carry->groups[kByStack]: the flame graph's
  static_assert(kByStack + 1 == std::tuple_size_v<decltype(WarmCarry::groups)>);
  static_assert(static_cast<size_t>(HangsBy::kSignature) == 0 && static_cast<size_t>(HangsBy::kThread) == 1 &&
                static_cast<size_t>(HangsBy::kBuildDate) == 2);  // carry->groups[by]
  auto keep_groups = [&] {
    if (carry == nullptr) return;
    if (!shared) {
      carry->DropGroups();
      return;
    }
    const size_t rows = shared->rows().size();
    if (rows == 0) {  // no groups: nothing held
      carry->DropGroups();
      return;
    }
    bool all_brought = true;
    // Out of memory anywhere here: given back, and each answer sums the rows (on the warm-up
    // thread: never let it end the process).
    try {
      // The four kept (each made or updated under this answer's hold: ADR 0037).
      const uint64_t needed = std::size(kGroupings) * HangGroups::KeptBytesFor(rows) +
                              HangGroups::KeptBytesFor(rows, /*by_stack=*/true);
      if (!carried_hold(carry->groups_hold, needed, [&] { carry->DropGroups(); })) return;
      Filters filters;
      filters[Dim::kSource] = HangSource(*snap, Query{});
      const Sym source = SourceId(*snap, *filters[Dim::kSource]);
      const int64_t window = DefaultWindow(windows);
      for (size_t i = 0; i < carry->groups.size(); ++i) {
        std::optional<HangGroups>& g = carry->groups[i];
        const bool by_stack = i == kByStack;
        const bool serves =
            g && (by_stack ? g->ServesStacks(window, filters, snap->symbols, source)
                           : g->Serves(kGroupings[i], window, filters, snap->symbols, source));
        // Brought, unless they were of other rows or outgrew their bound (a table that
        // shrank): then made anew (or none, past their group numbers: each answer sums the rows).
        if (rows_updated && serves && g->Apply(delta) &&
            g->MemoryBytes() <= HangGroups::KeptBytesFor(rows, by_stack)) {
          continue;
        }
        all_brought = false;
        g.reset();
        g = by_stack ? HangGroups::MakeByStack(window, snap->symbols, source, shared->rows())
                     : HangGroups::Make(kGroupings[i], window, snap->symbols, source, shared->rows());
      }
    } catch (const std::exception&) {
      carry->DropGroups();
      return;
    }
    if (all_brought) ++carry->groups_updated;
  };
  // The default /builds answers' hang sums by build date (build_date_sums.h), of the rows:
  // brought from the carried ones with what the rows' update changed, else made from the rows,
  // while their hold covers them; else given back, and each answer sums the rows.
  auto keep_build_dates = [&] {
    if (carry == nullptr) return;
    if (!shared || shared->rows().empty()) {
      carry->DropBuildDates();
      return;
    }
    // Out of memory: given back, and the answers sum the rows (never end the process here).
    try {
      const int64_t window = DefaultWindow(windows);
      if (rows_updated && carry->build_dates &&
          carry->build_dates->Serves(window, Filters{}, snap->symbols) && carry->build_dates->Apply(delta)) {
        ++carry->build_dates_updated;
      } else {
        carry->build_dates.emplace(shared->rows(), window, snap->symbols);
      }
      // An entry per build date: a few kilobytes, held once made (their number is not known
      // before); a hold that cannot cover them gives them back.
      if (!carried_hold(carry->build_dates_hold, carry->build_dates->MemoryBytes(),
                        [&] { carry->build_dates_hold.reset(); })) {
        carry->DropBuildDates();
      }
    } catch (const std::exception&) {
      carry->DropBuildDates();
    }
  };
  // The default time series' sums by bucket (bucket_sums.h), of this snapshot: brought from
  // the carried ones with the change set, else made from the table, within a hold for their
  // span taken first (carried_hold); else given back, and the time series walks the table.
  auto keep_buckets = [&] {
    if (carry == nullptr) return;
    // Out of memory: given back, and the answer walks the table (never end the process here).
    try {
      const Sym source = SourceId(*snap, HangSource(*snap, Query{}));
      const bool bring = carry->buckets && carry->snap && hang_changes &&
                         CheaperThanAWalk(hang_changes->removed.size() + hang_changes->added.size(),
                                          snap->table(Table::kHangs).size()) &&
                         carry->buckets->Serves(Filters{}, snap->symbols, snap->bucket_ms, source);
      // Their span first, and the hold for it; then they are brought or made within it.
      const BucketSums::Span span =
          bring ? carry->buckets->SpanWith(*hang_changes) : BucketSums::SpanOf(*snap, source);
      if (span.size() == 0 || span.size() > BucketSums::kMaxBuckets ||
          !carried_hold(carry->buckets_hold, BucketSums::BytesFor(span.size()),
                        [&] { carry->DropBuckets(); })) {
        carry->DropBuckets();  // none, or too many: the answer walks the table
        return;
      }
      if (!bring) {
        carry->buckets = BucketSums::Make(*snap, source, span);
      } else if (carry->buckets && carry->buckets->Apply(*carry->snap, *snap, *hang_changes, span.size())) {
        ++carry->buckets_carried;
      } else {
        carry->DropBuckets();  // given back by carried_hold, or refused: made anew next round
      }
    } catch (const std::exception&) {
      carry->DropBuckets();
    }
  };
  keep_buckets();
  // The views in use kept by the views' pass (WarmViews): each one's groups brought up to date
  // with the rows of what the rows' update changed that pass its filters, while their hold
  // covers them; else given back (the next pass makes them anew from the rows).
  auto keep_views = [&] {
    if (carry == nullptr) return;
    if (!shared) {
      carry->DropViews();
      return;
    }
    for (WarmCarry::KeptView& v : carry->views) {
      if (!v.groups) continue;
      bool brought = false;
      try {
        // Kept while their hold covers them and a request that misses the cache still fits.
        RowFilter filter(*snap, Table::kHangs, v.also);
        brought = rows_updated &&
                  v.groups->Apply(delta, [&filter](const SeriesKey& k) { return filter.Matches(k); }) &&
                  (budget == nullptr ||
                   (v.hold && v.groups->MemoryBytes() + v.stacks.MemoryBytes() <= v.hold->bytes() &&
                    budget->in_use() + estimate <= budget->capacity()));
      } catch (const std::exception&) {
      }
      if (brought) {
        ++carry->views_brought;
      } else {
        v.groups.reset();
        v.stacks.Clear();
        v.hold.reset();
      }
    }
  };
  // `reader`: the answer reads the rows (made for the first reader that is built).
  auto build = [&](Endpoint endpoint, const Params& params, bool reader) {
    auto query = ParseQuery(endpoint, params, windows);
    if (!query) return;
    const std::string key = CacheKey(endpoint, *query);
    if (cache.Holds(snap, key)) return;
    std::shared_ptr<const AnswerBudget::Hold> hold;
    if (budget != nullptr && !(hold = budget->TryReserve(estimate, kAdmissionPatience))) return;
    if (reader && !std::exchange(shared_tried, true)) {
      make_rows();
      hang_changes.reset();  // read by nothing after (and outside the budget)
      keep_groups();
      keep_build_dates();
      keep_views();
      delta = RowDelta{};  // read by nothing after
    }
    try {
      const HangRows* rows = reader && shared ? &*shared : nullptr;
      const HangGroups* groups = nullptr;
      if (endpoint == Endpoint::kHangs && carry != nullptr && carry->groups[static_cast<size_t>(query->by)]) {
        groups = &*carry->groups[static_cast<size_t>(query->by)];
      }
      FlameCarry flame;
      if (endpoint == Endpoint::kHangsFlamegraph && stacks_covered()) {
        flame.order = &carry->stacks;
        flame.snap = snap;
      }
      if (endpoint == Endpoint::kHangsFlamegraph && carry != nullptr && carry->groups[kByStack]) {
        flame.by_stack = &*carry->groups[kByStack];
      }
      const BucketSums* buckets = endpoint == Endpoint::kHangsTimeseries && carry != nullptr && carry->buckets
                                      ? &*carry->buckets
                                      : nullptr;
      const BuildDateSums* build_dates =
          endpoint == Endpoint::kBuilds && carry != nullptr && carry->build_dates ? &*carry->build_dates
                                                                                  : nullptr;
      cache.Get(snap, key, [&] {
        return Compute(endpoint, *snap, *query, settings, rows,
                       flame.order != nullptr || flame.by_stack != nullptr ? &flame : nullptr, groups,
                       buckets, build_dates);
      });
      if (flame.carried) ++carry->stacks_carried;
      if (flame.by_stack_read) ++carry->flame_sums_read;
    } catch (const std::exception&) {
      // on the warm-up thread: never let it end the process (an order half updated is cleared)
    }
  };
  for (auto it = answers.begin(); it != readers_end; ++it) build(it->first, it->second, true);
  if (carry != nullptr) {
    carry->snap = snap;
    carry->rows = std::move(shared);
    carry->hold = std::move(shared_hold);
    if (!carry->rows) {  // groups, sums by build date and views are brought along with the rows only
      carry->DropGroups();
      carry->DropBuildDates();
      carry->DropViews();
    }
  }
  shared.reset();
  shared_hold.reset();
  for (auto it = readers_end; it != answers.end(); ++it) build(it->first, it->second, false);
}

std::array<std::vector<std::string>, kHangFieldsIndexedAhead.size()> FilterValuesInUse(
    std::span<const ApiView> views, const std::vector<int64_t>& windows_ms) {
  std::array<std::vector<std::string>, kHangFieldsIndexedAhead.size()> in_use;
  for (const ApiView& view : views) {
    const std::optional<Endpoint> endpoint = EndpointFromPath(view.path);
    const auto params = ParseQueryString(view.query);
    if (!endpoint || !params) continue;
    const auto q = ParseQuery(*endpoint, *params, windows_ms);
    if (!q) continue;
    for (size_t i = 0; i < in_use.size(); ++i) {
      const std::optional<std::string>& value = q->filters[kHangFieldsIndexedAhead[i].dim];
      if (value && std::ranges::find(in_use[i], *value) == in_use[i].end()) in_use[i].push_back(*value);
    }
  }
  return in_use;
}

bool IsSnapshotView(std::string_view path) {
  const std::optional<Endpoint> endpoint = EndpointFromPath(path);
  return endpoint && *endpoint != Endpoint::kStatus && *endpoint != Endpoint::kAlerts;
}

size_t WarmViews(const std::shared_ptr<const Snapshot>& snap, const ApiSettings& settings,
                 AnswerCache<ApiAnswer>& cache, AnswerBudget* budget, std::span<const ApiView> views,
                 size_t max_built, const std::function<bool()>& stop, WarmCarry* carry) {
  if (!snap) return 0;
  // As for the default answers: nothing built ahead when one answer would take over half the
  // budget, and none waited for (a refusal ends the pass: the requests come first).
  const uint64_t estimate = EstimateAnswerBytes(*snap, settings);
  if (budget != nullptr && estimate > budget->capacity() / 2) return 0;
  const std::vector<int64_t>& windows = snap->windows_ms.empty() ? settings.windows_ms : snap->windows_ms;
  // The round's hang rows, made from this snapshot (`carry` may be of another).
  const bool carried = carry != nullptr && carry->snap == snap && carry->rows;
  const HangRows* rows = carried ? &*carry->rows : nullptr;
  struct Parsed {
    Endpoint endpoint;
    Query query;
    std::string key;
  };
  std::vector<Parsed> parsed;
  for (const ApiView& view : views) {
    if (!IsSnapshotView(view.path)) continue;
    const std::optional<Endpoint> endpoint = EndpointFromPath(view.path);
    auto params = ParseQueryString(view.query);
    if (!params) continue;
    auto query = ParseQuery(*endpoint, *params, windows);
    if (!query) continue;
    std::string key = CacheKey(*endpoint, *query);
    parsed.push_back({*endpoint, std::move(*query), std::move(key)});
  }
  // What is kept for the views no longer in use is given back.
  if (carry != nullptr) {
    std::erase_if(carry->views, [&parsed](const WarmCarry::KeptView& v) {
      return std::none_of(parsed.begin(), parsed.end(), [&v](const Parsed& p) { return p.key == v.key; });
    });
  }
  // The kept groups of view `p` (made now from the rows when it has none), or none: not a
  // /hangs or flame graph view the rows serve, too many groups, or no room in the budget beside
  // a request that misses the cache.
  auto kept_for = [&](const Parsed& p) -> WarmCarry::KeptView* {
    const bool flame = p.endpoint == Endpoint::kHangsFlamegraph;
    if (!carried || (p.endpoint != Endpoint::kHangs && !flame)) return nullptr;
    const int64_t window = ResolveWindow(*snap, p.query.window_ms).window_ms;
    const std::string source = HangSource(*snap, p.query);
    if (!rows->Serves(window, HangFilters(p.query, source))) return nullptr;
    auto it = std::find_if(carry->views.begin(), carry->views.end(),
                           [&p](const WarmCarry::KeptView& v) { return v.key == p.key; });
    if (it == carry->views.end()) {
      WarmCarry::KeptView& v = carry->views.emplace_back();
      v.key = p.key;
      v.also = p.query.filters;
      v.also[Dim::kSource].reset();
      it = carry->views.end() - 1;
    }
    WarmCarry::KeptView& v = *it;
    const Filters filters = HangFilters(p.query, source);
    const Sym source_id = SourceId(*snap, source);
    if (v.groups && (flame ? v.groups->ServesStacks(window, filters, snap->symbols, source_id)
                           : v.groups->Serves(p.query.by, window, filters, snap->symbols, source_id))) {
      return &v;
    }
    v.groups.reset();  // none, or no longer this query's (another default source, other ids)
    v.hold.reset();
    RowFilter filter(*snap, Table::kHangs, v.also);
    const HangGroups::Selection selection{v.also,
                                          [&filter](const SeriesKey& k) { return filter.Matches(k); }};
    size_t picked = 0;
    for (const HangRow& r : rows->rows()) {
      picked += r.key[hang_field::kSource] == source_id && selection.keeps(r.key) ? 1 : 0;
    }
    // What they keep, with room to grow into; made (and the order updated) under the view's
    // answer's hold (ADR 0037).
    const uint64_t kept =
        HangGroups::KeptBytesFor(picked, flame) +
        (flame
             ? StackOrder::BytesFor(picked, snap->symbols != nullptr ? snap->symbols->stacks().IdBound() : 0)
             : 0);
    const uint64_t bytes = WithRoomToGrow(kept);
    v.stacks.Clear();
    if (budget != nullptr && !(v.hold = ReserveBesideARequest(*budget, bytes, estimate))) return nullptr;
    v.groups = flame
                   ? HangGroups::MakeByStack(window, snap->symbols, source_id, rows->rows(), &selection)
                   : HangGroups::Make(p.query.by, window, snap->symbols, source_id, rows->rows(), &selection);
    if (!v.groups) {
      v.hold.reset();
      return nullptr;
    }
    return &v;
  };
  size_t built = 0;
  for (const Parsed& p : parsed) {
    if (built == max_built || stop()) break;
    if (cache.Holds(snap, p.key)) continue;
    // A process no row holds any more: its 400 is a request's to give (AnswerApi), not built here.
    if (UnknownProcess(*snap, p.query)) continue;
    std::shared_ptr<const AnswerBudget::Hold> hold;
    if (budget != nullptr && !(hold = budget->TryReserve(estimate, std::chrono::milliseconds(0)))) break;
    try {
      WarmCarry::KeptView* kept = nullptr;
      try {
        kept = kept_for(p);
      } catch (const std::exception&) {  // out of memory making them: the answer sums the rows
        if (carry != nullptr) carry->DropViews();
      }
      FlameCarry flame;
      const HangGroups* groups = nullptr;
      if (kept != nullptr && p.endpoint == Endpoint::kHangsFlamegraph) {
        flame.order = &kept->stacks;
        flame.by_stack = &*kept->groups;
        flame.snap = snap;
      } else if (kept != nullptr) {
        groups = &*kept->groups;
      }
      cache.Get(snap, p.key, [&] {
        return Compute(p.endpoint, *snap, p.query, settings, rows, kept != nullptr ? &flame : nullptr,
                       groups);
      });
      if (kept != nullptr && (p.endpoint != Endpoint::kHangsFlamegraph || flame.by_stack_read)) {
        ++carry->views_from_kept;
      }
      ++built;
    } catch (const std::exception&) {
      // on the warm-up thread: never let it end the process
      if (carry != nullptr) carry->DropViews();  // an order half updated
    }
  }
  return built;
}

}  // namespace seismo
