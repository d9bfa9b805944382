#include "seismo/http/answer_warmer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <new>
#include <vector>

#include "seismo/query/selection.h"
#include "support/wait_for.h"
#include "unit/query/query_fixture.h"

namespace seismo {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const Snapshot> At(int64_t ms) {
  auto s = std::make_shared<Snapshot>();
  s->built_at_ms = ms;
  return s;
}

// A clock the test moves (AnswerWarmer::SetClockForTesting): steady_clock's now at its
// making, plus what the test added.
class TestClock {
 public:
  AnswerWarmer::Clock Get() {
    return [this] { return start_ + std::chrono::milliseconds(added_ms_.load()); };
  }
  void Add(std::chrono::milliseconds ms) { added_ms_ += ms.count(); }

 private:
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<int64_t> added_ms_{0};
};

// A warmer on a TestClock that stands still until the test moves it, and a world with two
// hours of bhr usage to add hangs to. The clock comes before the warmer: its thread reads it
// until the warmer is gone.
struct OnATestClock {
  OnATestClock() {
    warmer.SetClockForTesting(clock.Get());
    w.Usage("bhr", "Linux", 2 * testing::kHour, 10 * testing::kMin);
  }
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget{256u << 20};
  TestClock clock;
  AnswerWarmer warmer{settings, cache, budget};
  testing::World w;
};

// Offers never wait for a round; the warm-up always reaches the newest offered snapshot,
// and a request for a default answer is then served from the cache.
TEST(AnswerWarmer, WarmsTheNewestOfferedSnapshot) {
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(64u << 20);
  AnswerWarmer warmer(settings, cache, budget);
  EXPECT_EQ(warmer.warmed(), nullptr) << "nothing before the first round";
  std::vector<std::shared_ptr<const Snapshot>> snaps;
  for (int i = 1; i <= 50; ++i) {
    snaps.push_back(At(i));
    warmer.Offer(snaps.back());
  }
  ASSERT_TRUE(test::WaitFor([&] { return warmer.warmed() == snaps.back(); }, 30s, 1ms));
  EXPECT_GE(warmer.rounds(), 1u);
  EXPECT_LE(warmer.rounds(), 50u);
  OneSnapshot provider(snaps.back());
  const uint64_t hits = cache.hits();
  EXPECT_EQ(AnswerApi("/api/v1/builds", "", provider, settings, 0, &cache, &budget, warmer.warmed()).status,
            200);
  EXPECT_EQ(cache.hits(), hits + 1) << "built by the warm-up";
  EXPECT_EQ(budget.in_use(), 0u)
      << "the warm-up gave back what it reserved (it keeps only hang rows: none here)";
}

// Each round after the first updates the hang rows the round before left from what changed
// (ADR 0034) rather than making them anew, and the flame graph's stack order, across moves of
// the window over hangs a source ahead of stream time sent (HangRows::Update); the answers it
// builds from them are the answers a request builds from the snapshot; their memory is held
// between rounds and given back by Stop.
TEST(AnswerWarmer, UpdatesTheRowsTheRoundBeforeLeft) {
  ApiSettings settings;
  settings.limits.max_nodes = 12;  // a flame graph with "(other)" nodes, from the carried order too
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(256u << 20);
  TestClock clock;  // before the warmer: its thread reads it until the warmer is gone
  AnswerWarmer warmer(settings, cache, budget);
  warmer.SetClockForTesting(clock.Get());  // stands still: the view below stays in use
  warmer.Requested("/api/v1/hangs", "thread=StreamTrans&process=content");  // their indexes made
  testing::World w;
  w.Usage("bhr", "Linux", 2 * testing::kHour, 10 * testing::kMin);
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 40; ++i) {
      const std::string k = std::to_string((round * 7 + i) % 60);
      w.Hang("bhr", "Linux", i % 4 ? "parent" : "content", i % 3 ? "Gecko" : "StreamTrans",
             {"root", "f" + k, "Sig" + k}, 1000 + i, 1, i * testing::kMin / 2);
    }
    // 3 minutes ahead: aside through a round that does not move, in the window after one that does.
    w.HangAhead("Gecko", {"root", "ahead" + std::to_string(round)}, 500, 3 * testing::kMin);
    if (round % 2 == 1) w.Advance(2 * testing::kMin);  // the window moves over the hangs ahead
    const std::shared_ptr<const Snapshot> snap = w.Build();
    warmer.Offer(snap);
    ASSERT_TRUE(test::WaitFor([&] { return warmer.warmed() == snap; }, 30s, 1ms));
    EXPECT_EQ(warmer.rounds_with_rows_updated(), static_cast<uint64_t>(round)) << "round " << round;
    EXPECT_EQ(warmer.rounds_with_index_carried(), static_cast<uint64_t>(round)) << "round " << round;
    EXPECT_EQ(warmer.rounds_with_builds_carried(), static_cast<uint64_t>(round)) << "round " << round;
    EXPECT_EQ(warmer.rounds_with_stacks_carried(), static_cast<uint64_t>(round)) << "round " << round;
    EXPECT_EQ(warmer.rounds_with_groups_updated(), static_cast<uint64_t>(round)) << "round " << round;
    EXPECT_EQ(warmer.rounds_with_buckets_carried(), static_cast<uint64_t>(round)) << "round " << round;
    EXPECT_EQ(warmer.rounds_with_build_dates_updated(), static_cast<uint64_t>(round)) << "round " << round;
    EXPECT_EQ(warmer.rounds_with_flame_sums_read(), static_cast<uint64_t>(round) + 1) << "round " << round;
    OneSnapshot provider(snap);
    // A default answer: served from what the warm-up built, and the answer a request builds.
    auto warmed = [&](const char* path, const char* query) {
      const uint64_t hits = cache.hits();
      const ApiAnswer answer = AnswerApi(path, query, provider, settings, 0, &cache, &budget, snap);
      EXPECT_EQ(cache.hits(), hits + 1) << "built by the warm-up: " << path << "?" << query;
      EXPECT_EQ(answer.body, AnswerApi(path, query, provider, settings, 0, nullptr, nullptr, nullptr).body)
          << "round " << round << ", " << path << "?" << query;
      return answer.body;
    };
    for (const char* query : {"", "by=thread", "by=build_date&limit=25"}) warmed("/api/v1/hangs", query);
    // A signature's page reads the signature index, made from the previous round's: it
    // answers as the index a snapshot of the same series makes in full.
    OneSnapshot fresh(w.Build());
    for (const std::string sig : {"Sig3", "Sig39", "NoSuchSignature"}) {
      const std::string query = "signature=" + sig;
      const ApiAnswer from_carried =
          AnswerApi("/api/v1/hangs", query, provider, settings, 0, nullptr, nullptr, nullptr);
      EXPECT_EQ(from_carried.body,
                AnswerApi("/api/v1/hangs", query, fresh, settings, 0, nullptr, nullptr, nullptr).body)
          << "round " << round << ", " << sig;
      EXPECT_EQ(from_carried.body.find("\"signature\":\"" + sig + "\"") != std::string::npos,
                sig != "NoSuchSignature")
          << sig << " " << from_carried.body;
    }
    // A thread's or a process's view reads their indexes, made by the round while a view in use
    // names them (from the previous round's after the first): it answers as a walk of the table.
    for (const IndexedAhead& i : kHangFieldsIndexedAhead) {
      EXPECT_TRUE(snap->RowsWithTextHashIfMade(Table::kHangs, i.field, 0)) << "round " << round;
    }
    for (const char* query : {"thread=StreamTrans", "thread=StreamTrans&process=content", "process=content",
                              "thread=NoSuchThread"}) {
      for (const char* path : {"/api/v1/hangs", "/api/v1/hangs/flamegraph"}) {
        EXPECT_EQ(AnswerApi(path, query, provider, settings, 0, nullptr, nullptr, nullptr).body,
                  AnswerApi(path, query, fresh, settings, 0, nullptr, nullptr, nullptr).body)
            << "round " << round << ", " << path << "?" << query;
      }
    }
    // /builds and the Releases view read the build index, made from the previous round's too:
    // they answer as over the index a snapshot of the same series makes in full.
    // (The Releases view is warmed for the channels of main pings' usage; this world has none.)
    for (const char* query : {"", "limit=200"}) {
      EXPECT_EQ(warmed("/api/v1/builds", query),
                AnswerApi("/api/v1/builds", query, fresh, settings, 0, nullptr, nullptr, nullptr).body)
          << "round " << round << ", /builds?" << query;
    }
    EXPECT_EQ(
        AnswerApi("/api/v1/releases", "channel=release", provider, settings, 0, nullptr, nullptr, nullptr)
            .body,
        AnswerApi("/api/v1/releases", "channel=release", fresh, settings, 0, nullptr, nullptr, nullptr).body)
        << "round " << round;
    const std::string flame = warmed("/api/v1/hangs/flamegraph", "");
    warmed("/api/v1/hangs/timeseries", "");
    EXPECT_NE(flame.find("(other)"), std::string::npos) << flame;
  }
  EXPECT_GT(budget.in_use(), 0u) << "the rows are held for the next round";
  EXPECT_GT(warmer.counts().cpu_ms, 0) << "the rounds were timed (their CPU: the test's clock stands still)";
  warmer.Stop();
  EXPECT_EQ(budget.in_use(), 0u) << "and given back when the warm-up stops";
}

