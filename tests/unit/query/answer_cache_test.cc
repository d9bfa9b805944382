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
// snapshot has made narrows to at most 4 096 rows is built over the newest on request (ADR
// 0039): one signature's hangs count a new document a round sooner. Nothing is made for it.
TEST(AnswerCache, AViewAMadeIndexNarrowsToAFewRowsIsBuiltOverTheNewestSnapshot) {
  // `count` hangs of signature "Sig"; `wide` series of signature "Wide" (one stack each).
  auto make = [](int64_t count, int wide, int64_t built_at_ms) {
    World w;
    w.Usage("bhr", "Linux", kHour, 0);
    w.Hang("bhr", "Linux", "parent", "Gecko", {"main", "Sig"}, 1000 * count, count, 0);
    for (int i = 0; i < wide; ++i) {
      w.Hang("bhr", "Linux", "parent", "Gecko", {"f" + std::to_string(i), "Wide"}, 1000 * count, count, 0);
    }
    auto snap = std::const_pointer_cast<Snapshot>(w.Build());
    snap->built_at_ms = built_at_ms;
    return std::shared_ptr<const Snapshot>(snap);
  };
  auto counts = [](const std::string& body, int64_t n) {  // a row, stack or node of n hangs
    const std::string field = R"("hang_count":)" + std::to_string(n);
    return body.find(field + ",") != std::string::npos || body.find(field + "}") != std::string::npos;
  };
  for (const int wide : {4096, 4097}) {
    SCOPED_TRACE(wide);
    FakeProvider provider;
    const ApiSettings settings;
    AnswerCache<ApiAnswer> cache;
    const std::shared_ptr<const Snapshot> warmed = make(1, wide, 1);
    auto get = [&](std::string_view path, std::string_view qs) {
      return AnswerApi(path, qs, provider, settings, kNow, &cache, nullptr, warmed, warmed).body;
    };
    provider.SetSnapshot(warmed);
    const std::vector<std::pair<std::string, std::string>> views = {
        {"/api/v1/hangs", "source=bhr&window=all&signature=Sig"},
        {"/api/v1/hangs", "source=bhr&window=all&signature=Wide"},
        {"/api/v1/hangs/flamegraph", "source=bhr&window=all&signature=Sig"},
        {"/api/v1/hangs", "source=bhr&window=all&os=Linux"},  // no index narrows it
    };
    for (const auto& [path, qs] : views)
      ASSERT_TRUE(counts(get(path, qs), 1)) << path << "?" << qs << get(path, qs);

    const std::shared_ptr<const Snapshot> newest = make(2, wide, 2);
    provider.SetSnapshot(newest);
    // The newest snapshot's signature index is not made: every view is the warmed one's, and
    // asking made nothing.
    for (const auto& [path, qs] : views) EXPECT_TRUE(counts(get(path, qs), 1)) << path << "?" << qs;
    EXPECT_FALSE(newest->RowsWithTextHashIfMade(Table::kHangs, hang_field::kSignature, 0));
    // Made (as the warm-up's round makes it first): one signature's views are the newest's.
    newest->RowsWithTextHash(Table::kHangs, hang_field::kSignature, 0);
    EXPECT_TRUE(counts(get(views[0].first, views[0].second), 2));
    EXPECT_TRUE(counts(get(views[2].first, views[2].second), 2));
    EXPECT_EQ(counts(get(views[1].first, views[1].second), 2), wide <= 4096)
        << "4 096 rows are few, 4 097 are not";
    EXPECT_TRUE(counts(get(views[3].first, views[3].second), 1)) << "the whole table is not few rows";
  }
}

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
