// Watermarks: stream time (SPEC §4) and, per document, whether its event time
// is believed (ADR 0017).
//
//   source (file, or Kafka partition)      per source s: w(s) = the largest accepted event time
//   ──t──> Add(id, s, t) ──> accept / hold / future_time
//                                          stream time W = max(W, min{ w(s) : s active })
//                                                     or, when no source is active,
//                                                        max(W, max{ w(s) : every s })
//
// Active: the source has accepted a document and has not gone idle since: a file
// at its end, a partition with nothing left to read, a partition given up (Idle,
// End). A document of an idle source makes it active again. Stream time never
// moves back.
//
// Future (reason future_time; the document moves nothing):
//  * live source (Kafka): t > now + max_skew (the wall clock passed in).
//  * archive source (file): t > ref + max_skew, where ref = w(s), or W for a source
//    that has accepted nothing yet. Such a document is held, not rejected at once:
//    it is kept when kConfirm of the documents after it in its source are at most
//    max_skew before it or later (the bulk of the data moved there: a gap, the
//    next day's file), and rejected when kConfirm are not (one document, or a few,
//    ahead of everything around them). It is also kept as soon as w(s) comes
//    within max_skew of it. When the source ends, or Settle() is called, before
//    the documents after it decide, it is rejected.
//  * the first documents of an input (no W, no w(s)): the first 2·kConfirm-1
//    timed documents of the source wait; the median (lower) of their times is
//    the reference they are judged against as above, so one document far ahead
//    at the very start does not become stream time.
//
// A document without an event time takes w(s), else W, else (nothing is known
// yet) the wall clock; it never moves w(s). Live sources take the wall clock.
//
// Decisions depend only on the order of Add/Idle/End/Settle calls and, for live
// sources, on `now_ms`: never on threads. Documents are named by caller ids;
// every id added is decided exactly once (in `out` of that call or of a later one).
//
// Ownership: plain value. Threading: not thread-safe; the pipeline calls it from
// one chunk's turn at a time.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace seismo {

// A source of documents: a file, or one partition of a topic (index into the
// pipeline's sources; partition -1 for files).
struct SourceKey {
  uint16_t source = 0;
  int32_t partition = -1;
  auto operator<=>(const SourceKey&) const = default;
};

struct TimeDecision {
  uint64_t id = 0;
  bool accepted = false;  // false: future_time
  int64_t time_ms = 0;    // the event time to aggregate the document at (accepted only)
};

class Watermarks {
 public:
  // Confirmations (or contradictions) that decide a held document.
  static constexpr uint32_t kConfirm = 4;

  explicit Watermarks(int64_t max_skew_ms) : max_skew_ms_(max_skew_ms) {}

  // Continue from a restored state's stream time.
  void Restore(int64_t stream_time_ms);
  // Continue `source` from its restored w(source) (a partition-scoped checkpoint's):
  // idle until its next document, which is judged against it.
  void RestoreSource(SourceKey source, int64_t w_ms);

  // Document `id` of `source`, in input order; `t` its event time, if it has one.
  // Decisions made by this call (for `id` or held documents) are appended to `out`.
  void Add(uint64_t id, SourceKey source, std::optional<int64_t> t, bool live, int64_t now_ms,
           std::vector<TimeDecision>& out);
  // `source` has nothing more to read for now: it stops holding stream time back.
  void Idle(SourceKey source);
  // `source` has ended (end of file, partition given up): its held documents are
  // decided on the evidence there is, then it is idle.
  void End(SourceKey source, int64_t now_ms, std::vector<TimeDecision>& out);
  // `source` leaves (a revoked partition whose state moves to another instance): it is
  // forgotten, as if never seen; false (and nothing changes) while it holds documents.
  bool Forget(SourceKey source);
  // Every held document is decided on the evidence there is (checkpoint barrier).
  void Settle(int64_t now_ms, std::vector<TimeDecision>& out);
  // The input ends: Settle(), and every source is idle.
  void EndInput(int64_t now_ms, std::vector<TimeDecision>& out);
  // Recomputes stream time from the sources (call after a batch of Add/Idle/End).
  void Advance();

  // W in ms; INT64_MIN before any document was accepted.
  int64_t stream_time() const { return stream_time_ms_; }
  // w(source) in ms, the largest event time it accepted: a partition's own stream time
  // (ADR 0024); INT64_MIN before its first.
  int64_t source_time(SourceKey source) const;
  size_t held() const;

 private:
  struct Held {
    uint64_t id = 0;
    std::optional<int64_t> t;  // nullopt: no event time (waits with the first documents)
    uint32_t support = 0;      // later documents of the source at most max_skew before it, or later
    uint32_t against = 0;      // later documents of the source further before it
  };
  struct Source {
    int64_t w = INT64_MIN;  // largest accepted event time
    bool active = false;
    bool first = true;       // still collecting its first documents (no reference yet)
    std::vector<Held> held;  // in input order
  };

  void Accept(Source& s, uint64_t id, int64_t t, std::vector<TimeDecision>& out);
  // Decides what the evidence decides; `final` decides everything left.
  void Resolve(Source& s, bool final, int64_t now_ms, std::vector<TimeDecision>& out);
  // The first documents are judged against the (lower) median of their times.
  void EndFirst(Source& s, int64_t now_ms, std::vector<TimeDecision>& out);
  int64_t TimeWithout(const Source& s, int64_t now_ms) const;

  int64_t max_skew_ms_;
  int64_t stream_time_ms_ = INT64_MIN;
  std::map<SourceKey, Source> sources_;
};

}  // namespace seismo
