// Bounded answers (issue 19, ADR 0025): a flame graph past its node or byte bound folds
// its smallest subtrees into "(other)" nodes with every total exact (hand-computed trees);
// hang lists stop adding rows and frames past the byte bound and say so; the memory of
// answers in flight is admitted by AnswerBudget (503 beyond it); the cache keys answers
// by the parsed query; the publisher's warm-up leaves the default answers in the cache.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "fake_provider.h"
#include "query_fixture.h"
#include "seismo/core/huge_pages.h"
#include "seismo/query/answer_budget.h"
#include "seismo/query/api.h"
#include "seismo/query/builds_json.h"
#include "seismo/query/crashes_json.h"
#include "seismo/query/flamegraph.h"
#include "seismo/query/hang_groups.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/hangs_json.h"
#include "seismo/query/id_sums.h"
#include "seismo/query/metrics.h"
#include "seismo/query/stack_order.h"
#include "test_scale.h"

namespace seismo {
namespace {

using namespace seismo::testing;

constexpr int64_t kNow = 1'000'000'000'000;

// a;b;c 50 ms, a;b;d 30 ms, a;e 15 ms, f 5 ms (one hang each): the full tree is
//   (root) 100 ─┬─ a 95 ─┬─ b 80 ─┬─ c 50
//               │        │        └─ d 30
//               │        └─ e 15
//               └─ f 5
std::shared_ptr<const Snapshot> FourStacks() {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"a", "b", "c"}, 50'000, 1, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"a", "b", "d"}, 30'000, 1, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"a", "e"}, 15'000, 1, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"f"}, 5'000, 1, 0);
  return w.Build();
}

AnswerLimits Nodes(size_t n) { return {.max_nodes = n, .max_bytes = 1u << 20}; }

TEST(BoundedFlamegraph, WithinTheBoundTheTreeIsWhole) {
  auto snap = FourStacks();
  const Query q = Q(Endpoint::kHangsFlamegraph, "");
  const std::string whole =
      R"J({"name":"(root)","hang_ms":100,"hang_count":4,"children":[)J"
      R"J({"name":"a","hang_ms":95,"hang_count":3,"children":[)J"
      R"J({"name":"b","hang_ms":80,"hang_count":2,"children":[)J"
      R"J({"name":"c","hang_ms":50,"hang_count":1,"children":[]},{"name":"d","hang_ms":30,"hang_count":1,"children":[]}]},)J"
      R"J({"name":"e","hang_ms":15,"hang_count":1,"children":[]}]},)J"
      R"J({"name":"f","hang_ms":5,"hang_count":1,"children":[]}]})J";
  EXPECT_EQ(FlamegraphTreeJson(*snap, q, Nodes(7)), whole);
  EXPECT_EQ(FlamegraphCollapsed(*snap, q, Nodes(7)), "a;b;c 50\na;b;d 30\na;e 15\nf 5\n");
}

TEST(BoundedFlamegraph, PastTheNodeBoundTheSmallestSubtreesFoldIntoOther) {
  auto snap = FourStacks();
  const Query q = Q(Endpoint::kHangsFlamegraph, "");
  // Six nodes: (root), a and b are the heaviest; c would be a fourth kept node needing
  // three "(other)" nodes (under b, a and the root): 7 > 6. So b's children (80 ms), a's
  // e (15 ms) and the root's f (5 ms) fold.
  EXPECT_EQ(
      FlamegraphTreeJson(*snap, q, Nodes(6)),
      R"J({"name":"(root)","hang_ms":100,"hang_count":4,"truncated":true,"children":[)J"
      R"J({"name":"a","hang_ms":95,"hang_count":3,"children":[)J"
      R"J({"name":"b","hang_ms":80,"hang_count":2,"children":[{"name":"(other)","hang_ms":80,"hang_count":2,"children":[]}]},)J"
      R"J({"name":"(other)","hang_ms":15,"hang_count":1,"children":[]}]},)J"
      R"J({"name":"(other)","hang_ms":5,"hang_count":1,"children":[]}]})J");
  // Five nodes: taking b would need a fifth kept-or-other node too many; a keeps one
  // "(other)" of 95 ms (b 80 + e 15).
  EXPECT_EQ(
      FlamegraphTreeJson(*snap, q, Nodes(5)),
      R"J({"name":"(root)","hang_ms":100,"hang_count":4,"truncated":true,"children":[)J"
      R"J({"name":"a","hang_ms":95,"hang_count":3,"children":[{"name":"(other)","hang_ms":95,"hang_count":3,"children":[]}]},)J"
      R"J({"name":"(other)","hang_ms":5,"hang_count":1,"children":[]}]})J");
  // Collapsed: one line per node where stacks end, a fold being one; the total is 100.
  EXPECT_EQ(FlamegraphCollapsed(*snap, q, Nodes(6)), "(other) 5\na;(other) 15\na;b;(other) 80\n");
  EXPECT_EQ(FlamegraphCollapsed(*snap, q, Nodes(5)), "(other) 5\na;(other) 95\n");
}

