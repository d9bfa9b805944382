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
// only for that same snapshot. The answers of the two newest snapshots (by built_at_ms)
// are kept: the publisher builds the next snapshot's answers before it publishes it
// (ADR 0025), while requests still read the current one. A third snapshot's answers
// replace the oldest's, and an answer of a snapshot older than both is not stored. The
// snapshots are watched through weak_ptrs: the cache never keeps a replaced snapshot's
// tables alive, and an expired one never compares equal. Only answers that are a
// function of (snapshot, path, query) belong here — not /status (wall clock, counters)
// and not /alerts (the alert engine's own state).
// Bounds: at most `max_bytes` of stored bodies; beyond that, answers are computed and
// not kept.
// Threading: Get() and Find() from any thread; compute() runs outside the lock. A thread
// asking for an answer another thread is computing for the same snapshot waits for it
// (the first request after a publish waits for the publisher's warm-up instead of
// computing beside it).
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

  // The generation that stores `snap`'s answers: its own, else the one of an expired or
  // the older snapshot (emptied for it), else null when `snap` is older than both.
  Generation* GenerationFor(const std::shared_ptr<const Snapshot>& snap) REQUIRES(mu_) {
    if (Generation* g = GenerationOf(snap)) return g;
    Generation* victim = nullptr;
    int64_t victim_built_at = INT64_MAX;
    for (Generation& g : generations_) {
      const auto kept = g.snap.lock();
      const int64_t built_at = kept ? kept->built_at_ms : INT64_MIN;
      if (built_at < victim_built_at || victim == nullptr) {
        victim = &g;
        victim_built_at = built_at;
      }
    }
    if (snap->built_at_ms < victim_built_at) return nullptr;
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
  std::array<Generation, 2> generations_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;  // of both generations
  uint64_t hits_ = 0;
};

}  // namespace seismo
