// Watermarks against hand-worked sequences: which documents are believed, when,
// and where stream time stands (ADR 0017).
#include "seismo/shard/watermarks.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace seismo {
namespace {

constexpr int64_t kMin = 60'000;
constexpr int64_t kSkew = 10 * kMin;
constexpr int64_t kT0 = 1'790'812'800'000;  // 2026-10-01T00:00:00Z
constexpr int64_t kYear = 365LL * 24 * 60 * kMin;

// Feeds one source's documents; ids are positions in the input.
class Feed {
 public:
  explicit Feed(Watermarks& w, SourceKey key = {}, bool live = false, int64_t now = 0)
      : w_(w), key_(key), live_(live), now_(now) {}
  uint64_t Add(std::optional<int64_t> t) {
    w_.Add(next_, key_, t, live_, now_, decided_);
    return next_++;
  }
  void End() { w_.End(key_, now_, decided_); }
  // Decisions so far, by id: accepted time, or nullopt for future_time; absent = still held.
  std::optional<std::optional<int64_t>> Fate(uint64_t id) const {
    for (const TimeDecision& d : decided_) {
      if (d.id == id) return d.accepted ? std::optional<int64_t>(d.time_ms) : std::nullopt;
    }
    return std::nullopt;
  }
  bool Held(uint64_t id) const { return !Fate(id).has_value(); }
  bool Accepted(uint64_t id) const { return Fate(id).has_value() && Fate(id)->has_value(); }
  bool Future(uint64_t id) const { return Fate(id).has_value() && !Fate(id)->has_value(); }
  const std::vector<TimeDecision>& decided() const { return decided_; }

 private:
  Watermarks& w_;
  SourceKey key_;
  bool live_;
  int64_t now_;
  uint64_t next_ = 0;
  std::vector<TimeDecision> decided_;
};

TEST(Watermarks, LiveDocumentsAreJudgedAgainstTheWallClockOnly) {
  Watermarks w(kSkew);
  Feed f(w, {1, 0}, /*live=*/true, /*now=*/kT0);
  const uint64_t at_limit = f.Add(kT0 + kSkew);
  const uint64_t beyond = f.Add(kT0 + kSkew + 1);
  const uint64_t old = f.Add(kT0 - 30 * 24 * 60 * kMin);  // a backlog: never "future"
  const uint64_t timeless = f.Add(std::nullopt);
  EXPECT_EQ(f.Fate(at_limit), std::optional<int64_t>(kT0 + kSkew));
  EXPECT_TRUE(f.Future(beyond));
  EXPECT_TRUE(f.Accepted(old));
  EXPECT_EQ(f.Fate(timeless), std::optional<int64_t>(kT0));  // the wall clock
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + kSkew);
}

TEST(Watermarks, AnOrderedArchiveIsAcceptedAndStreamTimeFollowsIt) {
  Watermarks w(kSkew);
  Feed f(w);
  for (int i = 0; i < 20; ++i) f.Add(kT0 + i * kMin);
  // The first seven wait for the first reference (their median, kT0 + 3 min), then all go.
  EXPECT_EQ(f.decided().size(), 20u);
  for (uint64_t id = 0; id < 20; ++id) EXPECT_EQ(f.Fate(id), std::optional<int64_t>(kT0 + id * kMin)) << id;
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 19 * kMin);
}

// The repro in small: one document years ahead at the end of a file.
TEST(Watermarks, ADocumentFarAheadAtTheEndOfAFileIsFutureAndMovesNothing) {
  Watermarks w(kSkew);
  Feed f(w);
  for (int i = 0; i < 10; ++i) f.Add(kT0 + i * kMin);
  const uint64_t outlier = f.Add(kT0 + 4 * kYear);
  EXPECT_TRUE(f.Held(outlier));
  f.End();
  EXPECT_TRUE(f.Future(outlier));
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 9 * kMin);
}

TEST(Watermarks, ADocumentFarAheadInTheMiddleIsFutureOnceFourLaterOnesContradictIt) {
  Watermarks w(kSkew);
  Feed f(w);
  for (int i = 0; i < 10; ++i) f.Add(kT0 + i * kMin);
  const uint64_t outlier = f.Add(kT0 + 4 * kYear);
  for (int i = 10; i < 13; ++i) f.Add(kT0 + i * kMin);
  EXPECT_TRUE(f.Held(outlier));  // three contradict it so far
  f.Add(kT0 + 13 * kMin);
  EXPECT_TRUE(f.Future(outlier));
  for (uint64_t id = 0; id < 15; ++id) {
    if (id != outlier) EXPECT_TRUE(f.Accepted(id)) << id;  // the others were never held up
  }
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 13 * kMin);
}