TEST(BoundedFlamegraph, PastTheByteBoundTheTreeFoldsAndCollapsedLinesSumIntoOne) {
  // A 40-frame trunk with 20 leaves of 1 ms each: 61 nodes of tree JSON (~7 KB), 20 lines
  // of collapsed text of ~200 bytes each (~4.5 KB).
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  std::vector<std::string> trunk;
  for (int i = 0; i < 40; ++i) trunk.push_back("trunk" + std::to_string(100 + i));
  for (int leaf = 0; leaf < 20; ++leaf) {
    std::vector<std::string> stack = trunk;
    stack.push_back("leaf" + std::to_string(10 + leaf));
    w.Hang("bhr", "Linux", "parent", "Gecko", stack, 1'000, 1, 0);
  }
  auto snap = w.Build();
  const Query q = Q(Endpoint::kHangsFlamegraph, "");
  const AnswerLimits limits{.max_nodes = 1000, .max_bytes = 3000};
  const std::string tree = FlamegraphTreeJson(*snap, q, limits);
  EXPECT_LE(tree.size(), limits.max_bytes);
  Json t(tree);
  EXPECT_TRUE(t.root["truncated"].get_bool().value());
  EXPECT_EQ(t.root["hang_ms"].get_double().value(), 20.0);
  EXPECT_EQ(t.root["hang_count"].get_int64().value(), 20);

  const std::string collapsed = FlamegraphCollapsed(*snap, q, {.max_nodes = 1000, .max_bytes = 3000 + 4600});
  EXPECT_LE(collapsed.size(), 3000u + 4600u);
  int64_t total = 0;
  size_t lines = 0;
  for (size_t at = 0; at < collapsed.size(); ++lines) {
    const size_t nl = collapsed.find('\n', at);
    const std::string line = collapsed.substr(at, nl - at);
    total += std::stoll(line.substr(line.rfind(' ') + 1));
    at = nl + 1;
  }
  EXPECT_EQ(total, 20) << collapsed;
  EXPECT_LT(lines, 21u) << "some lines were summed";
  EXPECT_EQ(collapsed.substr(collapsed.rfind("(truncated) ")),
            "(truncated) " + std::to_string(20 - (lines - 1)) + "\n");
}

TEST(BoundedHangs, RowsAndFramesPastTheByteBoundAreLeftOutAndCounted) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  std::vector<std::string> deep;
  for (int i = 0; i < 2000; ++i) deep.push_back("frame" + std::to_string(i));
  w.Hang("bhr", "Linux", "parent", "Gecko", deep, 9'000'000, 1, 0);  // the heaviest row
  for (int i = 0; i < 50; ++i) {
    w.Hang("bhr", "Linux", "parent", "Gecko", {"main", "sig" + std::to_string(100 + i)}, 1'000, 1, 0);
  }
  auto snap = w.Build();
  const AnswerLimits limits{.max_nodes = 1000, .max_bytes = 8192};
  const std::string body = HangsJson(*snap, Q(Endpoint::kHangs, "limit=1000"), limits);
  EXPECT_LE(body.size(), limits.max_bytes);
  Json j(body);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_GE(rows.size(), 1u);
  auto first = rows.at(0)["stacks"].at(0);
  const size_t frames = first["stack"].get_array().value().size();
  EXPECT_LT(frames, 2000u);
  EXPECT_EQ(first["frames_omitted"].get_uint64().value(), 2000u - frames);
  EXPECT_EQ(first["hang_ms"].get_double().value(), 9000.0) << "the numbers are whole";
  EXPECT_TRUE(j.root["truncated"].get_bool().value());
  EXPECT_EQ(j.root["rows_omitted"].get_uint64().value(), 51u - rows.size());
  // Unbounded enough, nothing is left out and nothing says so.
  const std::string whole =
      HangsJson(*snap, Q(Endpoint::kHangs, "limit=1000"), {.max_nodes = 1000, .max_bytes = 1u << 20});
  EXPECT_EQ(whole.find("truncated"), std::string::npos);
  EXPECT_EQ(whole.find("frames_omitted"), std::string::npos);
}

// A row's five stacks, each deep enough to fill the bound alone: every stack is shown, each
// with the frames that fit and the count of those left out, and the answer stays within the
// bound (the stacks' own bytes are reserved before their frames are written; fuzz_query found
// answers up to 612 bytes past it when they were not).
TEST(BoundedHangs, EachOfARowsStacksKeepsRoomWithinTheBound) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  for (int s = 0; s < 5; ++s) {
    std::vector<std::string> deep;
    for (int i = 0; i < 2000; ++i) deep.push_back("s" + std::to_string(s) + "frame" + std::to_string(i));
    w.Hang("bhr", "Linux", "parent", "Gecko", deep, 9'000'000 - s * 1000, 1, 0);
  }
  auto snap = w.Build();
  for (size_t max_bytes : {2048u, 4096u, 8192u, 8192u + 77u}) {
    SCOPED_TRACE(max_bytes);
    const std::string body =
        HangsJson(*snap, Q(Endpoint::kHangs, "by=thread"), {.max_nodes = 1000, .max_bytes = max_bytes});
    EXPECT_LE(body.size(), max_bytes);
    Json j(body);
    auto rows = j.root["rows"].get_array().value();
    ASSERT_EQ(rows.size(), 1u);
    auto stacks = rows.at(0)["stacks"].get_array().value();
    ASSERT_EQ(stacks.size(), 5u);
    for (auto st : stacks) {
      const size_t frames = st["stack"].get_array().value().size();
      EXPECT_EQ(st["frames_omitted"].get_uint64().value(), 2000u - frames);
    }
  }
}