// Views in use (ADR 0035): after a round has made its snapshot warmed(), the views clients
// were answered are built over it too, the most recent first, at most kMaxViews not built
// already; what is not a function of the snapshot, or does not parse, is not.
TEST(AnswerWarmer, BuildsTheViewsInUseOverEachWarmedSnapshot) {
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(256u << 20);
  AnswerWarmer warmer(settings, cache, budget);
  testing::World w;
  w.Usage("bhr", "Linux", 2 * testing::kHour, 10 * testing::kMin);
  for (int i = 0; i < 12; ++i) {
    w.Hang("bhr", "Linux", "parent", "T" + std::to_string(i), {"root", "f" + std::to_string(i)}, 1000 + i, 1,
           testing::kMin);
  }
  const std::shared_ptr<const Snapshot> first = w.Build();
  warmer.Offer(first);
  // Its pass over the views in use is over too (none in use yet), so the views below are the
  // next round's.
  ASSERT_TRUE(test::WaitFor([&] { return warmer.views_warmed() == first; }, 30s, 1ms));
  EXPECT_EQ(warmer.counts().views_built, 0u) << "none in use yet";
  // Twelve filtered views, oldest first; and three the warm-up never builds.
  for (int i = 0; i < 12; ++i) warmer.Requested("/api/v1/hangs", "thread=T" + std::to_string(i));
  warmer.Requested("/api/v1/status", "");
  warmer.Requested("/api/v1/hangs", "window=nonsense");
  warmer.Requested("/api/v1/builds", "");           // a default answer: built by the round already
  warmer.Requested("/api/v1/hangs", "thread=T11");  // asked again: the most recent
  w.Hang("bhr", "Linux", "parent", "T3", {"root", "f3"}, 5000, 1, testing::kMin);
  const std::shared_ptr<const Snapshot> second = w.Build();
  warmer.Offer(second);
  ASSERT_TRUE(
      test::WaitFor([&] { return warmer.counts().views_built >= AnswerWarmer::kMaxViews; }, 30s, 1ms));
  EXPECT_EQ(warmer.warmed(), second);
  EXPECT_EQ(warmer.counts().views_built, AnswerWarmer::kMaxViews);
  OneSnapshot provider(second);
  for (int i = 0; i < 12; ++i) {
    const std::string query = "thread=T" + std::to_string(i);
    const uint64_t hits = cache.hits();
    const ApiAnswer answer =
        AnswerApi("/api/v1/hangs", query, provider, settings, 0, &cache, &budget, second);
    // The eight most recent: T11, then T10 down to T4.
    EXPECT_EQ(cache.hits(), hits + (i >= 4 ? 1 : 0)) << query;
    EXPECT_EQ(answer.body,
              AnswerApi("/api/v1/hangs", query, provider, settings, 0, nullptr, nullptr, nullptr).body)
        << query;
  }
}

