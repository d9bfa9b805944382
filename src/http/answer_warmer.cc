#include "seismo/http/answer_warmer.h"

#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "seismo/core/thread_priority.h"

namespace seismo {
namespace {

double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace

AnswerWarmer::AnswerWarmer(const ApiSettings& settings, AnswerCache<ApiAnswer>& cache, AnswerBudget& budget,
                           int nice_steps)
    : settings_(settings), cache_(cache), budget_(budget), nice_steps_(nice_steps), thread_([this] {
        Run();
      }) {}

AnswerWarmer::~AnswerWarmer() { Stop(); }

void AnswerWarmer::Offer(std::shared_ptr<const Snapshot> snap) {
  // An offer the thread has not taken yet is replaced; it may be the last hold on its
  // snapshot, and freeing one of 10^6 series took up to 3.3 ms: not under mu_, which every
  // request takes (warmed()).
  std::shared_ptr<const Snapshot> replaced;
  {
    MutexLock lock(mu_);
    if (stopping_ || !snap) return;
    replaced = std::exchange(offered_, std::move(snap));
  }
  cv_.NotifyAll();
}

void AnswerWarmer::Requested(std::string_view path, std::string_view query) {
  // Only what is a function of the snapshot is a view (not /status, /alerts).
  if (!IsSnapshotView(path)) return;
  MutexLock lock(mu_);
  const auto now = Now();
  if (stopping_) return;
  auto it = std::find_if(seen_.begin(), seen_.end(),
                         [&](const SeenView& s) { return s.view.path == path && s.view.query == query; });
  if (it != seen_.end()) {
    std::rotate(it, it + 1, seen_.end());  // most recent last
    seen_.back().last = now;
    return;
  }
  if (seen_.size() == kMaxSeen) seen_.erase(seen_.begin());
  seen_.push_back({ApiView{std::string(path), std::string(query)}, now});
}

std::vector<ApiView> AnswerWarmer::ViewsInUse() const {
  std::vector<ApiView> views;
  MutexLock lock(mu_);
  const auto now = Now();
  for (auto it = seen_.rbegin(); it != seen_.rend() && now - it->last <= kViewInUse; ++it) {
    views.push_back(it->view);
  }
  return views;
}

std::shared_ptr<const Snapshot> AnswerWarmer::warmed() const {
  MutexLock lock(mu_);
  return warmed_;
}

std::shared_ptr<const Snapshot> AnswerWarmer::views_warmed() const {
  MutexLock lock(mu_);
  return views_warmed_;
}

AnswerWarmer::Counts AnswerWarmer::counts() const {
  MutexLock lock(mu_);
  Counts c = counts_;
  c.views_seen = seen_.size();
  return c;
}

void AnswerWarmer::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void AnswerWarmer::Run() {
  if (nice_steps_ > 0) LowerThisThreadPriority(nice_steps_);
  for (;;) {
    std::shared_ptr<const Snapshot> snap, serving, views_serving;
    {
      MutexLock lock(mu_);
      while (!stopping_ && !offered_) cv_.Wait(mu_);
      if (stopping_) break;
      snap = std::move(offered_);
      offered_ = nullptr;
      serving = warmed_;
      views_serving = views_warmed_;
    }
    const auto started = Now();
    const double cpu_started = ThreadCpuMs();
    cache_.Protect(serving, snap, views_serving);
    // A round that throws (out of memory past the places that handle it, or a bug) must not
    // end the process: what it carried is dropped, so the next round starts afresh, and the
    // snapshot still becomes warmed(): its default answers not built are built on request,
    // exact and fresh, rather than served ever older while rounds keep failing.
    bool failed = false;
    try {
      if (round_hook_for_testing_) round_hook_for_testing_();
      carry_.filter_values_in_use = FilterValuesInUse(ViewsInUse(), settings_.windows_ms);
      WarmDefaultAnswers(snap, settings_, cache_, &budget_, &carry_);
    } catch (const std::exception& e) {
      failed = true;
      carry_.DropAll();  // its counters stay: Counts never go back
      spdlog::warn("warm-up: the round over the snapshot of {} failed ({}); its answers are built on request",
                   snap->built_at_ms, e.what());
    }
    const double cpu_ms = ThreadCpuMs() - cpu_started;
    {
      // Requests read warmed() first: the previous one gives up its place only after.
      MutexLock lock(mu_);
      warmed_ = snap;
      ++counts_.rounds;
      if (failed) ++counts_.failed;
      counts_.rows_updated = carry_.rows_updated;
      counts_.index_carried = carry_.index_carried;
      counts_.builds_carried = carry_.builds_carried;
      counts_.stacks_carried = carry_.stacks_carried;
      counts_.groups_updated = carry_.groups_updated;
      counts_.buckets_carried = carry_.buckets_carried;
      counts_.build_dates_updated = carry_.build_dates_updated;
      counts_.flame_sums_read = carry_.flame_sums_read;
      counts_.cpu_ms += cpu_ms;
      counts_.wall_ms += std::chrono::duration<double, std::milli>(Now() - started).count();
    }
    // The views in use, over the snapshot just made warmed(), most recent first. A newer
    // snapshot waiting stops them (its default answers come first), unless the pass over the
    // snapshot before was stopped too: then it goes on for as long as the round took, so the
    // views are seldom more than a round older than the default answers and never delay the
    // next round by more than one round's time.
    const std::vector<ApiView> views = ViewsInUse();
    // Until they are, requests for them are served from views_warmed() (the cache keeps its
    // answers: Protect's third).
    const double views_cpu_started = ThreadCpuMs();
    const auto views_started = Now();
    const auto round_took = views_started - started;
    const bool may_skip = views_serving == serving;
    bool stopped = false;
    size_t built = 0;
    // What the round left: its hang rows, which the views' answers filter, and what is kept
    // for the views from round to round.
    try {
      built = WarmViews(
          snap, settings_, cache_, &budget_, views, kMaxViews,
          [&] {
            if (views_hook_for_testing_) views_hook_for_testing_();
            MutexLock lock(mu_);
            const bool overdue = Now() - views_started > round_took;
            stopped = stopping_ || (offered_ != nullptr && (may_skip || overdue));
            return stopped;
          },
          &carry_);
    } catch (const std::exception& e) {  // as above: those not built are built on request
      carry_.DropViews();
      spdlog::warn("warm-up: building the views in use failed ({})", e.what());
    }
    {
      MutexLock lock(mu_);
      counts_.views_built += built;
      counts_.views_brought = carry_.views_brought;
      counts_.views_from_kept = carry_.views_from_kept;
      counts_.views_cpu_ms += ThreadCpuMs() - views_cpu_started;
      if (!stopped) views_warmed_ = snap;
      views_serving = views_warmed_;
    }
    cache_.Protect(snap, nullptr, views_serving);
  }
  carry_ = WarmCarry{};  // its hold goes back to the budget, which may not outlive this object
}

}  // namespace seismo
