// Event times from the future are clamped to now + max_clock_skew, so a bad
// client clock cannot push stream time (and every window) ahead of reality.
#include <gtest/gtest.h>

#include "seismo/shard/pipeline.h"

namespace seismo {
namespace {

class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t ms) : now_(ms) {}
  EventTime Now() const override { return EventTime{now_}; }

 private:
  int64_t now_;
};

std::string Ping(const std::string& submitted, int64_t seconds) {
  return R"({"type":"main","submission_timestamp":")" + submitted +
         R"(","application":{"buildId":"20261117090501"},"payload":{"info":{"subsessionLength":)" +
         std::to_string(seconds) + "}}}";
}

TEST(ClockSkew, FutureEventTimesAreClampedToNowPlusSkew) {
  const int64_t now = ParseTimestamp("2026-11-20T12:00:00Z")->ms;
  ManualClock clock(now);
  PipelineOptions o;
  o.max_clock_skew_ms = 600'000;
  o.aggregate.windows_ms = {3'600'000};
  o.sources = {{"test", std::nullopt}};
  Symbols symbols;
  Pipeline p(o, &symbols, nullptr, nullptr, &clock);
  p.Start();
  auto chunk = std::make_unique<DocChunk>();
  for (const std::string& doc : {Ping("2026-11-20T11:30:00Z", 60),    // in the past: kept as is
                                 Ping("2031-01-01T00:00:00Z", 120)}) {  // five years ahead: clamped
    DocRef ref;
    ref.begin = static_cast<uint32_t>(chunk->data.size());
    ref.length = static_cast<uint32_t>(doc.size());
    chunk->data += doc;
    chunk->docs.push_back(ref);
  }
  p.Submit(std::move(chunk));
  p.Finish();
  EXPECT_EQ(p.stream_time().ms, now + 600'000);
  auto snap = p.FinalSnapshot();
  EXPECT_EQ(snap->stream_time_ms, now + 600'000);
  // Both pings are within the last hour of the clamped stream time.
  const SeriesData& usage = *snap->table(Table::kUsage).front();
  EXPECT_EQ(usage.total[0], 180'000);
  EXPECT_EQ(snap->Span(usage, *snap->SpanIndex(3'600'000))[0], 180'000);
}

}  // namespace
}  // namespace seismo