// The views in use keep their groups (a flame graph its stack order too) from round to round:
// each round brings them up to date with the rows that changed, and the views built from them
// are the answers a request builds from the snapshot.
TEST(AnswerWarmer, KeepsTheViewsInUseFromRoundToRound) {
  ApiSettings settings;
  settings.limits.max_nodes = 12;  // a flame graph with "(other)" nodes
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(256u << 20);
  AnswerWarmer warmer(settings, cache, budget);
  testing::World w;
  w.Usage("bhr", "Linux", 2 * testing::kHour, 10 * testing::kMin);
  const std::vector<std::pair<std::string, std::string>> views = {
      {"/api/v1/hangs", "os=windows_nt"},
      {"/api/v1/hangs", "by=thread&os=Linux&limit=3"},
      {"/api/v1/hangs/flamegraph", "thread=T1"}};
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    w.Advance(round % 2 == 1 ? 3 * testing::kMin : 0);  // the window moves on: brought all the same
    for (int i = 0; i < 40; ++i) {
      const int k = (round * 7 + i) % 60;
      w.Hang("bhr", k % 3 == 0 ? "Windows_NT" : "Linux", "parent", "T" + std::to_string(k % 4),
             {"root", "f" + std::to_string(k % 9), "Sig" + std::to_string(k)}, 1000 + i, 1,
             i * testing::kMin / 2);
    }
    const std::shared_ptr<const Snapshot> snap = w.Build();
    warmer.Offer(snap);
    ASSERT_TRUE(test::WaitFor([&] { return warmer.views_warmed() == snap; }, 30s, 1ms));
    const AnswerWarmer::Counts c = warmer.counts();
    // In use from the first round's answers on: built over each snapshot after it, from what
    // was kept; brought by each round after the one that made them.
    EXPECT_EQ(c.views_built, 3u * static_cast<uint64_t>(round));
    EXPECT_EQ(c.views_from_kept, 3u * static_cast<uint64_t>(round));
    EXPECT_EQ(c.views_brought, round >= 2 ? 3u * static_cast<uint64_t>(round - 1) : 0u);
    OneSnapshot provider(snap);
    for (const auto& [path, query] : views) {
      const uint64_t hits = cache.hits();
      const ApiAnswer answer = AnswerApi(path, query, provider, settings, 0, &cache, &budget, snap);
      EXPECT_EQ(cache.hits(), hits + (round > 0 ? 1 : 0)) << path << "?" << query;
      EXPECT_EQ(answer.body, AnswerApi(path, query, provider, settings, 0, nullptr, nullptr, nullptr).body)
          << path << "?" << query;
      warmer.Requested(path, query);
    }
  }
  EXPECT_GT(budget.in_use(), 0u) << "held for the views kept";
  warmer.Stop();
  EXPECT_EQ(budget.in_use(), 0u) << "and given back when the warm-up stops";
}

