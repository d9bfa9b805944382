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
// `cache` (optional): answers that depend only on the snapshot, the endpoint and the
// parsed query are kept per snapshot (query/answer_cache.h), under a key made from the
// parsed query (`?limit=50` and `` are one answer); /status and /alerts never are.
// `budget` (optional): the memory of answers in flight (query/answer_budget.h). A stored
// answer reserves two copies of its body, one to be built what EstimateAnswerBytes says;
// a request that does not fit within 200 ms is answered 503 {"error": "busy: ..."}. The answer
// carries its reservation (`hold`) until the caller has sent it and drops it.
// Answers are bounded by settings.limits (query/answer_bound.h).
// `warmed` (optional): the newest snapshot whose default answers are built (WarmDefaultAnswers,
// on the warm-up thread); `views_warmed` (optional): the newest snapshot the views in use were
// built over (WarmViews, ADR 0035), which may be a round older while they are built over
// `warmed`. An answer not stored for the newest snapshot is served from the newest kept
// snapshot that stores it and is no older than the older of the two (AnswerCache::FindNewest):
// a default answer is never built on request while the newest snapshot's are being built.
// An answer stored for none of them is built over the newest snapshot (ADR 0025). A `process`
// filter outside the built-in names is checked (a walk of the hang and crash tables at worst)
// on such a miss only, over the newest snapshot, before the budget; its 400 is stored for that
// snapshot and never served for a newer one.
//
// Threading: callable from any thread; reads the provider once per call
// (one snapshot for the whole answer).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/query/answer_budget.h"
#include "seismo/query/answer_cache.h"
#include "seismo/query/bucket_sums.h"
#include "seismo/query/build_date_sums.h"
#include "seismo/query/hang_groups.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/provider.h"
#include "seismo/query/selection.h"
#include "seismo/query/stack_order.h"
#include "seismo/query/status_json.h"

