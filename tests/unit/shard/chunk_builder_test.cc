// ChunkBuilder: how lines and messages become the DocChunks a source hands on.
#include "seismo/shard/chunk_builder.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace seismo {
namespace {

struct Handed {
  std::vector<DocChunkPtr> chunks;
  ChunkBuilder::Sink sink() {
    return [this](DocChunkPtr chunk) { chunks.push_back(std::move(chunk)); };
  }
};

std::string_view Body(const DocChunk& chunk, size_t i) {
  const DocRef& ref = chunk.docs[i];
  return std::string_view(chunk.data).substr(ref.begin, ref.length);
}

TEST(ChunkBuilder, LinesAreNumberedDocumentsOfTheirFileAndBlankLinesAreNone) {
  Handed handed;
  ChunkBuilder chunks(1 << 20, handed.sink(), kChunkDocs);
  EXPECT_FALSE(chunks.AddLine(3, 1, R"({"a":1})", 0));
  EXPECT_FALSE(chunks.AddLine(3, 2, " \t ", 0));
  EXPECT_FALSE(chunks.AddLine(3, 3, "", 0));
  EXPECT_FALSE(chunks.AddLine(3, 4, R"({"b":2})", 0));
  EXPECT_TRUE(handed.chunks.empty()) << "nothing is handed on before the chunk fills";
  chunks.EndFile(3);
  ASSERT_EQ(handed.chunks.size(), 1u);
  const DocChunk& c = *handed.chunks[0];
  ASSERT_EQ(c.docs.size(), 2u);
  EXPECT_EQ(c.docs[0].source, 3);
  EXPECT_EQ(c.docs[0].position, 1);
  EXPECT_EQ(c.docs[0].partition, -1);
  EXPECT_FALSE(c.docs[0].transport_time.has_value());
  EXPECT_EQ(c.docs[1].position, 4);
  EXPECT_EQ(Body(c, 0), R"({"a":1})");
  EXPECT_EQ(Body(c, 1), R"({"b":2})");
  ASSERT_EQ(c.ended.size(), 1u) << "the file's end goes with its last documents";
  EXPECT_EQ(c.ended[0], (SourceKey{3, -1}));
  EXPECT_TRUE(c.idle.empty());
  EXPECT_TRUE(chunks.empty()) << "a new chunk is in hand";
}

TEST(ChunkBuilder, AChunkIsHandedOnAtItsDocumentCount) {
  Handed handed;
  ChunkBuilder chunks(1 << 20, handed.sink(), /*max_docs=*/3);
  for (int64_t line = 1; line <= 7; ++line) {
    EXPECT_EQ(chunks.AddLine(0, line, "{}", 0), line % 3 == 0) << "line " << line;
  }
  chunks.EndFile(0);
  ASSERT_EQ(handed.chunks.size(), 3u);
  EXPECT_EQ(handed.chunks[0]->docs.size(), 3u);
  EXPECT_EQ(handed.chunks[1]->docs.size(), 3u);
  EXPECT_EQ(handed.chunks[2]->docs.size(), 1u);
  EXPECT_EQ(handed.chunks[1]->docs[0].position, 4);
  EXPECT_EQ(handed.chunks[1]->docs[0].begin, 0u) << "each chunk's bytes start at 0";
  EXPECT_TRUE(handed.chunks[0]->ended.empty());
  EXPECT_EQ(handed.chunks[2]->ended.size(), 1u);
}

TEST(ChunkBuilder, AChunkIsHandedOnOnceItHoldsChunkBytes) {
  Handed handed;
  ChunkBuilder chunks(1 << 20, handed.sink());  // no document count
  const std::string quarter(kChunkBytes / 4, 'x');
  EXPECT_FALSE(chunks.AddMessage(1, 0, 10, std::nullopt, quarter));
  EXPECT_FALSE(chunks.AddMessage(1, 0, 11, std::nullopt, quarter));
  EXPECT_FALSE(chunks.AddMessage(1, 0, 12, std::nullopt, quarter));
  EXPECT_FALSE(chunks.AddMessage(1, 0, 13, std::nullopt, quarter.substr(1)));  // one byte short
  EXPECT_TRUE(chunks.AddMessage(1, 0, 14, std::nullopt, "x"));                 // exactly kChunkBytes
  ASSERT_EQ(handed.chunks.size(), 1u);
  EXPECT_EQ(handed.chunks[0]->docs.size(), 5u);
  EXPECT_EQ(handed.chunks[0]->data.size(), kChunkBytes + kParsePadding) << "the documents, then the padding";
  EXPECT_TRUE(chunks.empty());
}

TEST(ChunkBuilder, MessagesCarryTheirPartitionOffsetAndTransportTime) {
  Handed handed;
  ChunkBuilder chunks(1 << 20, handed.sink());
  chunks.Reserve(uint64_t{1} << 40);  // capped at kChunkBytes
  EXPECT_LE(chunks.chunk().data.capacity(), 2 * kChunkBytes);
  chunks.AddMessage(5, 2, 1234, 1'700'000'000'000, R"({"m":1})");
  chunks.AddMessage(5, 3, 7, std::nullopt, R"({"m":2})");
  chunks.chunk().idle.push_back(SourceKey{5, 2});
  chunks.Flush();
  ASSERT_EQ(handed.chunks.size(), 1u);
  const DocChunk& c = *handed.chunks[0];
  ASSERT_EQ(c.docs.size(), 2u);
  EXPECT_EQ(c.docs[0].source, 5);
  EXPECT_EQ(c.docs[0].partition, 2);
  EXPECT_EQ(c.docs[0].position, 1234);
  ASSERT_TRUE(c.docs[0].transport_time.has_value());
  EXPECT_EQ(c.docs[0].transport_time->ms, 1'700'000'000'000);
  EXPECT_EQ(c.docs[1].partition, 3);
  EXPECT_FALSE(c.docs[1].transport_time.has_value());
  EXPECT_EQ(Body(c, 1), R"({"m":2})");
  ASSERT_EQ(c.idle.size(), 1u) << "markers go after the documents of the same chunk";
}

TEST(ChunkBuilder, ADocumentOverTheLimitKeepsOnlyWhatItsDeadLetterShows) {
  Handed handed;
  ChunkBuilder chunks(/*max_document_bytes=*/100, handed.sink());
  const std::string big(kMaxDeadLetterDocumentBytes + 10, 'y');
  chunks.AddLine(0, 1, big, 0);
  chunks.AddLine(0, 2, "{}", 5'000'000'000);  // a line LineReader cut
  chunks.EndFile(0);
  ASSERT_EQ(handed.chunks.size(), 1u);
  const DocChunk& c = *handed.chunks[0];
  EXPECT_EQ(c.docs[0].cut_from_bytes, big.size());
  EXPECT_EQ(c.docs[0].length, kMaxDeadLetterDocumentBytes);
  EXPECT_EQ(c.docs[1].cut_from_bytes, 5'000'000'000u);
}

// With the parser's max_depth, each document is scanned for too_deep as it is copied in, and
// the verdict goes with it to the parse worker (DocRef::nesting, ADR 0042); a cut document,
// rejected unparsed, and a builder without a limit leave it unmade.
TEST(ChunkBuilder, DocumentsAreScannedForTooDeepAsTheyAreCopiedIn) {
  const std::string shallow = "[[[]]]";
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  const std::string in_a_string = "[\"" + std::string(200, '[') + "\"]";
  Handed handed;
  ChunkBuilder chunks(/*max_document_bytes=*/1000, handed.sink(), kChunkDocs, nullptr, /*max_depth=*/100);
  chunks.AddLine(0, 1, shallow, 0);
  chunks.AddLine(0, 2, deep, 0);
  chunks.AddLine(0, 3, in_a_string, 0);
  chunks.AddMessage(1, 0, 7, std::nullopt, deep);
  chunks.AddLine(0, 4, std::string(2000, '['), 0);  // over max_document_bytes: cut
  chunks.EndFile(0);
  ASSERT_EQ(handed.chunks.size(), 1u);
  const DocChunk& c = *handed.chunks[0];
  ASSERT_EQ(c.docs.size(), 5u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(c.docs[i].nesting.max_depth, 100u) << i;
  EXPECT_FALSE(c.docs[0].nesting.deeper);
  EXPECT_TRUE(c.docs[1].nesting.deeper);
  EXPECT_FALSE(c.docs[2].nesting.deeper) << "brackets in a string do not nest";
  EXPECT_TRUE(c.docs[3].nesting.deeper) << "a Kafka message too";
  EXPECT_EQ(c.docs[4].nesting.max_depth, 0u) << "a cut document is not parsed";

  Handed unscanned;
  ChunkBuilder plain(1000, unscanned.sink());
  plain.AddLine(0, 1, deep, 0);
  plain.Flush();
  ASSERT_EQ(unscanned.chunks.size(), 1u);
  EXPECT_EQ(unscanned.chunks[0]->docs[0].nesting.max_depth, 0u) << "no limit: the parser scans";
}

TEST(ChunkBuilder, EmptyMeansNoDocumentsAndNoMarkers) {
  Handed handed;
  ChunkBuilder chunks(1 << 20, handed.sink());
  EXPECT_TRUE(chunks.empty());
  chunks.chunk().idle.push_back(SourceKey{0, 1});
  EXPECT_FALSE(chunks.empty()) << "a chunk of markers alone is handed on";
  chunks.Flush();
  EXPECT_TRUE(chunks.empty());
  chunks.AddLine(0, 1, " ", 0);
  EXPECT_TRUE(chunks.empty()) << "a blank line adds nothing";
  EXPECT_EQ(handed.chunks.size(), 1u);
}

}  // namespace
}  // namespace seismo
