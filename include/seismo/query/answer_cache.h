// AnswerCache: API answers computed from one published snapshot, reused until the
// next snapshot is published. A dashboard's views poll the same few URLs, and a
// snapshot changes every `publish_interval` (500 ms by default): without the cache
// every viewer rebuilds the same answer from the merged tables, which costs tens of
// milliseconds for the hang endpoints on a busy daemon.
//
//   AnswerCache cache;
//   auto a = cache.Get(snap, "/api/v1/hangs?window=1h", [&] { return Compute(); });
//   auto b = cache.Find(snap, "/api/v1/hangs?window=1h");  // null unless stored
//
// Correctness: answers are stored with the snapshot they were computed from and served
// only for that same snapshot. Four snapshots' answers are kept: the newest snapshot
// whose default answers are built (requests for those are served from it), the one they
// are being built for, the one the views in use were last all built over (ADR 0035: it may
// be older than the first while they are built), and the newest published, which the other
// requests read (ADR 0025). The first three are named by Protect() and never give up their
// place; a snapshot
// that is neither replaces the oldest unprotected one's answers, and an answer of a
// snapshot older than every kept one is not stored. The snapshots are watched through
// weak_ptrs: the cache never keeps a replaced snapshot's tables alive, and an expired one
// never compares equal. Only answers that are a
// function of (snapshot, path, query) belong here — not /status (wall clock, counters)
// and not /alerts (the alert engine's own state).
// Bounds: at most `max_bytes` of stored bodies; beyond that, answers are computed and
// not kept.
// Threading: Get() and Find() from any thread; compute() runs outside the lock. A thread
// asking for an answer another thread is computing for the same snapshot waits for it
// (a request never computes beside the warm-up what the warm-up is computing).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <unordered_map>

#include "seismo/aggregate/snapshot.h"
#include "seismo/core/mutex.h"

namespace seismo {

template <typename Answer>
class AnswerCache {
 public:
  explicit AnswerCache(size_t max_bytes = 16u << 20) : max_bytes_(max_bytes) {}

  // The stored answer, or null (nothing is computed).
  std::shared_ptr<const Answer> Find(const std::shared_ptr<const Snapshot>& snap, const std::string& key) {
    MutexLock lock(mu_);
    Generation* g = GenerationOf(snap);
    if (g == nullptr) return nullptr;
    auto it = g->answers.find(key);
    if (it == g->answers.end()) return nullptr;
    ++hits_;
    return it->second;
  }

  // The answer for `key` of the newest kept snapshot built at `not_before_ms` or later (null
  // when none holds it): what a request is served while its newest snapshot's is not built,
  // never older than a snapshot the caller names, and never older than another kept one.
  std::shared_ptr<const Answer> FindNewest(const std::string& key, int64_t not_before_ms) {
    MutexLock lock(mu_);
    std::shared_ptr<const Answer> best;
    int64_t best_at = INT64_MIN;
    for (Generation& g : generations_) {
      const auto kept = g.snap.lock();
      if (!kept || kept->built_at_ms < not_before_ms || (best && kept->built_at_ms <= best_at)) continue;
      auto it = g.answers.find(key);
      if (it == g.answers.end()) continue;
      best = it->second;
      best_at = kept->built_at_ms;
    }
    if (best) ++hits_;
    return best;
  }

  // Whether `snap`'s answer for `key` is stored, without counting a hit (the warm-up's check
  // before it builds one: hits() counts the answers served).
  bool Holds(const std::shared_ptr<const Snapshot>& snap, const std::string& key) {
    MutexLock lock(mu_);
    const Generation* g = GenerationOf(snap);
    return g != nullptr && g->answers.contains(key);
  }

