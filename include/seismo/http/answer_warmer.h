// AnswerWarmer: builds the dashboard's default answers (query/api.h WarmDefaultAnswers)
// for each published snapshot on a thread of its own, off the publisher's path and the
// requests' (ADR 0025).
//
//   publisher ── Offer(snap) ──> [newest offered] ──> warm-up thread: WarmDefaultAnswers
//                                                       └─> warmed() = snap
//
// The publisher makes a snapshot visible first and offers it after, so a published
// document is in the API's answers within a publish interval, however long the default
// answers take to build at a million series. Until they are built, AnswerApi serves them
// from warmed(), the previous snapshot that has them. Offers that arrive while a round
// runs are not queued: the next round takes the newest one (a slow round skips
// snapshots, it never falls behind). The cache keeps the answers of warmed() and of the
// snapshot being warmed whatever newer snapshots arrive (AnswerCache::Protect).
//
// Views in use (ADR 0035): the server tells it each API view a client was answered
// (Requested; the kMaxSeen most recent are kept). After a round has made its snapshot
// warmed(), the views asked for in the last kViewInUse are built over it too, most recent
// first, up to kMaxViews of them not built already (query/api.h WarmViews: the default
// answers are). A newer snapshot waiting stops that pass, unless the one before was stopped
// too; then it stops once it has taken as long as the round. A dashboard that polls a
// filtered view then finds it built, where each poll would find a new snapshot and build it
// on request. While a view in use filters on a thread or a process that does not hold half the
// hang table, each round makes that dimension's hang index too (WarmCarry::
// filter_values_in_use, ADR 0036): another thread's or process's view then reads its own rows,
// not a walk of the table.
//
// Threading: Offer, Requested and warmed from any thread; Offer never blocks on a round. Stop (also
// run by the destructor) ends the thread after the round in progress; offers after it
// are ignored.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "seismo/core/mutex.h"
#include "seismo/query/api.h"

namespace seismo {

class AnswerWarmer {
 public:
  // Borrows the settings, cache and budget: they must outlive Stop(). The thread runs
  // `nice_steps` below the process (core/thread_priority.h): its rounds are background
  // work, and requests are served first when the cores are short.
  AnswerWarmer(const ApiSettings& settings, AnswerCache<ApiAnswer>& cache, AnswerBudget& budget,
               int nice_steps = 0);
  ~AnswerWarmer();
  AnswerWarmer(const AnswerWarmer&) = delete;
  AnswerWarmer& operator=(const AnswerWarmer&) = delete;