// Lists whose rows are written whole (/builds, Top Crashers, a signature's by-build list):
// past max_answer_bytes the rows that do not fit are left out and counted, the answer stays
// within the bound, and the rows shown are the first of the whole list.
TEST(BoundedLists, RowsPastTheByteBoundAreLeftOutAndCounted) {
  World w;
  for (int i = 0; i < 60; ++i) {
    const std::string build_id = "202611" + std::to_string(10 + i % 20) + "0905" + std::to_string(10 + i);
    w.BuildUsage("Linux", kHour, 1, 0, 0, build_id);
    w.Crash("sig" + std::to_string(100 + i), "parent", "parent", "i" + std::to_string(i), 0, false, "Linux",
            build_id);
    w.Crash("OOM | small", "parent", "parent", "j" + std::to_string(i), 0, false, "Linux", build_id);
  }
  auto snap = w.Build();
  struct List {
    std::function<std::string(const AnswerLimits&)> answer;
    const char* array;
    const char* omitted;
    size_t rows;
  };
  const std::vector<List> lists = {
      {[&](const AnswerLimits& l) {
         return BuildsJson(*snap, Q(Endpoint::kBuilds, "limit=1000"), {}, nullptr, nullptr, l);
       },
       "builds", "builds_omitted", 60},
      {[&](const AnswerLimits& l) {
         return CrashesTopJson(*snap, Q(Endpoint::kCrashesTop, "limit=1000"), l);
       },
       "rows", "rows_omitted", 61},  // and "OOM | small"
      {[&](const AnswerLimits& l) {
         return CrashSignatureJson(
             *snap, Q(Endpoint::kCrashesSignature, "signature=OOM%20%7C%20small&limit=1000"), l);
       },
       "by_build", "by_build_omitted", 60},
  };
  for (const List& list : lists) {
    SCOPED_TRACE(list.array);
    const std::string whole = list.answer({.max_nodes = 1000, .max_bytes = 1u << 20});
    EXPECT_EQ(whole.find("truncated"), std::string::npos);
    Json all(whole);
    std::vector<std::string> all_rows;
    const auto all_array = all.root[list.array].get_array().value();  // kept: a loop over a temporary dangles
    for (auto row : all_array) all_rows.push_back(std::string(simdjson::minify(row)));
    ASSERT_EQ(all_rows.size(), list.rows);
    const AnswerLimits limits{.max_nodes = 1000, .max_bytes = 4096};
    const std::string body = list.answer(limits);
    EXPECT_LE(body.size(), limits.max_bytes);
    Json some(body);
    size_t shown = 0;
    const auto some_array = some.root[list.array].get_array().value();
    for (auto row : some_array) {
      ASSERT_LT(shown, all_rows.size());
      EXPECT_EQ(std::string(simdjson::minify(row)), all_rows[shown++]);
    }
    EXPECT_GT(shown, 0u);
    EXPECT_LT(shown, list.rows);
    EXPECT_TRUE(some.root["truncated"].get_bool().value());
    EXPECT_EQ(some.root[list.omitted].get_uint64().value(), list.rows - shown);
  }
}