  std::shared_ptr<const Answer> Get(const std::shared_ptr<const Snapshot>& snap, const std::string& key,
                                    const std::function<Answer()>& compute) {
    std::promise<std::shared_ptr<const Answer>> promise;
    std::shared_future<std::shared_ptr<const Answer>> pending;
    uint64_t ticket = 0;
    {
      MutexLock lock(mu_);
      if (Generation* g = GenerationOf(snap)) {
        auto it = g->answers.find(key);
        if (it != g->answers.end()) {
          ++hits_;
          return it->second;
        }
      }
      // Being computed for this snapshot (the publisher's warm-up, or another request):
      // wait for that answer rather than compute it again beside it.
      auto c = computing_.find(key);
      if (c != computing_.end() && c->second.snap == snap.get()) {
        ++hits_;
        pending = c->second.answer;
      } else {
        ticket = ++tickets_;
        computing_[key] = {snap.get(), ticket, promise.get_future().share()};
      }
    }
    if (pending.valid()) return pending.get();
    std::shared_ptr<const Answer> answer;
    try {
      answer = std::make_shared<const Answer>(compute());
    } catch (...) {
      promise.set_exception(std::current_exception());
      Forget(key, ticket);
      throw;
    }
    promise.set_value(answer);
    Forget(key, ticket);
    MutexLock lock(mu_);
    Generation* g = GenerationFor(snap);
    if (g == nullptr) return answer;  // older than both kept snapshots: answered, not stored
    const size_t size = key.size() + answer->body.size();
    if (bytes_ + size <= max_bytes_ && g->answers.emplace(key, answer).second) {
      bytes_ += size;
      g->bytes += size;
    }
    return answer;
  }

  // The snapshots whose answers stay whatever newer snapshots arrive (any may be null): the
  // one requests for default answers are served from, the one being warmed, and the one the
  // views in use are served from.
  void Protect(const std::shared_ptr<const Snapshot>& serving, const std::shared_ptr<const Snapshot>& warming,
               const std::shared_ptr<const Snapshot>& views = nullptr) {
    MutexLock lock(mu_);
    protected_ = {serving, warming, views};
  }

  // Whether `snap` is one of the snapshots Protect() named: its answers stay while it is.
  bool Protects(const std::shared_ptr<const Snapshot>& snap) const {
    MutexLock lock(mu_);
    return IsProtected(snap);
  }

  uint64_t hits() const {
    MutexLock lock(mu_);
    return hits_;
  }

 private:
  // The answers of one snapshot.
  struct Generation {
    std::weak_ptr<const Snapshot> snap;
    std::unordered_map<std::string, std::shared_ptr<const Answer>> answers;
    size_t bytes = 0;
  };

  Generation* GenerationOf(const std::shared_ptr<const Snapshot>& snap) REQUIRES(mu_) {
    if (!snap) return nullptr;
    for (Generation& g : generations_) {
      if (g.snap.lock() == snap) return &g;
    }
    return nullptr;
  }

  bool IsProtected(const std::shared_ptr<const Snapshot>& snap) const REQUIRES(mu_) {
    for (const auto& p : protected_) {
      if (snap && p.lock() == snap) return true;
    }
    return false;
  }

  // The generation that stores `snap`'s answers: its own, else the one of an expired or
  // the oldest unprotected snapshot (emptied for it), else null when `snap` is unprotected
  // and older than that one.
  Generation* GenerationFor(const std::shared_ptr<const Snapshot>& snap) REQUIRES(mu_) {
    if (Generation* g = GenerationOf(snap)) return g;
    Generation* victim = nullptr;
    int64_t victim_built_at = INT64_MAX;
    for (Generation& g : generations_) {
      const auto kept = g.snap.lock();
      if (IsProtected(kept)) continue;
      const int64_t built_at = kept ? kept->built_at_ms : INT64_MIN;
      if (built_at < victim_built_at || victim == nullptr) {
        victim = &g;
        victim_built_at = built_at;
      }
    }
    if (victim == nullptr || (snap->built_at_ms < victim_built_at && !IsProtected(snap))) return nullptr;
    victim->snap = snap;
    victim->answers.clear();
    bytes_ -= victim->bytes;
    victim->bytes = 0;
    return victim;
  }

  // Answers being computed: a snapshot's (compared by address while its computer holds it).
  struct Computing {
    const Snapshot* snap = nullptr;
    uint64_t ticket = 0;
    std::shared_future<std::shared_ptr<const Answer>> answer;
  };

  void Forget(const std::string& key, uint64_t ticket) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    auto c = computing_.find(key);
    if (c != computing_.end() && c->second.ticket == ticket) computing_.erase(c);
  }

  const size_t max_bytes_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Computing> computing_ GUARDED_BY(mu_);
  uint64_t tickets_ GUARDED_BY(mu_) = 0;
  std::array<Generation, 4> generations_ GUARDED_BY(mu_);
  std::array<std::weak_ptr<const Snapshot>, 3> protected_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;  // of every generation
  uint64_t hits_ = 0;
};

}  // namespace seismo