// A view asked for is in use for kViewInUse (30 s) after it was last asked for, that moment
// included, and built over each snapshot while it is; past it, it is not, until it is asked
// for again.
TEST(AnswerWarmer, AViewIsInUseForThirtySecondsAfterItWasLastAskedFor) {
  OnATestClock t;
  t.warmer.Requested("/api/v1/hangs", "thread=T1");
  // Each step: how far the clock moves, whether the view is asked for again, and the views
  // built over the step's snapshot.
  struct Step {
    std::chrono::milliseconds later;
    bool asked_again;
    uint64_t built;
  };
  const std::vector<Step> steps = {
      {0ms, false, 1}, {AnswerWarmer::kViewInUse, false, 1}, {1ms, false, 0}, {10'000ms, false, 0},
      {0ms, true, 1},  {AnswerWarmer::kViewInUse, false, 1}, {1ms, false, 0}};
  uint64_t built = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "step " << i);
    t.clock.Add(steps[i].later);
    if (steps[i].asked_again) t.warmer.Requested("/api/v1/hangs", "thread=T1");
    t.w.Hang("bhr", "Linux", "parent", "T1", {"root", "f" + std::to_string(i)}, 1000 + i, 1, testing::kMin);
    const std::shared_ptr<const Snapshot> snap = t.w.Build();
    t.warmer.Offer(snap);
    ASSERT_TRUE(test::WaitFor([&] { return t.warmer.views_warmed() == snap; }, 30s, 1ms));
    built += steps[i].built;
    EXPECT_EQ(t.warmer.counts().views_built, built);
    EXPECT_EQ(t.warmer.counts().views_seen, 1u) << "kept while not in use: it may be asked for again";
  }
}

