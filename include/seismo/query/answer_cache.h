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
// only while that same snapshot is the one asked about; a new snapshot drops every
// stored answer, and an answer of an older snapshot (by built_at_ms) is not stored. The
// snapshot is watched through a weak_ptr: the cache never keeps a replaced snapshot's
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
    if (snap != snap_.lock()) return nullptr;
    auto it = answers_.find(key);
    if (it == answers_.end()) return nullptr;
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
      if (snap == snap_.lock()) {
        auto it = answers_.find(key);
        if (it != answers_.end()) {
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
    if (const auto current = snap_.lock(); snap != current) {  // the answers of one snapshot at a time
      // A request that held the previous snapshot while the next one was published (and
      // its answers built) does not throw the newer answers away.
      if (current && snap->built_at_ms < current->built_at_ms) return answer;
      snap_ = snap;
      answers_.clear();
      bytes_ = 0;
    }
    const size_t size = key.size() + answer->body.size();
    if (bytes_ + size <= max_bytes_ && answers_.emplace(key, answer).second) bytes_ += size;
    return answer;
  }

  uint64_t hits() const {
    MutexLock lock(mu_);
    return hits_;
  }

 private:
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
  std::weak_ptr<const Snapshot> snap_ GUARDED_BY(mu_);
  std::unordered_map<std::string, std::shared_ptr<const Answer>> answers_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
  uint64_t hits_ = 0;
};

}  // namespace seismo