TEST(Watermarks, AFewDocumentsAheadTogetherAreFutureWhenTheDataDoesNotFollowThem) {
  Watermarks w(kSkew);
  Feed f(w);
  for (int i = 0; i < 10; ++i) f.Add(kT0 + i * kMin);
  // Three from one broken clock, one after another: each confirms the others twice at most.
  const uint64_t a = f.Add(kT0 + kYear), b = f.Add(kT0 + kYear + kMin), c = f.Add(kT0 + kYear + 2 * kMin);
  for (int i = 10; i < 14; ++i) f.Add(kT0 + i * kMin);
  EXPECT_TRUE(f.Future(a));
  EXPECT_TRUE(f.Future(b));
  EXPECT_TRUE(f.Future(c));
}

// A gap: the archive has nothing for two days, then goes on. The first document after
// the gap waits for four more, which confirm it; the rest follow it within max_skew.
TEST(Watermarks, TheBulkOfTheDataMovesStreamTimeAcrossAGap) {
  Watermarks w(kSkew);
  Feed f(w);
  for (int i = 0; i < 10; ++i) f.Add(kT0 + i * kMin);
  const int64_t later = kT0 + 2 * 24 * 60 * kMin;
  const uint64_t first_after = f.Add(later);
  for (int i = 1; i < 4; ++i) f.Add(later + i * kMin);
  EXPECT_TRUE(f.Held(first_after));
  const uint64_t fourth = f.Add(later + 4 * kMin);
  EXPECT_EQ(f.Fate(first_after), std::optional<int64_t>(later));
  for (uint64_t id = first_after; id <= fourth; ++id) EXPECT_TRUE(f.Accepted(id)) << id;
  w.Advance();
  EXPECT_EQ(w.stream_time(), later + 4 * kMin);
}

// Sparse data (a document every 20 minutes): each waits for the next four.
TEST(Watermarks, SparseDocumentsAreKeptWhenTheDocumentsAfterThemFollow) {
  Watermarks w(kSkew);
  Feed f(w);
  for (int i = 0; i < 30; ++i) f.Add(kT0 + i * 20 * kMin);
  f.End();
  // The last four have fewer than four documents after them when the file ends.
  for (uint64_t id = 0; id < 26; ++id) EXPECT_TRUE(f.Accepted(id)) << id;
  for (uint64_t id = 26; id < 30; ++id) EXPECT_TRUE(f.Future(id)) << id;
}

TEST(Watermarks, OneDocumentFarAheadAtTheStartOfAnInputIsFuture) {
  Watermarks w(kSkew);
  Feed f(w);
  const uint64_t outlier = f.Add(kT0 + 4 * kYear);
  for (int i = 0; i < 12; ++i) f.Add(kT0 + i * kMin);
  // The first seven's median is kT0 + 3 min: the outlier is held, and contradicted.
  EXPECT_TRUE(f.Future(outlier));
  for (uint64_t id = 1; id <= 12; ++id) EXPECT_TRUE(f.Accepted(id)) << id;
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 11 * kMin);
}

TEST(Watermarks, ShortInputsAreJudgedWhenTheyEnd) {
  {
    Watermarks w(kSkew);
    Feed f(w);
    const uint64_t only = f.Add(kT0);
    EXPECT_TRUE(f.Held(only));
    f.End();
    EXPECT_EQ(f.Fate(only), std::optional<int64_t>(kT0));
  }
  {
    Watermarks w(kSkew);
    Feed f(w);
    const uint64_t outlier = f.Add(kT0 + kYear), normal = f.Add(kT0);
    f.End();  // lower median of the two: kT0
    EXPECT_TRUE(f.Future(outlier));
    EXPECT_TRUE(f.Accepted(normal));
  }
  {
    Watermarks w(kSkew);
    Feed f(w);
    const uint64_t a = f.Add(kT0), b = f.Add(kT0 + 5 * kMin), c = f.Add(kT0 + 3 * kMin);
    f.End();
    EXPECT_TRUE(f.Accepted(a) && f.Accepted(b) && f.Accepted(c));
  }
}

