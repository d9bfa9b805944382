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
// stored answer, and an answer of an older snapshot (by built_at_ms) is not stored. The snapshot is watched
// through a weak_ptr: the cache never keeps a replaced snapshot's tables alive, and an expired one never
// compares equal. Only answers that are a function of (snapshot, path, query) belong here — not /status (wall
// clock, counters) and not /alerts (the alert engine's own state). Bounds: at most `max_bytes` of stored
// bodies; beyond that, answers are computed and not kept. Threading: Get() from any thread; compute() runs
// outside the lock (two threads asking for the same new answer may both compute it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "seismo/aggregate/snapshot.h"

namespace seismo {

template <typename Answer>
class AnswerCache {
 public:
  explicit AnswerCache(size_t max_bytes = 16u << 20) : max_bytes_(max_bytes) {}

  // The stored answer, or null (nothing is computed).
  std::shared_ptr<const Answer> Find(const std::shared_ptr<const Snapshot>& snap, const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    if (snap != snap_.lock()) return nullptr;
    auto it = answers_.find(key);
    if (it == answers_.end()) return nullptr;
    ++hits_;
    return it->second;
  }

  std::shared_ptr<const Answer> Get(const std::shared_ptr<const Snapshot>& snap, const std::string& key,
                                    const std::function<Answer()>& compute) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (snap == snap_.lock()) {
        auto it = answers_.find(key);
        if (it != answers_.end()) {
          ++hits_;
          return it->second;
        }
      }
    }
    auto answer = std::make_shared<const Answer>(compute());
    std::lock_guard<std::mutex> lock(mu_);
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
    std::lock_guard<std::mutex> lock(mu_);
    return hits_;
  }

 private:
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::weak_ptr<const Snapshot> snap_;
  std::unordered_map<std::string, std::shared_ptr<const Answer>> answers_;
  size_t bytes_ = 0;
  uint64_t hits_ = 0;
};

}  // namespace seismo