namespace seismo {

struct ApiAnswer {
  ApiAnswer() = default;
  ApiAnswer(int code, std::string type, std::string text)
      : status(code), content_type(std::move(type)), body(std::move(text)) {}

  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::shared_ptr<const AnswerBudget::Hold> hold;  // the answer's memory reservation, if any
};

ApiAnswer AnswerApi(std::string_view path, std::string_view raw_query, const StateProvider& provider,
                    const ApiSettings& settings, int64_t now_ms, AnswerCache<ApiAnswer>* cache = nullptr,
                    AnswerBudget* budget = nullptr, const std::shared_ptr<const Snapshot>& warmed = nullptr,
                    const std::shared_ptr<const Snapshot>& views_warmed = nullptr);

// What building one answer over `snap` may take at most: working memory per series of
// the snapshot, the flame graph's nodes, and the body as it grows, stored and sent
// (four times settings.limits.max_bytes). AnswerBytesFor: the same for a snapshot of `series`
// series in all. The warm-up makes what it keeps between rounds (the hang rows, their groups,
// a stack order) under the hold of the answer they are made for: their scratch while they are
// made or updated is within one answer's working memory (ADR 0037).
uint64_t EstimateAnswerBytes(const Snapshot& snap, const ApiSettings& settings);
uint64_t AnswerBytesFor(uint64_t series, const ApiSettings& settings);

// Builds the answers the dashboard asks for first (its default views, and every
// endpoint without parameters) for `snap` into `cache`. The HTTP server's warm-up thread
// (http/answer_warmer.h) calls it for each published snapshot; until it returns, requests
// for these answers are served from the previous snapshot that has them (AnswerApi's
// `warmed`), so none is built on request (ADR 0025). One answer is
// built at a time, each within `budget` (one that does not fit is left to its first
// request), beside the hang rows the round's hang answers share (query/hang_rows.h, also
// within `budget`, and only while a request that misses the cache still fits beside both;
// else each answer walks the table; made under the first answer's hold, which covers the
// scratch of their making). When one answer's
// estimate is over half the budget nothing is built ahead: the warm-up would otherwise
// hold most of the budget after every publish and leave the requests (cache hits among
// them) refused; a state that large wants a larger [http] answer_memory. An answer that
// fails to build (out of memory) is left to its first request, whose error is its own.
//
// `carry` (optional): what the previous round left (the warm-up thread keeps one). From what
// changed in the hang table since that round's snapshot (aggregate/row_changes.h, ADR 0034), the
// round makes its snapshot's hang text indexes from that snapshot's (Snapshot::IndexTextsFrom: the
// signature's, and a thread's or a process's while a view in use filters on one of their values not
// known to hold half the hang table, `filter_values_in_use`) and updates the previous round's hang
// rows (HangRows::Update) instead of making either anew, and leaves its own for the next. Its flame
// graph brings the previous round's stack order up to date (query/stack_order.h) instead of sorting
// its stacks. Its /hangs answers read their groups (by signature, by thread, by build date), and
// its flame graph its sums by stack, kept from round to round and brought up to date with what the
// rows' update changed (query/hang_groups.h), instead of summing every row into them. Its time
// series reads the hang table's sums by bucket, brought up to date from the same change set
// (query/bucket_sums.h), instead of walking every series. Its /builds answers read the hang sums by
// build date, brought up to date with what the rows' update changed (query/build_date_sums.h),
// instead of summing every row. The rows, the order, the groups, the sums by bucket and by build
// date and their reservations are held between rounds (with room for the table to grow into; what
// each holds, not the scratch of its making: ADR 0037), and
// the carried snapshot with them (the order keeps the snapshot of its last update, an older one
// when a request built the flame graph first).
struct WarmCarry {
  // Which of kHangFieldsIndexedAhead's indexes (selection.h) the round makes: that of a
  // dimension a view in use filters on (its values here, FilterValuesInUse, set by the warm-up
  // before each round), unless each of those values is `unselective`. Each index costs 16 B a
  // series in each snapshot alive, a merge with the previous round's (not measurable beside a
  // round), and a read and sort of every row where it cannot be carried (ADR 0036).
  std::array<std::vector<std::string>, kHangFieldsIndexedAhead.size()> filter_values_in_use;
  // Of those values, the ones the last index made of their dimension showed to hold at least
  // half the hang table's rows (measured at a table of `unselective_at` rows): a view of them
  // reads nearly every row anyway, so they alone do not have the index made. Measured again
  // each round that makes the index; a value no view names is dropped (measured again once
  // named again), and all of a dimension's once the table has doubled or halved.
  std::array<std::vector<std::string>, kHangFieldsIndexedAhead.size()> unselective;
  std::array<size_t, kHangFieldsIndexedAhead.size()> unselective_at{};
  std::shared_ptr<const Snapshot> snap;  // the snapshot of the rows and the sums by bucket
  std::optional<HangRows> rows;          // of the default window, every source
  std::shared_ptr<const AnswerBudget::Hold> hold;
  // The default flame graph's stacks in frame order, and the budget's hold for them.
  StackOrder stacks;
  std::shared_ptr<const AnswerBudget::Hold> stacks_hold;
  // The default /hangs answers' groups, by HangsBy (signature, thread, build date), then the
  // default flame graph's sums by stack (HangGroups::MakeByStack), and the budget's hold for them.
  std::array<std::optional<HangGroups>, 4> groups;
  std::shared_ptr<const AnswerBudget::Hold> groups_hold;
  // The default /hangs/timeseries answer's sums by bucket (of `snap`), and the budget's hold.
  std::optional<BucketSums> buckets;
  std::shared_ptr<const AnswerBudget::Hold> buckets_hold;
  // The default /builds answers' hang sums by build date (of the rows), and the budget's hold.
  std::optional<BuildDateSums> build_dates;
  std::shared_ptr<const AnswerBudget::Hold> build_dates_hold;
  uint64_t rows_updated = 0;    // rounds whose rows were updated from the carried ones
  uint64_t groups_updated = 0;  // rounds whose groups, all four, were brought from the carried ones
  uint64_t index_carried = 0;   // rounds whose signature index was made from the carried one's
  uint64_t builds_carried = 0;  // rounds whose build index was made from the carried one's
  uint64_t stacks_carried = 0;  // rounds whose flame graph's stack order was brought from the carried one
  uint64_t buckets_carried = 0;  // rounds whose sums by bucket were brought from the carried ones
  uint64_t build_dates_updated = 0;  // rounds whose /builds sums by build date were brought along
  uint64_t flame_sums_read = 0;      // rounds whose flame graph read the kept sums by stack
  // The views in use kept from round to round (ADR 0035): a filtered /hangs answer's groups, a
  // filtered flame graph's sums by stack and its stack order, each view's own; made from the
  // rows by the views' pass (WarmViews), brought up to date by each round with what the rows'
  // update changed (the rows that pass the view's filters); each with the budget's hold for it.
  struct KeptView {
    std::string key;  // the view's cache key
    Filters also;     // its filters but the source (HangGroups::Selection)
    std::optional<HangGroups> groups;
    StackOrder stacks;  // a flame graph's
    std::shared_ptr<const AnswerBudget::Hold> hold;
  };
  std::vector<KeptView> views;
  uint64_t views_brought = 0;    // kept views a round brought up to date
  uint64_t views_from_kept = 0;  // answers of views in use built from what was kept for them