// A thread's or a process's hang index (selection.h CandidateRows) is made by each round while
// a view in use filters on that dimension (ADR 0036), and not otherwise: the default views'
// rounds make neither. A value the index shows to hold half the hang table or more does not
// have it made: one round makes it, and learns that (until the table has doubled or halved).
TEST(AnswerWarmer, MakesAThreadsIndexWhileAViewInUseFiltersOnIt) {
  OnATestClock t;
  int rounds = 0;
  // Whether the next round's snapshot has made each index: (thread, process).
  auto next_round = [&] {
    // Each round, a series of thread T1 and three of Gecko: Gecko holds three quarters.
    const std::string k = std::to_string(rounds++);
    t.w.Hang("bhr", "Linux", "parent", "T1", {"root", "f" + k}, 1000, 1, testing::kMin);
    for (const char* g : {"g1", "g2", "g3"}) {
      t.w.Hang("bhr", "Linux", "parent", "Gecko", {"root", g + k}, 1000, 1, testing::kMin);
    }
    const std::shared_ptr<const Snapshot> snap = t.w.Build();
    t.warmer.Offer(snap);
    EXPECT_TRUE(test::WaitFor([&] { return t.warmer.warmed() == snap; }, 30s, 1ms));
    auto made = [&](size_t field) {
      return snap->RowsWithTextHashIfMade(Table::kHangs, field, 0).has_value();
    };
    return std::pair{made(hang_field::kThread), made(hang_field::kProcess)};
  };
  t.warmer.Requested("/api/v1/hangs", "process=any");  // no filter (params.h)
  EXPECT_EQ(next_round(), std::pair(false, false)) << "no view in use filters on either";
  t.warmer.Requested("/api/v1/hangs/flamegraph", "thread=T1");
  EXPECT_EQ(next_round(), std::pair(true, false));
  t.warmer.Requested("/api/v1/crashes/top", "window=24h&process=content");
  EXPECT_EQ(next_round(), std::pair(true, true));
  EXPECT_EQ(next_round(), std::pair(true, true));
  t.clock.Add(AnswerWarmer::kViewInUse + 1ms);
  EXPECT_EQ(next_round(), std::pair(false, false)) << "no longer in use";
  t.warmer.Requested("/api/v1/hangs", "thread=Gecko&process=parent");
  EXPECT_EQ(next_round(), std::pair(true, true)) << "made once: Gecko's and parent's rows counted";
  EXPECT_EQ(next_round(), std::pair(false, false)) << "each holds at least half the table";
  t.warmer.Requested("/api/v1/hangs/flamegraph", "thread=T1");
  EXPECT_EQ(next_round(), std::pair(true, false)) << "T1 holds a quarter";
  t.clock.Add(AnswerWarmer::kViewInUse + 1ms);
  EXPECT_EQ(next_round(), std::pair(false, false)) << "a round with Gecko out of use forgets it";
  t.warmer.Requested("/api/v1/hangs", "thread=Gecko");
  EXPECT_EQ(next_round(), std::pair(true, false)) << "measured again once named again";
  const int measured = rounds;  // over a table of 4 × measured series
  EXPECT_EQ(next_round(), std::pair(false, false));
  int remade = 0;  // the table grows by four series a round
  while (remade == 0 && rounds < 4 * measured) {
    if (next_round().first) remade = rounds;
  }
  EXPECT_EQ(remade, 2 * measured + 1) << "measured again once the table has doubled";
}

// The views' pass gives way to a newer snapshot: stopped at once when the pass before it
// finished, else once it has taken longer than its round did (the views are then at most a
// round older than the default answers, and delay the next round by at most a round's time).
// A stopped pass leaves views_warmed() where it was.
TEST(AnswerWarmer, TheViewsPassGivesWayToANewerSnapshot) {
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(256u << 20);
  // The clock stands still unless the hook moves it, so a round takes no time on it. It, the
  // snapshots and the hook's state come before the warmer: its thread reads them until the
  // warmer is gone (a failed assertion returns early).
  TestClock clock;
  std::vector<std::shared_ptr<const Snapshot>> snaps;
  const Snapshot* pass_of = nullptr;  // the warm-up thread's alone (the hook's)
  int calls = 0;
  AnswerWarmer warmer(settings, cache, budget);
  warmer.SetClockForTesting(clock.Get());
  testing::World w;
  w.Usage("bhr", "Linux", 2 * testing::kHour, 10 * testing::kMin);
  for (int i = 0; i < 4; ++i) {
    w.Hang("bhr", "Linux", "parent", "T" + std::to_string(i % 3), {"root", "f" + std::to_string(i)}, 1000 + i,
           1, testing::kMin);
    snaps.push_back(w.Build());
  }
  // What the hook does at each call of a pass: the pass over snaps[1] (the pass before it
  // finished) is given snaps[2] to give way to at its first call; the pass over snaps[2] (the
  // pass before it was stopped) is given snaps[3] at its first call and the clock moved on at
  // its second.
  warmer.SetViewsHookForTesting([&] {
    const std::shared_ptr<const Snapshot> warmed = warmer.warmed();  // the pass's snapshot
    if (warmed.get() != pass_of) {
      pass_of = warmed.get();
      calls = 0;
    }
    const int call = calls++;
    if (warmed == snaps[1] && call == 0) warmer.Offer(snaps[2]);
    if (warmed == snaps[2] && call == 0) warmer.Offer(snaps[3]);
    if (warmed == snaps[2] && call == 1) clock.Add(1ms);
  });
  for (int i = 0; i < 3; ++i) warmer.Requested("/api/v1/hangs", "thread=T" + std::to_string(i));

  warmer.Offer(snaps[0]);
  ASSERT_TRUE(test::WaitFor([&] { return warmer.views_warmed() == snaps[0]; }, 30s, 1ms));
  EXPECT_EQ(warmer.counts().views_built, 3u) << "nothing newer waiting: every view in use";
  // The rounds over snaps[1], [2] and [3] run one after the other, each taking the snapshot
  // the hook offered.
  warmer.Offer(snaps[1]);
  ASSERT_TRUE(test::WaitFor([&] { return warmer.views_warmed() == snaps[3]; }, 30s, 1ms));
  // Pass 1: stopped before its first view. Pass 2: one view, then stopped, overdue. Pass 3:
  // nothing newer waiting, every view.
  EXPECT_EQ(warmer.counts().views_built, 3u + 0u + 1u + 3u);
  EXPECT_EQ(warmer.counts().rounds, 4u);
}