  void Offer(std::shared_ptr<const Snapshot> snap);
  // A client was answered this API path and raw query string; kept when it is a view
  // (IsSnapshotView).
  void Requested(std::string_view path, std::string_view query);
  static constexpr std::chrono::milliseconds kViewInUse{30'000};
  static constexpr size_t kMaxViews = 8;
  static constexpr size_t kMaxSeen = 32;
  // The newest snapshot whose round has finished; null before the first.
  std::shared_ptr<const Snapshot> warmed() const;
  // The newest snapshot whose pass over the views in use finished without being stopped (ADR
  // 0035): warmed(), or one before while they are built over warmed(); null before the
  // first. A view the pass left out (past kMaxViews, or the budget refused it) is built on
  // request.
  std::shared_ptr<const Snapshot> views_warmed() const;
  // Rounds finished so far, and what they carried from the round before.
  struct Counts {
    uint64_t rounds = 0;
    uint64_t rows_updated = 0;    // updated the previous round's hang rows rather than make them
    uint64_t index_carried = 0;   // made their snapshot's hang text indexes from the previous round's
    uint64_t builds_carried = 0;  // made their snapshot's build index from the previous round's
    uint64_t stacks_carried = 0;  // brought the previous round's flame graph stack order up to date
    uint64_t groups_updated = 0;  // brought the previous round's /hangs groups and sums by stack up to date
    uint64_t buckets_carried = 0;  // brought the previous round's time series sums up to date
    uint64_t build_dates_updated =
        0;                         // brought the previous round's /builds hang sums by build date up to date
    uint64_t flame_sums_read = 0;  // the flame graph read the kept sums by stack
    uint64_t views_built = 0;      // answers of views in use built after the rounds
    uint64_t views_from_kept = 0;  // of those, built from what was kept for them (groups, order)
    uint64_t views_brought = 0;    // what was kept for a view, brought up to date by a round
    uint64_t views_seen = 0;       // views asked for that it keeps (now, at most kMaxSeen)
    uint64_t failed = 0;           // rounds that threw: their answers are built on request
    // The rounds' time, in all: the warm-up thread's CPU, and from taking the snapshot to
    // warmed() returning it (what a default view waits for after a publish).
    double cpu_ms = 0;
    double wall_ms = 0;
    double views_cpu_ms = 0;  // the warm-up thread's CPU building the views in use
  };
  Counts counts() const;
  uint64_t rounds() const { return counts().rounds; }
  uint64_t rounds_with_rows_updated() const { return counts().rows_updated; }
  uint64_t rounds_with_index_carried() const { return counts().index_carried; }
  uint64_t rounds_with_builds_carried() const { return counts().builds_carried; }
  uint64_t rounds_with_stacks_carried() const { return counts().stacks_carried; }
  uint64_t rounds_with_groups_updated() const { return counts().groups_updated; }
  uint64_t rounds_with_buckets_carried() const { return counts().buckets_carried; }
  uint64_t rounds_with_build_dates_updated() const { return counts().build_dates_updated; }
  uint64_t rounds_with_flame_sums_read() const { return counts().flame_sums_read; }
  void Stop();
  // Test seam: run at the start of each round, on the warm-up thread, before the default
  // answers (it may throw, as a round out of memory would). Set before the first Offer.
  void SetRoundHookForTesting(std::function<void()> hook) { round_hook_for_testing_ = std::move(hook); }
  // Test seams for the views in use, set before the first Offer or Requested: the clock that
  // dates the views asked for and times the rounds and the views' pass (steady_clock's
  // otherwise), and a function run on the warm-up thread each time the views' pass asks
  // whether to stop, before each view (it may Offer, or move that clock).
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  void SetClockForTesting(Clock now) { clock_for_testing_ = std::move(now); }
  void SetViewsHookForTesting(std::function<void()> hook) { views_hook_for_testing_ = std::move(hook); }

 private:
  void Run();
  // The views asked for in the last kViewInUse, most recent first.
  std::vector<ApiView> ViewsInUse() const;
  std::chrono::steady_clock::time_point Now() const {
    return clock_for_testing_ ? clock_for_testing_() : std::chrono::steady_clock::now();
  }

  const ApiSettings& settings_;
  AnswerCache<ApiAnswer>& cache_;
  AnswerBudget& budget_;
  const int nice_steps_;
  mutable Mutex mu_;
  CondVar cv_;
  std::shared_ptr<const Snapshot> offered_ GUARDED_BY(mu_);
  std::shared_ptr<const Snapshot> warmed_ GUARDED_BY(mu_);
  std::shared_ptr<const Snapshot> views_warmed_ GUARDED_BY(mu_);
  Counts counts_ GUARDED_BY(mu_);  // carry_'s counters after the last round
  WarmCarry carry_;  // the warm-up thread's own: what one round leaves the next (ADR 0034)
  bool stopping_ GUARDED_BY(mu_) = false;
  // Written before the first Offer, read by the thread after it takes an offer (under mu_).
  std::function<void()> round_hook_for_testing_;
  Clock clock_for_testing_;
  std::function<void()> views_hook_for_testing_;
  struct SeenView {
    ApiView view;
    std::chrono::steady_clock::time_point last;
  };
  std::vector<SeenView> seen_ GUARDED_BY(mu_);  // most recent last, at most kMaxSeen
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace seismo