TEST(AnswerBudget, AdmitsWhatFitsBesideWhatIsInFlight) {
  AnswerBudget budget(100);
  auto a = budget.TryReserve(60);
  ASSERT_TRUE(a);
  EXPECT_FALSE(budget.TryReserve(50)) << "60 + 50 > 100";
  auto b = budget.TryReserve(40);
  ASSERT_TRUE(b);
  EXPECT_EQ(budget.in_use(), 100u);
  a.reset();
  EXPECT_EQ(budget.in_use(), 40u);
  EXPECT_TRUE(budget.TryReserve(60));
  b.reset();
  // Larger than the whole budget: only alone.
  auto alone = budget.TryReserve(150);
  ASSERT_TRUE(alone);
  EXPECT_FALSE(budget.TryReserve(1));
  alone.reset();
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(budget.refused(), 2u);
  EXPECT_EQ(budget.peak(), 150u);
}

TEST(AnswerBudget, AReservationWaitsItsPatienceForAnswersInFlightToBeSent) {
  AnswerBudget budget(100);
  auto sending = budget.TryReserve(80);
  ASSERT_TRUE(sending);
  std::thread sent([&sending] { sending.reset(); });  // the answer in flight is sent meanwhile
  auto next = budget.TryReserve(50, test::Patience(std::chrono::milliseconds(60'000)));
  sent.join();
  EXPECT_TRUE(next);
  EXPECT_EQ(budget.refused(), 0u);
}

TEST(AnswerBudget, TheApiAnswers503WhileTheBudgetIsHeldAndKeysAnswersByTheParsedQuery) {
  FakeProvider provider;
  provider.SetSnapshot(FourStacks());
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  const uint64_t estimate = EstimateAnswerBytes(*provider.snapshot(), settings);
  AnswerBudget budget(estimate);
  ApiAnswer first = AnswerApi("/api/v1/hangs/flamegraph", "", provider, settings, kNow, &cache, &budget);
  ASSERT_EQ(first.status, 200);
  ASSERT_TRUE(first.hold);
  EXPECT_EQ(first.hold->bytes(), estimate) << "built: the estimate";
  // While the first answer is being sent, nothing else fits...
  ApiAnswer busy = AnswerApi("/api/v1/builds", "", provider, settings, kNow, &cache, &budget);
  EXPECT_EQ(busy.status, 503);
  EXPECT_NE(busy.body.find("\"error\":\"busy: "), std::string::npos) << busy.body;
  EXPECT_FALSE(busy.hold);
  first.hold.reset();
  // ... and once it is sent, a stored answer costs two copies of its body. `format=tree`
  // is the default: the same answer.
  ApiAnswer again =
      AnswerApi("/api/v1/hangs/flamegraph", "format=tree", provider, settings, kNow, &cache, &budget);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(cache.hits(), 1u);
  ASSERT_TRUE(again.hold);
  EXPECT_EQ(again.hold->bytes(), 2 * first.body.size());
  again.hold.reset();
  EXPECT_EQ(budget.in_use(), 0u);
}

TEST(AnswerBudget, MetricsSayWhatIsHeldAndWhatWasRefused) {
  HttpStats http;
  http.answer_memory_bytes = 4096;
  http.answers_refused = 3;
  const std::string text = MetricsText(nullptr, RecordCounts{}, ServiceStatus{}, "[]", http, 0);
  EXPECT_NE(text.find("\nseismo_http_answer_memory_bytes 4096\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nseismo_http_answers_refused_total 3\n"), std::string::npos) << text;
}

TEST(WarmAnswers, TheDefaultAnswersAreInTheCacheBeforeTheFirstRequest) {
  FakeProvider provider;
  provider.SetSnapshot(FourStacks());
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  WarmDefaultAnswers(provider.snapshot(), settings, cache, nullptr);
  const uint64_t hits = cache.hits();
  for (const auto& [path, qs] :
       std::vector<std::pair<std::string, std::string>>{{"/api/v1/builds", "limit=200"},
                                                        {"/api/v1/builds", ""},
                                                        {"/api/v1/hangs", "by=build_date&limit=25"},
                                                        {"/api/v1/hangs", "limit=50&by=signature"},
                                                        {"/api/v1/hangs", "by=thread"},
                                                        {"/api/v1/hangs/timeseries", ""},
                                                        {"/api/v1/hangs/flamegraph", "format=tree"},
                                                        {"/api/v1/crashes/top", "limit=50"},
                                                        {"/api/v1/crashes/timeseries", ""}}) {
    const ApiAnswer warm = AnswerApi(path, qs, provider, settings, kNow, &cache);
    EXPECT_EQ(warm.body, AnswerApi(path, qs, provider, settings, kNow).body) << path << "?" << qs;
  }
  EXPECT_EQ(cache.hits(), hits + 9) << "every one was served from the cache";
}

// The Releases view of every channel in the data is built ahead too, as the dashboard
// opens it (a channel, no build).
TEST(WarmAnswers, TheReleasesViewOfEveryChannelIsBuiltAhead) {
  World w;
  w.BuildUsage("Linux", kHour, 3, 0, 0);
  w.Crash("Sig", "parent", "parent", "i1", 0);
  FakeProvider provider;
  provider.SetSnapshot(w.Build());
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  WarmDefaultAnswers(provider.snapshot(), settings, cache, nullptr);
  const uint64_t hits = cache.hits();
  const ApiAnswer a = AnswerApi("/api/v1/releases", "channel=release", provider, settings, kNow, &cache);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(cache.hits(), hits + 1);
  EXPECT_EQ(a.body, AnswerApi("/api/v1/releases", "channel=release", provider, settings, kNow).body);
  AnswerApi("/api/v1/releases", "channel=beta", provider, settings, kNow, &cache);
  EXPECT_EQ(cache.hits(), hits + 1) << "no such channel: nothing built ahead for it";
}

// The memory a warm-up round holds (ADR 0025): one answer at a time, and the hang rows its
// answers share (hang_rows.h) only while a request that misses the cache still fits beside both.
class WarmAnswersBudget : public ::testing::Test {
 protected:
  WarmAnswersBudget() {
    provider.SetSnapshot(FourStacks());
    estimate = EstimateAnswerBytes(*provider.snapshot(), settings);
    rows = HangRows::BytesFor(provider.snapshot()->table(Table::kHangs).size());
  }
  FakeProvider provider;
  ApiSettings settings;
  uint64_t estimate = 0;  // one answer's
  uint64_t rows = 0;      // the hang rows the round's answers share
};

// A state whose answers would take over half the budget is not built ahead: the publisher
// would hold most of the budget after every publish, and requests (cache hits too) would
// be refused while it does. Requests still get their answers.
TEST_F(WarmAnswersBudget, NothingIsBuiltAheadWhenOneAnswerTakesOverHalfTheBudget) {
  AnswerCache<ApiAnswer> cache;
  AnswerBudget small(2 * estimate - 1);
  WarmDefaultAnswers(provider.snapshot(), settings, cache, &small);
  EXPECT_EQ(small.peak(), 0u) << "the warm-up reserved nothing";
  const uint64_t hits = cache.hits();
  const ApiAnswer a = AnswerApi("/api/v1/builds", "", provider, settings, kNow, &cache, &small);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(cache.hits(), hits) << "computed by the request, not built ahead";
}

// The rows are made when a request's estimate fits beside them and the round's answer, and
// are given back with the rest.
TEST_F(WarmAnswersBudget, TheSharedRowsAreMadeOnlyWhereARequestStillFitsBeside) {
  AnswerBudget half(2 * estimate + rows - 1);
  AnswerCache<ApiAnswer> cache;
  WarmDefaultAnswers(provider.snapshot(), settings, cache, &half);
  EXPECT_EQ(half.peak(), estimate) << "one answer at a time, no rows: a request would not fit beside them";

  AnswerBudget roomy(2 * estimate + rows);
  AnswerCache<ApiAnswer> warmed;
  WarmDefaultAnswers(provider.snapshot(), settings, warmed, &roomy);
  EXPECT_EQ(roomy.peak(), estimate + rows) << "one answer and the shared rows at a time";
  EXPECT_EQ(roomy.in_use(), 0u) << "all given back";
}

// What the warm-up keeps between rounds is held at its kept bytes; the scratch of making or
// updating it is covered by the hold of the answer it is made for (ADR 0037): each step's
// scratch, with what lives beside it then, fits in one answer's estimate, at any size of table.
TEST(WarmAnswersScratch, EachStepsScratchFitsInTheHoldOfTheAnswerItIsMadeFor) {
  const ApiSettings settings;
  for (const size_t n :
       {size_t{0}, size_t{1}, size_t{1000}, size_t{100'000}, size_t{1'000'000}, size_t{30'000'000}}) {
    const uint64_t answer = AnswerBytesFor(n, settings);
    const uint64_t delta = sizeof(HangRow) * HangRows::ChangeBound(n);  // RowDelta's rows, made at their size
    EXPECT_LE(HangRows::ScratchBytesFor(n), answer) << n << " series: the rows made or updated";
    EXPECT_LE(HangGroups::ScratchBytesFor(n) + delta, answer) << n << ": groups, beside the rows' delta";
    // The sums by stack a flame graph gathers from the rows (IdSums, reserved at the rows' size).
    EXPECT_LE(StackOrder::ScratchBytesFor(n) + HugePageBlockBytes(sizeof(IdSums::Entry) * n), answer)
        << n << ": a stack order, beside the sums by stack it orders";
  }
}

// Without room in the budget for the hang rows a round's answers share (requests hold the
// rest), the answers are built all the same, each walking the hang table.
TEST_F(WarmAnswersBudget, WithoutRoomForTheSharedRowsEachAnswerWalksTheTable) {
  AnswerBudget budget(2 * estimate + rows);
  const auto requests = budget.TryReserve(estimate + 1);  // the rows do not fit beside an answer
  ASSERT_TRUE(requests);
  AnswerCache<ApiAnswer> cache;
  WarmDefaultAnswers(provider.snapshot(), settings, cache, &budget);
  EXPECT_EQ(budget.peak(), 2 * estimate + 1) << "the requests' and one answer's, no rows";
  const uint64_t hits = cache.hits();
  for (const auto& [path, qs] : std::vector<std::pair<std::string, std::string>>{
           {"/api/v1/builds", ""}, {"/api/v1/hangs", "by=thread"}, {"/api/v1/hangs/flamegraph", ""}}) {
    EXPECT_EQ(AnswerApi(path, qs, provider, settings, kNow, &cache).body,
              AnswerApi(path, qs, provider, settings, kNow).body)
        << path << "?" << qs;
  }
  EXPECT_EQ(cache.hits(), hits + 3) << "built ahead";
}

TEST(AnswerCacheOrder, AnAnswerOfAnOlderSnapshotDoesNotEvictTheNewerOnes) {
  AnswerCache<ApiAnswer> cache;
  std::vector<std::shared_ptr<Snapshot>> newer;
  for (int i = 0; i < 4; ++i) {
    newer.push_back(std::make_shared<Snapshot>());
    newer.back()->built_at_ms = 1500 + 100 * i;
  }
  auto older = std::make_shared<Snapshot>();
  older->built_at_ms = 1000;
  int computed = 0;
  auto compute = [&] { return ApiAnswer{200, "application/json", std::to_string(++computed)}; };
  for (const auto& s : newer) cache.Get(s, "k", compute);
  EXPECT_EQ(cache.Get(older, "k", compute)->body, "5") << "answered";
  EXPECT_EQ(cache.Find(older, "k"), nullptr) << "not stored";
  for (size_t i = 0; i < newer.size(); ++i) {
    ASSERT_NE(cache.Find(newer[i], "k"), nullptr) << i;
    EXPECT_EQ(cache.Find(newer[i], "k")->body, std::to_string(i + 1))
        << "the newer answers are all still there";
  }
}

// The snapshot default answers are served from, the one being warmed and the one the views
// in use are served from keep their answers however many newer snapshots requests read
// meanwhile (ADR 0025, 0035), and the one being warmed stores its answers though it is older
// than those.
TEST(AnswerCacheOrder, TheServedAndTheWarmingSnapshotsKeepTheirAnswers) {
  AnswerCache<ApiAnswer> cache;
  auto make = [](int64_t at) {
    auto s = std::make_shared<Snapshot>();
    s->built_at_ms = at;
    return s;
  };
  auto views = make(900), serving = make(1000), warming = make(1100);
  auto compute = [] { return ApiAnswer{200, "application/json", "x"}; };
  cache.Protect(serving, warming, views);
  cache.Get(views, "filtered", compute);
  cache.Get(serving, "default", compute);
  std::vector<std::shared_ptr<Snapshot>> newer;
  for (int i = 0; i < 5; ++i) {
    newer.push_back(make(1200 + 100 * i));
    cache.Get(newer.back(), "filtered", compute);
  }
  cache.Get(warming, "default", compute);
  EXPECT_NE(cache.Find(serving, "default"), nullptr);
  EXPECT_NE(cache.Find(warming, "default"), nullptr) << "stored, though older than the newest";
  EXPECT_NE(cache.Find(views, "filtered"), nullptr) << "the oldest, but the views' snapshot";
  EXPECT_NE(cache.Find(newer.back(), "filtered"), nullptr) << "the newest keeps the fourth place";
  EXPECT_EQ(cache.Find(newer[3], "filtered"), nullptr) << "replaced by the newest";
  // The warm-up ends: the old serving snapshot is no longer protected and goes first.
  cache.Protect(warming, nullptr, views);
  auto next = make(2000);
  cache.Get(next, "filtered", compute);
  EXPECT_EQ(cache.Find(serving, "default"), nullptr);
  EXPECT_NE(cache.Find(warming, "default"), nullptr);
  EXPECT_NE(cache.Find(next, "filtered"), nullptr);
}

// While the newest snapshot's default answers are being built, a request for one is served
// from the newest warmed snapshot (a cache hit, never built on request); every other
// request reads the newest snapshot.
TEST(WarmAnswers, DefaultAnswersComeFromTheWarmedSnapshotUntilTheNewestIsWarmed) {
  auto warmed = std::const_pointer_cast<Snapshot>(FourStacks());
  warmed->built_at_ms = 1000;
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"a", "b", "c"}, 70'000, 1, 0);
  auto newest = std::const_pointer_cast<Snapshot>(w.Build());
  newest->built_at_ms = 1500;
  FakeProvider provider;
  provider.SetSnapshot(newest);
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  WarmDefaultAnswers(warmed, settings, cache, nullptr);
  FakeProvider old_provider;
  old_provider.SetSnapshot(warmed);

  uint64_t hits = cache.hits();
  const ApiAnswer served = AnswerApi("/api/v1/hangs", "", provider, settings, kNow, &cache, nullptr, warmed);
  EXPECT_EQ(cache.hits(), hits + 1) << "served from the cache";
  EXPECT_EQ(served.body, AnswerApi("/api/v1/hangs", "", old_provider, settings, kNow).body);
  EXPECT_NE(served.body, AnswerApi("/api/v1/hangs", "", provider, settings, kNow).body);

  hits = cache.hits();
  const ApiAnswer filtered =
      AnswerApi("/api/v1/hangs", "signature=c", provider, settings, kNow, &cache, nullptr, warmed);
  EXPECT_EQ(cache.hits(), hits) << "built on request";
  EXPECT_EQ(filtered.body, AnswerApi("/api/v1/hangs", "signature=c", provider, settings, kNow).body);
  EXPECT_NE(filtered.body.find("\"hang_ms\":70"), std::string::npos) << filtered.body;

  // Once the newest is warmed, its own answer is served.
  WarmDefaultAnswers(newest, settings, cache, nullptr);
  EXPECT_EQ(AnswerApi("/api/v1/hangs", "", provider, settings, kNow, &cache, nullptr, warmed).body,
            AnswerApi("/api/v1/hangs", "", provider, settings, kNow).body);
}

// The warm-up fills the cache while workers answer and snapshots are replaced: every
// answer is a snapshot's answer, each reservation is given back (run under TSan too).
TEST(WarmAnswers, WarmingWhileWorkersAnswerAndSnapshotsChange) {
  FakeProvider provider;
  std::vector<std::shared_ptr<const Snapshot>> snaps;
  for (int i = 0; i < 3; ++i) {
    auto s = std::const_pointer_cast<Snapshot>(FourStacks());
    s->built_at_ms = 1000 * (i + 1);
    snaps.push_back(s);
  }
  const std::string expected =
      FlamegraphTreeJson(*snaps[0], Q(Endpoint::kHangsFlamegraph, ""), ApiSettings{}.limits);
  provider.SetSnapshot(snaps[0]);
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(4 * EstimateAnswerBytes(*snaps[0], settings));
  std::atomic<bool> done{false};
  std::atomic<int> answered{0}, refused{0}, wrong{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&] {
      while (!done.load()) {
        const ApiAnswer a =
            AnswerApi("/api/v1/hangs/flamegraph", "", provider, settings, kNow, &cache, &budget);
        if (a.status == 503) {
          ++refused;
        } else if (a.status == 200 && a.body == expected) {
          ++answered;
        } else {
          ++wrong;
        }
      }
    });
  }
  // At least 30 rounds, and on until the workers have answered beside them (bounded).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int round = 0; round < 30 || (answered.load() < 20 && std::chrono::steady_clock::now() < deadline);
       ++round) {
    const auto& snap = snaps[static_cast<size_t>(round) % snaps.size()];
    provider.SetSnapshot(snap);  // as the daemon does: published, then warmed
    WarmDefaultAnswers(snap, settings, cache, &budget);
  }
  done = true;
  for (auto& w : workers) w.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(answered.load(), 0);
  EXPECT_EQ(budget.in_use(), 0u);
}

}  // namespace
}  // namespace seismo