  void DropRows() {  // and give their memory back to the budget
    rows.reset();
    hold.reset();
  }
  void DropStacks() {
    stacks.Clear();
    stacks_hold.reset();
  }
  void DropBuckets() {
    buckets.reset();
    buckets_hold.reset();
  }
  void DropViews() { views.clear(); }
  // Everything kept and held, but the counters.
  void DropAll() {
    DropRows();
    DropStacks();
    DropGroups();
    DropBuckets();
    DropBuildDates();
    DropViews();
    snap.reset();
    for (auto& u : unselective) u.clear();  // measured again
  }
  void DropBuildDates() {
    build_dates.reset();
    build_dates_hold.reset();
  }
  void DropGroups() {
    for (std::optional<HangGroups>& g : groups) g.reset();
    groups_hold.reset();
  }
};
void WarmDefaultAnswers(const std::shared_ptr<const Snapshot>& snap, const ApiSettings& settings,
                        AnswerCache<ApiAnswer>& cache, AnswerBudget* budget, WarmCarry* carry = nullptr);

// Whether `path` is an endpoint whose answers are a function of the snapshot (every one but
// /status and /alerts, which read counters and the alert engine): what may be cached and built
// ahead.
bool IsSnapshotView(std::string_view path);
// A view a client asked for: an API path and its raw query string.
struct ApiView {
  std::string path;
  std::string query;
};
// The values a filter of `views` names for each of kHangFieldsIndexedAhead's dimensions (a
// thread, a process), each once, as ParseQuery reads them (`process=any` is no filter):
// WarmCarry::filter_values_in_use. A view whose query does not parse names none.
std::array<std::vector<std::string>, kHangFieldsIndexedAhead.size()> FilterValuesInUse(
    std::span<const ApiView> views, const std::vector<int64_t>& windows_ms);
// Builds the answers of `views` over `snap` into `cache` (views in use: what clients asked for
// lately, ADR 0035), each within the budget as a request is, in order, until `max_built` are
// built or `stop()` says to stop. A view whose answer the cache holds (a default answer), that
// is not a function of the snapshot (/status, /alerts) or that does not parse, is skipped.
// `carry` (optional): what the round over `snap` left (WarmDefaultAnswers). Its hang rows
// are read by the answers they serve (HangRows::Serves: the rows of the default window, every
// filter applied to them) instead of a walk of the table that sums each series' window; and a
// /hangs or flame graph view they serve keeps its groups (and a flame graph its stack order)
// from round to round (WarmCarry::views, within the budget): built from them, it costs what
// changed, not its rows. What it kept for views no longer in `views` is given back. Returns
// how many it built.
size_t WarmViews(const std::shared_ptr<const Snapshot>& snap, const ApiSettings& settings,
                 AnswerCache<ApiAnswer>& cache, AnswerBudget* budget, std::span<const ApiView> views,
                 size_t max_built, const std::function<bool()>& stop, WarmCarry* carry = nullptr);

// {"error": message}
std::string ErrorJson(std::string_view message);

}  // namespace seismo