TEST(Watermarks, ADocumentWithoutTimeTakesItsSourcesWatermark) {
  Watermarks w(kSkew);
  Feed f(w);
  const uint64_t before_any = f.Add(std::nullopt);
  EXPECT_EQ(f.Fate(before_any), std::optional<int64_t>(0));  // nothing known: the wall clock (0 here)
  for (int i = 0; i < 8; ++i) f.Add(kT0 + i * kMin);
  const uint64_t timeless = f.Add(std::nullopt);
  EXPECT_EQ(f.Fate(timeless), std::optional<int64_t>(kT0 + 7 * kMin));
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 7 * kMin);
}

// Several sources: the slowest active one holds stream time back; an idle one does not;
// with none active, stream time is the furthest any source got. It never moves back.
TEST(Watermarks, StreamTimeIsTheMinimumOverActiveSources) {
  Watermarks w(kSkew);
  const int64_t now = kT0 + 60 * kMin;
  Feed p0(w, {1, 0}, true, now), p1(w, {1, 1}, true, now), p2(w, {1, 2}, true, now);
  p0.Add(kT0 + 50 * kMin);
  p1.Add(kT0 + 20 * kMin);
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 20 * kMin);
  p2.Add(kT0 + 10 * kMin);  // joins behind: stream time stays
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 20 * kMin);
  w.Idle({1, 1});
  w.Idle({1, 2});
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 50 * kMin);  // p0 alone
  p1.Add(kT0 + 30 * kMin);                      // p1 has data again
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 50 * kMin);  // never back
  w.Idle({1, 0});
  w.Idle({1, 1});
  p0.Add(kT0 + 55 * kMin);
  p1.Add(kT0 + 58 * kMin);
  w.Idle({1, 0});
  w.Idle({1, 1});
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 58 * kMin);  // all idle: the furthest
}

// Files read one after another: the next day's file is confirmed by its own documents;
// the first document of a file is judged against the stream time the earlier ones left.
TEST(Watermarks, AFileAfterAnotherStartsFromTheStreamTimeTheFirstLeft) {
  Watermarks w(kSkew);
  Feed day1(w, {0, -1}), day2(w, {1, -1}), stray(w, {2, -1});
  for (int i = 0; i < 10; ++i) day1.Add(kT0 + i * kMin);
  day1.End();
  w.Advance();
  EXPECT_EQ(w.stream_time(), kT0 + 9 * kMin);
  const int64_t next_day = kT0 + 24 * 60 * kMin;
  const uint64_t first = day2.Add(next_day);
  EXPECT_TRUE(day2.Held(first));
  for (int i = 1; i < 5; ++i) day2.Add(next_day + i * kMin);
  EXPECT_TRUE(day2.Accepted(first));
  day2.End();
  w.Advance();
  EXPECT_EQ(w.stream_time(), next_day + 4 * kMin);
  const uint64_t lone = stray.Add(next_day + kYear);  // a one-line file far ahead
  stray.End();
  EXPECT_TRUE(stray.Future(lone));
}

TEST(Watermarks, SettleDecidesHeldDocumentsOnTheEvidenceSoFar) {
  Watermarks w(kSkew);
  Feed f(w);
  for (int i = 0; i < 8; ++i) f.Add(kT0 + i * kMin);
  const uint64_t ahead = f.Add(kT0 + 3 * 60 * kMin);
  EXPECT_EQ(w.held(), 1u);
  std::vector<TimeDecision> out;
  w.Settle(0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, ahead);
  EXPECT_FALSE(out[0].accepted);
  EXPECT_EQ(w.held(), 0u);
}

TEST(Watermarks, ARestoredStreamTimeIsTheFirstReference) {
  Watermarks w(kSkew);
  w.Restore(kT0);
  Feed f(w);
  const uint64_t in_line = f.Add(kT0 + 5 * kMin);  // judged at once: no first-documents wait
  const uint64_t ahead = f.Add(kT0 + kYear);
  EXPECT_TRUE(f.Accepted(in_line));
  EXPECT_TRUE(f.Held(ahead));
}

}  // namespace
}  // namespace seismo
