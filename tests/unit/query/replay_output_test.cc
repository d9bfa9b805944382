// Replay output streams: the text reaches the sink in pieces of about a MiB (never as
// one string), and the pieces are the document ReplayOutputJson returns, byte for byte,
// written by one thread or several.
#include "seismo/query/replay_output.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "query_fixture.h"
#include "seismo/core/json_writer.h"

namespace seismo {
namespace {

using namespace seismo::testing;

// Remembers every piece it is handed.
class PiecesSink final : public OutputSink {
 public:
  void Write(std::string_view bytes) override { pieces.emplace_back(bytes); }
  std::vector<std::string> pieces;
};

// Enough hang rows for a few MiB of output.
std::shared_ptr<const Snapshot> ManyHangs() {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  for (int i = 0; i < 12'000; ++i) {
    const std::string frame = "mozilla::SomeModule::SomeFunction" + std::to_string(i);
    w.Hang("bhr", "Linux", "parent", "Gecko", {"XRE_main", "nsAppShell::Run", frame}, 1'000 + i, 1, 0);
  }
  w.Crash("Sig", "parent", "parent", "install", 0);
  w.BuildUsage("Linux", kHour, 1, 0, 0);
  return w.Build();
}

TEST(ReplayOutput, StreamsPiecesOfAboutAMiBThatMakeTheWholeDocument) {
  auto snap = ManyHangs();
  RecordCounts counts;
  counts.by_kind = {1, 12'000, 1};
  const std::string whole = ReplayOutputJson(*snap, counts, "[]", 0);
  ASSERT_GT(whole.size(), 3 * kOutputPiece);
  PiecesSink sink;
  WriteReplayOutput(*snap, counts, "[]", 0, sink);
  ASSERT_GE(sink.pieces.size(), 3u);
  std::string joined;
  for (size_t i = 0; i < sink.pieces.size(); ++i) {
    // Each piece but the last ends with the row that took it past a MiB.
    if (i + 1 < sink.pieces.size()) {
      EXPECT_GE(sink.pieces[i].size(), kOutputPiece) << i;
      EXPECT_LT(sink.pieces[i].size(), kOutputPiece + 4096) << i;
    }
    joined += sink.pieces[i];
  }
  EXPECT_EQ(joined, whole);
  // Pretty-printed, too: the writer keeps its nesting across pieces.
  PiecesSink pretty;
  WriteReplayOutput(*snap, counts, "[]", 2, pretty);
  joined.clear();
  for (const std::string& piece : pretty.pieces) joined += piece;
  EXPECT_EQ(joined, ReplayOutputJson(*snap, counts, "[]", 2));
}

// Several threads write a table's rows in parts, handed on in order: the same bytes as
// one thread, compact and pretty, through a sink and as one string.
TEST(ReplayOutput, SeveralThreadsWriteTheSameBytesAsOne) {
  auto snap = ManyHangs();  // 12 000 hang rows: 24 parts of 512
  RecordCounts counts;
  counts.by_kind = {1, 12'000, 1};
  // Where two documents of megabytes first differ (gtest's diff of them would take minutes).
  auto first_difference = [](const std::string& a, const std::string& b) -> std::string {
    const auto at = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    if (at.first == a.end() && at.second == b.end()) return "none";
    const size_t i = static_cast<size_t>(at.first - a.begin());
    return "at byte " + std::to_string(i) + ": '" + a.substr(i, 60) + "' against '" + b.substr(i, 60) + "'";
  };
  for (int indent : {0, 2}) {
    const std::string one = ReplayOutputJson(*snap, counts, "[]", indent, 1);
    for (int threads : {2, 3, 8}) {
      EXPECT_EQ(first_difference(ReplayOutputJson(*snap, counts, "[]", indent, threads), one), "none")
          << threads << " threads";
      PiecesSink sink;
      WriteReplayOutput(*snap, counts, "[]", indent, sink, threads);
      std::string joined;
      for (const std::string& piece : sink.pieces) joined += piece;
      EXPECT_EQ(first_difference(joined, one), "none") << threads << " threads, through a sink";
      EXPECT_GE(sink.pieces.size(), 12'000u / 512) << "the parts reach the sink one by one";
    }
  }
}

TEST(ReplayOutput, TextsWrittenAgainFromTheCacheAreTheTextsEscaped) {
  // One thread writes each text's JSON string once and copies it after (RowTexts). Frames
  // that need escaping, each in many rows, come out as JsonWriter::String makes them, in
  // every row, as several threads (no cache) write them.
  const std::vector<std::string> frames = {"quote\"and\\backslash", std::string("control\x01\ttab"),
                                           "invalid\xff\xfe"
                                           "bytes",
                                           "caf\xc3\xa9", "plain::Frame"};
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  constexpr int kRows = 1'500;  // three parts of 512 with several threads
  for (int i = 0; i < kRows; ++i) {
    const std::string& f = frames[static_cast<size_t>(i) % frames.size()];
    w.Hang("bhr", "Linux", "parent", "Gecko", {f, "row" + std::to_string(i), f}, 1'000 + i, 1, 0);
  }
  auto snap = w.Build();
  RecordCounts counts;
  const std::string one = ReplayOutputJson(*snap, counts, "[]", 0, 1);
  for (const std::string& f : frames) {
    JsonWriter expected;
    expected.String(f);
    size_t found = 0;
    for (size_t at = one.find(expected.str()); at != std::string::npos; at = one.find(expected.str(), at + 1))
      ++found;
    // Twice in its stack and once as the signature (the fixture's is the stack's last frame).
    EXPECT_EQ(found, 3u * kRows / frames.size()) << expected.str();
  }
  EXPECT_EQ(ReplayOutputJson(*snap, counts, "[]", 0, 3), one);
}

TEST(ReplayOutput, FileSinkWritesTheDocumentAndReportsAShortWrite) {
  auto snap = ManyHangs();
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  FileOutputSink sink(file);
  WriteReplayOutput(*snap, RecordCounts{}, "[]", 0, sink);
  ASSERT_TRUE(sink.ok());
  std::fflush(file);
  std::rewind(file);
  std::string read;
  char buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) read.append(buffer, n);
  std::fclose(file);
  EXPECT_EQ(read, ReplayOutputJson(*snap, RecordCounts{}));

  // A stream that cannot be written: the sink says so (and takes the rest without writing).
  std::FILE* closed = std::fopen("/dev/null", "r");
  ASSERT_NE(closed, nullptr);
  FileOutputSink failing(closed);
  WriteReplayOutput(*snap, RecordCounts{}, "[]", 0, failing);
  EXPECT_FALSE(failing.ok());
  std::fclose(closed);
}

}  // namespace
}  // namespace seismo
