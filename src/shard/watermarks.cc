#include "seismo/shard/watermarks.h"

#include <algorithm>

namespace seismo {

void Watermarks::Restore(int64_t stream_time_ms) {
  stream_time_ms_ = std::max(stream_time_ms_, stream_time_ms);
}

void Watermarks::RestoreSource(SourceKey source, int64_t w_ms) {
  if (w_ms == INT64_MIN) return;
  Source& s = sources_[source];
  s.w = std::max(s.w, w_ms);
  s.first = false;
}

bool Watermarks::Forget(SourceKey source) {
  auto it = sources_.find(source);
  if (it == sources_.end()) return true;
  if (!it->second.held.empty()) return false;
  sources_.erase(it);
  return true;
}

size_t Watermarks::held() const {
  size_t n = 0;
  for (const auto& [key, s] : sources_) n += s.held.size();
  return n;
}

int64_t Watermarks::TimeWithout(const Source& s, int64_t now_ms) const {
  if (s.w != INT64_MIN) return s.w;
  if (stream_time_ms_ != INT64_MIN) return stream_time_ms_;
  return now_ms;
}

void Watermarks::Accept(Source& s, uint64_t id, int64_t t, std::vector<TimeDecision>& out) {
  out.push_back({id, true, t});
  s.w = std::max(s.w, t);
}

void Watermarks::Add(uint64_t id, SourceKey key, std::optional<int64_t> t, bool live, int64_t now_ms,
                     std::vector<TimeDecision>& out) {
  auto [it, created] = sources_.try_emplace(key);
  Source& s = it->second;
  if (created) s.first = !live && stream_time_ms_ == INT64_MIN;
  s.active = true;
  if (!t) {
    out.push_back({id, true, live ? now_ms : TimeWithout(s, now_ms)});
    return;
  }
  if (live) {
    if (*t > now_ms + max_skew_ms_) {
      out.push_back({id, false, 0});
    } else {
      Accept(s, id, *t, out);
    }
    return;
  }
  for (Held& h : s.held) ++(*t >= *h.t - max_skew_ms_ ? h.support : h.against);
  if (s.first) {
    s.held.push_back({id, t});
    if (s.held.size() >= 2 * kConfirm - 1) EndFirst(s, now_ms, out);
    return;
  }
  const int64_t ref = s.w != INT64_MIN ? s.w : stream_time_ms_;
  if (ref != INT64_MIN && *t <= ref + max_skew_ms_) {
    Accept(s, id, *t, out);
  } else {
    s.held.push_back({id, t});
  }
  Resolve(s, /*final=*/false, now_ms, out);
}

void Watermarks::EndFirst(Source& s, int64_t now_ms, std::vector<TimeDecision>& out) {
  s.first = false;
  if (s.held.empty()) return;
  std::vector<int64_t> times;
  for (const Held& h : s.held) times.push_back(*h.t);
  std::nth_element(times.begin(), times.begin() + static_cast<ptrdiff_t>((times.size() - 1) / 2),
                   times.end());
  const int64_t median = times[(times.size() - 1) / 2];
  std::vector<Held> rest;
  for (const Held& h : s.held) {
    if (*h.t <= median + max_skew_ms_) {
      Accept(s, h.id, *h.t, out);
    } else {
      rest.push_back(h);
    }
  }
  s.held = std::move(rest);
  Resolve(s, /*final=*/false, now_ms, out);
}

void Watermarks::Resolve(Source& s, bool final, int64_t now_ms, std::vector<TimeDecision>& out) {
  if (s.first) {
    if (!final) return;
    EndFirst(s, now_ms, out);  // resolves what the first documents' reference decides
  }
  // Accepting a document raises w(s), which may bring later ones within max_skew: repeat
  // until nothing changes. Every pass removes a document or stops.
  for (bool changed = true; changed;) {
    changed = false;
    const int64_t ref = s.w != INT64_MIN ? s.w : stream_time_ms_;
    for (auto h = s.held.begin(); h != s.held.end();) {
      if ((ref != INT64_MIN && *h->t <= ref + max_skew_ms_) || h->support >= kConfirm) {
        Accept(s, h->id, *h->t, out);
        s.held.erase(h);
        changed = true;
        break;
      }
      if (h->against >= kConfirm || final) {
        out.push_back({h->id, false, 0});
        h = s.held.erase(h);
        continue;
      }
      ++h;
    }
  }
}

void Watermarks::Idle(SourceKey key) {
  auto it = sources_.find(key);
  if (it != sources_.end()) it->second.active = false;
}

void Watermarks::End(SourceKey key, int64_t now_ms, std::vector<TimeDecision>& out) {
  auto it = sources_.find(key);
  if (it == sources_.end()) return;
  Resolve(it->second, /*final=*/true, now_ms, out);
  it->second.active = false;
}

void Watermarks::Settle(int64_t now_ms, std::vector<TimeDecision>& out) {
  for (auto& [key, s] : sources_) Resolve(s, /*final=*/true, now_ms, out);
}

void Watermarks::EndInput(int64_t now_ms, std::vector<TimeDecision>& out) {
  Settle(now_ms, out);
  for (auto& [key, s] : sources_) s.active = false;
}

void Watermarks::Advance() {
  int64_t min_active = INT64_MAX;
  int64_t max_all = INT64_MIN;
  for (const auto& [key, s] : sources_) {
    if (s.w == INT64_MIN) continue;
    max_all = std::max(max_all, s.w);
    if (s.active) min_active = std::min(min_active, s.w);
  }
  const int64_t combined = min_active != INT64_MAX ? min_active : max_all;
  stream_time_ms_ = std::max(stream_time_ms_, combined);
}

int64_t Watermarks::source_time(SourceKey source) const {
  auto it = sources_.find(source);
  return it == sources_.end() ? INT64_MIN : it->second.w;
}

}  // namespace seismo
