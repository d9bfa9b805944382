// API answers kept per snapshot: the same snapshot and URL give the stored answer, a new
// snapshot is answered afresh, /status and /alerts are never stored, and the byte bound
// holds (answers beyond it are computed, correct and not kept).
#include "seismo/query/answer_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "fake_provider.h"
#include "query_fixture.h"
#include "seismo/query/answer_budget.h"
#include "seismo/query/api.h"

namespace seismo {
namespace {

using namespace seismo::testing;

constexpr int64_t kNow = 1'000'000'000'000;

std::shared_ptr<const Snapshot> WithCrashes(int n) {
  World w;
  w.BuildUsage("Linux", kHour, 1, 0, 0);
  for (int i = 0; i < n; ++i) w.Crash("Sig", "parent", "parent", "i" + std::to_string(i), 0);
  return w.Build();
}

TEST(AnswerCache, SameSnapshotAndUrlAreComputedOnce) {
  AnswerCache<ApiAnswer> cache;
  auto snap = WithCrashes(1);
  int computed = 0;
  auto compute = [&] {
    ++computed;
    return ApiAnswer{200, "application/json", "body " + std::to_string(computed)};
  };
  EXPECT_EQ(cache.Get(snap, "/a?x", compute)->body, "body 1");
  EXPECT_EQ(cache.Get(snap, "/a?x", compute)->body, "body 1");
  EXPECT_EQ(cache.Get(snap, "/a?y", compute)->body, "body 2") << "another query is another answer";
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_TRUE(cache.Holds(snap, "/a?y"));
  EXPECT_FALSE(cache.Holds(snap, "/a?z"));
  EXPECT_EQ(cache.hits(), 1u) << "Holds serves nothing: not a hit";
  EXPECT_EQ(cache.FindNewest("/a?x", 0)->body, "body 1");
  EXPECT_EQ(cache.FindNewest("/a?x", 1), nullptr) << "none of a snapshot built at 1 or later";
  EXPECT_EQ(cache.hits(), 2u);
  auto next = std::const_pointer_cast<Snapshot>(WithCrashes(1));
  next->built_at_ms = 1;
  EXPECT_EQ(cache.Get(next, "/a?x", compute)->body, "body 3") << "a new snapshot is answered afresh";
  EXPECT_EQ(cache.Get(snap, "/a?x", compute)->body, "body 1")
      << "the previous snapshot's answers are kept while the next one's are built";
  auto third = std::const_pointer_cast<Snapshot>(WithCrashes(1));
  third->built_at_ms = 2;
  EXPECT_EQ(cache.Get(third, "/a?x", compute)->body, "body 4");
  EXPECT_EQ(cache.FindNewest("/a?x", 0)->body, "body 4") << "the newest snapshot's";
  EXPECT_EQ(cache.FindNewest("/a?y", 0)->body, "body 2") << "the newest that holds it";
  auto fourth = std::const_pointer_cast<Snapshot>(WithCrashes(1));
  fourth->built_at_ms = 3;
  EXPECT_EQ(cache.Get(fourth, "/a?x", compute)->body, "body 5");
  auto fifth = std::const_pointer_cast<Snapshot>(WithCrashes(1));
  fifth->built_at_ms = 4;
  EXPECT_EQ(cache.Get(fifth, "/a?x", compute)->body, "body 6");
  EXPECT_EQ(cache.Get(next, "/a?x", compute)->body, "body 3")
      << "the four newest snapshots' answers are kept";
  EXPECT_EQ(cache.Get(third, "/a?x", compute)->body, "body 4");
  EXPECT_EQ(cache.Get(fourth, "/a?x", compute)->body, "body 5");
  EXPECT_EQ(cache.Get(snap, "/a?x", compute)->body, "body 7") << "the oldest one's were dropped";
  EXPECT_EQ(cache.Get(fifth, "/a?x", compute)->body, "body 6")
      << "and an answer older than the four is not stored";
  EXPECT_EQ(computed, 7);
}

TEST(AnswerCache, AThreadAskingForAnAnswerBeingComputedWaitsForIt) {
  AnswerCache<ApiAnswer> cache;
  auto snap = WithCrashes(1);
  std::promise<void> started, finish;
  std::atomic<int> computed{0};
  std::thread warm([&] {
    cache.Get(snap, "/a", [&] {
      ++computed;
      started.set_value();
      finish.get_future().wait();
      return ApiAnswer{200, "application/json", "warm"};
    });
  });
  started.get_future().wait();
  std::thread request([&] {
    EXPECT_EQ(cache
                  .Get(snap, "/a",
                       [&] {
                         ++computed;
                         return ApiAnswer{200, "application/json", "again"};
                       })
                  ->body,
              "warm");
  });
  // The request waits on the warm-up (or has not asked yet); either way it never computes.
  finish.set_value();
  request.join();
  warm.join();
  EXPECT_EQ(computed.load(), 1);
}

TEST(AnswerCache, AnswersBeyondTheByteBoundAreComputedAndNotKept) {
  AnswerCache<ApiAnswer> cache(/*max_bytes=*/100);
  auto snap = WithCrashes(1);
  int computed = 0;
  auto big = [&] {
    ++computed;
    return ApiAnswer{200, "application/json", std::string(200, 'x')};
  };
  EXPECT_EQ(cache.Get(snap, "/big", big)->body.size(), 200u);
  EXPECT_EQ(cache.Get(snap, "/big", big)->body.size(), 200u);
  EXPECT_EQ(computed, 2);
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(AnswerCache, ApiAnswersFollowTheSnapshotAndNeverStoreStatusOrAlerts) {
  FakeProvider provider;
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  auto get = [&](std::string_view path, std::string_view qs, int64_t now = kNow) {
    return AnswerApi(path, qs, provider, settings, now, &cache);
  };
  provider.SetSnapshot(WithCrashes(2));
  const std::string two = get("/api/v1/crashes/top", "window=1h").body;
  EXPECT_NE(two.find(R"("total":2)"), std::string::npos) << two;
  EXPECT_EQ(get("/api/v1/crashes/top", "window=1h").body, two);
  EXPECT_EQ(cache.hits(), 1u);
  // Same answers as without a cache.
  EXPECT_EQ(AnswerApi("/api/v1/crashes/top", "window=1h", provider, settings, kNow).body, two);
  // Bad parameters are answered before the cache is asked.
  EXPECT_EQ(get("/api/v1/crashes/top", "limit=0").status, 400);

  provider.SetSnapshot(WithCrashes(3));
  EXPECT_NE(get("/api/v1/crashes/top", "window=1h").body.find(R"("total":3)"), std::string::npos);

  // /status carries the wall clock and counters, /alerts the engine's state: asked twice
  // with one snapshot, they answer what is true at each call.
  ServiceStatus status;
  status.started_at_ms = kNow - 5'000;
  provider.SetStatus(status);
  EXPECT_NE(get("/api/v1/status", "", kNow).body, get("/api/v1/status", "", kNow + 60'000).body);
  provider.SetAlerts(R"([{"rule":"r","state":"pending"}])");
  EXPECT_EQ(get("/api/v1/alerts", "").body, R"({"alerts":[{"rule":"r","state":"pending"}]})");
  provider.SetAlerts(R"([{"rule":"r","state":"firing"}])");
  EXPECT_EQ(get("/api/v1/alerts", "").body, R"({"alerts":[{"rule":"r","state":"firing"}]})");
  const uint64_t hits = cache.hits();
  get("/api/v1/status", "");
  get("/api/v1/alerts", "");
  EXPECT_EQ(cache.hits(), hits);
}

// While the warm-up builds the newest snapshot's answers, a request is served the newest kept
// answer no older than the warmed snapshots (ADR 0035); but a view that an index the newest
// snapshot has made narrows to at most 4 096 rows is built over the newest on request, when the
// cache keeps that snapshot's answers (ADR 0039). Nothing is made for it.
namespace few_rows {

constexpr int64_t kNow = 1'000'000'000'000;

// `count` hangs of signature "Sig" on thread Gecko, and of "Common" on thread T; `wide` series
// of signature "Wide" (a stack each); `others` series of "Common" on threads of their own; a
// crash of signature "Crash" `count` times.
std::shared_ptr<const Snapshot> Make(int64_t count, int64_t built_at_ms, int wide = 0, int others = 0) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.BuildUsage("Linux", kHour, 1, 0, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"main", "Sig"}, 1000 * count, count, 0);
  w.Hang("bhr", "Linux", "parent", "T", {"x", "Common"}, 1000 * count, count, 0);
  for (int i = 0; i < wide; ++i) {
    w.Hang("bhr", "Linux", "parent", "Gecko", {"f" + std::to_string(i), "Wide"}, 1000 * count, count, 0);
  }
  for (int i = 0; i < others; ++i) {
    w.Hang("bhr", "Linux", "parent", "Other" + std::to_string(i), {"x", "Common"}, 1000, 1, 0);
  }
  for (int64_t i = 0; i < count; ++i) w.Crash("Crash", "parent", "parent", "i" + std::to_string(i), 0);
  auto snap = std::const_pointer_cast<Snapshot>(w.Build());
  snap->built_at_ms = built_at_ms;
  return snap;
}

// A row, stack or node of n hangs.
bool Counts(const std::string& body, int64_t n) {
  const std::string field = R"("hang_count":)" + std::to_string(n);
  return body.find(field + ",") != std::string::npos || body.find(field + "}") != std::string::npos;
}

bool Made(const Snapshot& snap, Table t, size_t field) {
  return snap.RowsWithTextHashIfMade(t, field, 0).has_value();
}

struct Api {
  FakeProvider provider;
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  std::shared_ptr<const Snapshot> warmed;
  AnswerBudget* budget = nullptr;

  explicit Api(std::shared_ptr<const Snapshot> first) : warmed(std::move(first)) {
    provider.SetSnapshot(warmed);
    cache.Protect(warmed, nullptr, warmed);
  }
  ApiAnswer Get(std::string_view path, std::string_view qs) {
    return AnswerApi(path, qs, provider, settings, kNow, &cache, budget, warmed, warmed);
  }
  std::string Body(std::string_view path, std::string_view qs) { return Get(path, qs).body; }
};

TEST(FewRowViews, AreBuiltOverTheNewestSnapshotTheWarmUpIsOn) {
  for (const int wide : {4096, 4097}) {
    SCOPED_TRACE(wide);
    Api api(Make(1, 1, wide));
    const std::vector<std::pair<std::string, std::string>> views = {
        {"/api/v1/hangs", "source=bhr&window=all&signature=Sig"},
        {"/api/v1/hangs/flamegraph", "source=bhr&window=all&signature=Sig"},
        {"/api/v1/hangs/timeseries", "source=bhr&window=all&signature=Sig"},
        {"/api/v1/hangs", "source=bhr&window=all&signature=Wide"},
        {"/api/v1/hangs", "source=bhr&window=all&os=Linux"},  // no index narrows it
    };
    std::vector<std::string> before;
    for (const auto& [path, qs] : views) before.push_back(api.Body(path, qs));
    ASSERT_TRUE(Counts(before[0], 1)) << before[0];
    const std::string crashes_before = api.Body("/api/v1/crashes/top", "window=all&signature=Crash");

    const std::shared_ptr<const Snapshot> newest = Make(2, 2, wide);
    api.provider.SetSnapshot(newest);
    // Its signature index made, but not by the warm-up (the cache does not keep its answers):
    // every view is the warmed one's.
    newest->RowsWithTextHash(Table::kHangs, hang_field::kSignature, 0);
    for (size_t i = 0; i < views.size(); ++i)
      EXPECT_EQ(api.Body(views[i].first, views[i].second), before[i]) << i;
    // The warm-up's round over it, its index not made yet: the same, and asking made none.
    const std::shared_ptr<const Snapshot> next = Make(3, 3, wide);
    api.provider.SetSnapshot(next);
    api.cache.Protect(api.warmed, next, api.warmed);
    for (size_t i = 0; i < views.size(); ++i)
      EXPECT_EQ(api.Body(views[i].first, views[i].second), before[i]) << i;
    EXPECT_FALSE(Made(*next, Table::kHangs, hang_field::kSignature));
    EXPECT_EQ(api.Body("/api/v1/crashes/top", "window=all&signature=Crash"), crashes_before);
    EXPECT_FALSE(Made(*next, Table::kCrashes, crash_field::kSignature));
    // Made, as the round's first step makes it: one signature's views are the newest's.
    next->RowsWithTextHash(Table::kHangs, hang_field::kSignature, 0);
    next->RowsWithTextHash(Table::kCrashes, crash_field::kSignature, 0);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(Counts(api.Body(views[i].first, views[i].second), 3)) << views[i].first;
    }
    EXPECT_EQ(Counts(api.Body(views[3].first, views[3].second), 3), wide <= 4096)
        << "4 096 rows are few, 4 097 are not";
    EXPECT_EQ(api.Body(views[4].first, views[4].second), before[4]) << "the whole table is not few rows";
    const std::string crashes = api.Body("/api/v1/crashes/top", "window=all&signature=Crash");
    EXPECT_NE(crashes.find(R"("count":3)"), std::string::npos) << crashes;
  }
}

// /hangs by signature shows each signature's stacks from all of its rows: narrowed by a thread
// (or a build date), it is not a few rows' view, and asking makes no signature index.
TEST(FewRowViews, HangsBySignatureNarrowedByAThreadAreNot) {
  Api api(Make(1, 1));
  const std::string before = api.Body("/api/v1/hangs", "source=bhr&window=all&thread=T");
  ASSERT_TRUE(Counts(before, 1)) << before;
  const std::shared_ptr<const Snapshot> next = Make(2, 2, 0, 100);
  api.provider.SetSnapshot(next);
  api.cache.Protect(api.warmed, next, api.warmed);
  next->RowsWithTextHash(Table::kHangs, hang_field::kThread, 0);  // made ahead (ADR 0036)
  EXPECT_EQ(api.Body("/api/v1/hangs", "source=bhr&window=all&thread=T"), before);
  EXPECT_FALSE(Made(*next, Table::kHangs, hang_field::kSignature));
  // By thread, the same rows are few: built over the newest, from the thread's rows alone.
  EXPECT_TRUE(Counts(api.Body("/api/v1/hangs", "source=bhr&window=all&thread=T&by=thread"), 2));
  EXPECT_TRUE(Counts(api.Body("/api/v1/hangs/flamegraph", "source=bhr&window=all&thread=T"), 2));
  EXPECT_FALSE(Made(*next, Table::kHangs, hang_field::kSignature));
}

// Once a client has an answer built over a snapshot, no later answer is older: snapshots come
// and go, the warm-up moves on, a request's answers of an unkept snapshot are evicted.
TEST(FewRowViews, AnAnswerIsNeverFollowedByAnOlderOne) {
  Api api(Make(1, 1));
  const std::string_view path = "/api/v1/hangs", qs = "source=bhr&window=all&signature=Sig";
  auto count_of = [](const std::string& body) {
    for (int64_t n = 1; n <= 30; ++n) {
      if (Counts(body, n)) return n;
    }
    return int64_t{0};
  };
  int64_t seen = count_of(api.Body(path, qs));
  ASSERT_EQ(seen, 1);
  std::vector<std::shared_ptr<const Snapshot>> alive = {api.warmed};
  // A request makes a snapshot's index one publish after a round; three more publishes, each
  // with another view's answer stored, then evict that snapshot's answers (four are kept).
  for (int64_t n = 2; n <= 15; ++n) {
    alive.push_back(Make(n, n));
    const std::shared_ptr<const Snapshot>& s = alive.back();
    api.provider.SetSnapshot(s);
    if (n % 5 == 1) s->RowsWithTextHash(Table::kHangs, hang_field::kSignature, 0);  // a request made it
    if (n % 5 == 0) {  // the warm-up's round over it, then it is warmed
      api.cache.Protect(api.warmed, s, api.warmed);
      s->RowsWithTextHash(Table::kHangs, hang_field::kSignature, 0);
      const int64_t at_round = count_of(api.Body(path, qs));
      EXPECT_GE(at_round, seen);
      seen = std::max(seen, at_round);
      api.warmed = s;
      api.cache.Protect(s, nullptr, s);
    }
    api.Body(path, "source=bhr&window=all&os=Mac" + std::to_string(n));  // another view, stored over s
    const int64_t now = count_of(api.Body(path, qs));
    EXPECT_GE(now, seen) << "snapshot " << n;
    seen = std::max(seen, now);
  }
  EXPECT_EQ(seen, 15) << "the last round's view";
}

// A few rows' answer holds what its rows need of the answer budget, not a walk's estimate.
TEST(FewRowViews, HoldWhatTheirRowsNeed) {
  Api api(Make(1, 1, 0, 5000));
  // Bounds small beside the walk's 128 B a series (at 10⁶ series the walk's estimate is
  // 130 MB, a few rows' answer 8 MB of the defaults' bounds).
  api.settings.limits.max_nodes = 100;
  api.settings.limits.max_bytes = 64 << 10;
  const uint64_t estimate = EstimateAnswerBytes(*api.warmed, api.settings);
  AnswerBudget budget(2 * estimate);
  api.budget = &budget;
  ASSERT_EQ(api.Get("/api/v1/hangs", "source=bhr&window=all&signature=Sig").status, 200);
  const std::shared_ptr<const Snapshot> next = Make(2, 2, 0, 5000);
  api.provider.SetSnapshot(next);
  api.cache.Protect(api.warmed, next, api.warmed);
  next->RowsWithTextHash(Table::kHangs, hang_field::kSignature, 0);
  const auto warm_up = budget.TryReserve(2 * estimate - estimate / 2);  // what the warm-up holds
  ASSERT_TRUE(warm_up);
  const ApiAnswer a = api.Get("/api/v1/hangs", "source=bhr&window=all&signature=Sig");
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_TRUE(Counts(a.body, 2)) << a.body;
}

}  // namespace few_rows

// Every parameter that changes an answer is part of its key: sparklines=1 asked after the
// plain list (and the other way round) gets its own answer, not the one cached first.
TEST(AnswerCache, QueriesThatDifferInAnyParameterHaveTheirOwnAnswers) {
  FakeProvider provider;
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  auto get = [&](std::string_view qs) {
    return AnswerApi("/api/v1/crashes/top", qs, provider, settings, kNow, &cache).body;
  };
  provider.SetSnapshot(WithCrashes(2));
  const std::string plain = get("window=1h");
  const std::string with_trend = get("window=1h&sparklines=1");
  EXPECT_EQ(plain.find(R"("trend")"), std::string::npos) << plain;
  EXPECT_NE(with_trend.find(R"("trend")"), std::string::npos) << with_trend;
  EXPECT_EQ(with_trend, AnswerApi("/api/v1/crashes/top", "window=1h&sparklines=1", provider, settings, kNow).body);
  EXPECT_EQ(get("window=1h"), plain);
}

}  // namespace
}  // namespace seismo