// A round that throws does not end the process: its snapshot still becomes warmed(), its
// answers are built on request (exact), what it carried is given back, and the next round
// builds the default answers afresh.
TEST(AnswerWarmer, ARoundThatThrowsLeavesItsAnswersToRequests) {
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(256u << 20);
  AnswerWarmer warmer(settings, cache, budget);
  std::atomic<int> round{0};
  warmer.SetRoundHookForTesting([&] {
    if (round.fetch_add(1) == 2) throw std::bad_alloc();
  });
  testing::World w;
  w.Usage("bhr", "Linux", 2 * testing::kHour, 10 * testing::kMin);
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 20; ++i) {
      const std::string k = std::to_string((r * 7 + i) % 30);
      w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "f" + k, "Sig" + k}, 1000 + i, 1, i * testing::kMin);
    }
    const std::shared_ptr<const Snapshot> snap = w.Build();
    warmer.Offer(snap);
    ASSERT_TRUE(test::WaitFor([&] { return warmer.warmed() == snap; }, 30s, 1ms)) << "round " << r;
    EXPECT_EQ(warmer.counts().failed, r >= 2 ? 1u : 0u) << "round " << r;
    // Round 1 updated the rows round 0 made; the failed round's drop keeps that count, and
    // round 3 makes them anew (nothing carried).
    EXPECT_EQ(warmer.rounds_with_rows_updated(), r >= 1 ? 1u : 0u) << "round " << r;
    if (r == 2) {
      EXPECT_EQ(budget.in_use(), 0u) << "what the rounds before carried was given back";
    } else {
      EXPECT_GT(budget.in_use(), 0u) << "rows carried for the next round: " << r;
    }
    OneSnapshot provider(snap);
    const uint64_t hits = cache.hits();
    const ApiAnswer answer = AnswerApi("/api/v1/builds", "", provider, settings, 0, &cache, &budget, snap);
    EXPECT_EQ(answer.status, 200);
    EXPECT_EQ(answer.body,
              AnswerApi("/api/v1/builds", "", provider, settings, 0, nullptr, nullptr, nullptr).body)
        << "round " << r;
    EXPECT_EQ(cache.hits(), r == 2 ? hits : hits + 1)
        << "built by the warm-up unless its round failed: " << r;
  }
  EXPECT_EQ(warmer.rounds(), 4u);
}

// Stop ends the thread; later offers are ignored and Stop may run again.
TEST(AnswerWarmer, StopsAndIgnoresLaterOffers) {
  ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(64u << 20);
  AnswerWarmer warmer(settings, cache, budget);
  auto first = At(1);
  warmer.Offer(first);
  ASSERT_TRUE(test::WaitFor([&] { return warmer.warmed() == first; }, 30s, 1ms));
  warmer.Stop();
  warmer.Offer(At(2));
  warmer.Stop();
  EXPECT_EQ(warmer.warmed(), first);
  EXPECT_EQ(warmer.rounds(), 1u);
}

}  // namespace
}  // namespace seismo
