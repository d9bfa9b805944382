// future_time through the pipeline (ADR 0017): an archive judges a document against its
// watermark, whatever the wall clock says; a live source judges it against the clock.
// Either way the document is counted, dead-lettered and moves nothing.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "seismo/shard/pipeline.h"
#include "test_clock.h"

namespace seismo {
namespace {

using test::ManualClock;

class RecordingSink final : public DeadLetterSink {
 public:
  void Write(const DeadLetter& letter) override {
    std::lock_guard<std::mutex> lock(mu_);
    letters.push_back({letter.reason, std::string(letter.document), letter.offset});
  }
  uint64_t failures() const override { return 0; }
  struct Letter {
    RejectReason reason;
    std::string document;
    int64_t offset;
  };
  std::vector<Letter> letters;

 private:
  std::mutex mu_;
};

std::string Ping(const std::string& submitted, int64_t seconds) {
  return R"({"type":"main","submission_timestamp":")" + submitted +
         R"(","application":{"buildId":"20261117090501"},"payload":{"info":{"subsessionLength":)" +
         std::to_string(seconds) + "}}}";
}

DocChunkPtr ChunkOf(const std::vector<std::string>& docs) {
  auto chunk = std::make_unique<DocChunk>();
  for (const std::string& doc : docs) {
    DocRef ref;
    ref.begin = static_cast<uint32_t>(chunk->data.size());
    ref.length = static_cast<uint32_t>(doc.size());
    ref.position = static_cast<int64_t>(chunk->docs.size()) + 1;
    chunk->data += doc;
    chunk->docs.push_back(ref);
  }
  return chunk;
}

const std::vector<std::string>& Pings() {
  static const std::vector<std::string> pings = {
      Ping("2026-11-20T11:00:00Z", 60), Ping("2026-11-20T11:01:00Z", 60),  Ping("2026-11-20T11:02:00Z", 60),
      Ping("2026-11-20T11:03:00Z", 60), Ping("2026-11-20T11:04:00Z", 60),  Ping("2026-11-20T11:05:00Z", 60),
      Ping("2026-11-20T11:06:00Z", 60), Ping("2031-01-01T00:00:00Z", 120),  // five years ahead
      Ping("2026-11-20T11:07:00Z", 60), Ping("2026-11-20T11:08:00Z", 60),  Ping("2026-11-20T11:09:00Z", 60),
      Ping("2026-11-20T11:10:00Z", 60)};
  return pings;
}

TEST(FutureTime, AnArchiveRejectsADocumentFarAheadOfItsWatermarkWhateverTheClock) {
  const int64_t last = ParseTimestamp("2026-11-20T11:10:00Z")->ms;
  for (const char* now : {"2021-01-01T00:00:00Z", "2026-11-20T11:10:00Z", "2036-01-01T00:00:00Z"}) {
    SCOPED_TRACE(now);
    ManualClock clock(ParseTimestamp(now)->ms);
    RecordingSink dead_letters;
    PipelineOptions o;
    o.max_clock_skew_ms = 600'000;
    o.aggregate.windows_ms = {3'600'000};
    o.sources = {{"archive.ndjson", std::nullopt}};
    Symbols symbols;
    Pipeline p(o, &symbols, nullptr, &dead_letters, &clock);
    p.Start();
    p.Submit(ChunkOf(Pings()));
    p.Finish();
    EXPECT_EQ(p.stream_time().ms, last);
    EXPECT_EQ(p.counters().rejected[static_cast<size_t>(RejectReason::kFutureTime)].load(), 1u);
    EXPECT_EQ(p.counters().records[0].load(), 11u);
    ASSERT_EQ(dead_letters.letters.size(), 1u);
    EXPECT_EQ(dead_letters.letters[0].reason, RejectReason::kFutureTime);
    EXPECT_EQ(dead_letters.letters[0].document, Pings()[7]);
    EXPECT_EQ(dead_letters.letters[0].offset, 8);
    auto snap = p.FinalSnapshot();
    EXPECT_EQ(snap->stream_time_ms, last);
    ASSERT_EQ(snap->table(Table::kUsage).size(), 1u);
    const SeriesData& usage = *snap->table(Table::kUsage)[0];
    EXPECT_EQ(usage.total()[0], 11 * 60'000);  // the far one adds nothing
    EXPECT_EQ(snap->Span(usage, *snap->SpanIndex(3'600'000))[0], 11 * 60'000);
  }
}

TEST(FutureTime, ALiveSourceRejectsADocumentAheadOfTheClock) {
  const int64_t now = ParseTimestamp("2026-11-20T12:00:00Z")->ms;
  ManualClock clock(now);
  PipelineOptions o;
  o.max_clock_skew_ms = 600'000;
  o.sources = {{"telemetry.main", std::nullopt, /*live=*/true}};
  Symbols symbols;
  Pipeline p(o, &symbols, nullptr, nullptr, &clock);
  p.Start();
  p.Submit(ChunkOf({Ping("2026-11-20T11:30:00Z", 60), Ping("2026-11-20T12:10:00Z", 60),  // at now + skew
                    Ping("2026-11-20T12:10:00.001Z", 60), Ping("2031-01-01T00:00:00Z", 60)}));
  p.Finish();
  EXPECT_EQ(p.counters().rejected[static_cast<size_t>(RejectReason::kFutureTime)].load(), 2u);
  EXPECT_EQ(p.stream_time().ms, now + 600'000);
  auto snap = p.FinalSnapshot();
  ASSERT_EQ(snap->table(Table::kUsage).size(), 1u);
  EXPECT_EQ(snap->table(Table::kUsage)[0]->total()[0], 120'000);
}

}  // namespace
}  // namespace seismo
