#include "seismo/ingest/line_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace seismo {
namespace {

namespace fs = std::filesystem;

class LineReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-lr-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  static std::vector<std::string> ReadAll(const std::string& path) {
    auto r = LineReader::Open(path);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    std::vector<std::string> lines;
    while (auto line = (*r)->Next()) lines.emplace_back(*line);
    EXPECT_TRUE((*r)->error().ok()) << (*r)->error().message();
    return lines;
  }

  fs::path dir_;
};

const std::string kText = "{\"a\":1}\n{\"b\":2}\r\n\nlast-without-newline";
const std::vector<std::string> kLines = {"{\"a\":1}", "{\"b\":2}", "", "last-without-newline"};

TEST_F(LineReaderTest, ReadsPlainFilesLineByLine) { EXPECT_EQ(ReadAll(Write("a.ndjson", kText)), kLines); }

TEST_F(LineReaderTest, ReadsGzipIncludingConcatenatedMembers) {
  auto gz = [](const std::string& s) {
    uLongf n = compressBound(s.size()) + 64;
    std::string out(n, '\0');
    z_stream zs{};
    deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
    zs.avail_in = static_cast<uInt>(s.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
  };
  EXPECT_EQ(ReadAll(Write("a.ndjson.gz", gz("{\"a\":1}\n{\"b\":2}\r\n") + gz("\nlast-without-newline"))), kLines);
}

TEST_F(LineReaderTest, ReadsZstd) {
  std::string out(ZSTD_compressBound(kText.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), kText.data(), kText.size(), 3));
  EXPECT_EQ(ReadAll(Write("a.ndjson.zst", out)), kLines);
}

TEST_F(LineReaderTest, LinesLongerThanTheBufferAreWhole) {
  std::string big(3 << 20, 'x');
  auto lines = ReadAll(Write("big.ndjson", "a\n" + big + "\nb"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].size(), big.size());
  EXPECT_EQ(lines[2], "b");
}

// Reads every line with a limit: (text, line_bytes()) pairs.
std::vector<std::pair<std::string, uint64_t>> ReadCut(const std::string& path, size_t limit) {
  auto r = LineReader::Open(path, limit);
  EXPECT_TRUE(r);
  std::vector<std::pair<std::string, uint64_t>> lines;
  while (auto line = (*r)->Next()) lines.emplace_back(std::string(*line), (*r)->line_bytes());
  EXPECT_TRUE((*r)->error().ok()) << (*r)->error().message();
  return lines;
}

TEST_F(LineReaderTest, ALineOverTheLimitIsCutAndTheLinesAroundItAreWhole) {
  const std::string path =
      Write("cut.ndjson", "0123456789\n01234567890\nabc\r\n" + std::string(100, 'y') + "\nz");
  using Lines = std::vector<std::pair<std::string, uint64_t>>;
  // Exactly the limit is whole; one byte more is cut to the limit, with its length.
  EXPECT_EQ(
      ReadCut(path, 10),
      (Lines{{"0123456789", 10}, {"0123456789", 11}, {"abc", 4}, {std::string(10, 'y'), 100}, {"z", 1}}));
  EXPECT_EQ(
      ReadCut(path, 1000),
      (Lines{{"0123456789", 10}, {"01234567890", 11}, {"abc", 4}, {std::string(100, 'y'), 100}, {"z", 1}}));
}

TEST_F(LineReaderTest, ACutLineAtTheEndWithoutNewlineEndsTheInput) {
  EXPECT_EQ(ReadCut(Write("end.ndjson", "a\n" + std::string(50, 'q')), 8),
            (std::vector<std::pair<std::string, uint64_t>>{{"a", 1}, {std::string(8, 'q'), 50}}));
}

// A line far longer than the read buffer (1 MiB; a small file's first is 64 KiB) is skipped across many
// reads, in every format, and the next line comes back whole.
TEST_F(LineReaderTest, ALineOfManyBuffersIsSkippedInEveryFormat) {
  const std::string huge(5'000'000, 'h');
  const std::string text = "{\"a\":1}\n" + huge + "\n{\"b\":2}\n";
  std::string zst(ZSTD_compressBound(text.size()), '\0');
  zst.resize(ZSTD_compress(zst.data(), zst.size(), text.data(), text.size(), 1));
  for (const std::string& path : {Write("huge.ndjson", text), Write("huge.ndjson.zst", zst)}) {
    auto lines = ReadCut(path, 1024);
    ASSERT_EQ(lines.size(), 3u) << path;
    EXPECT_EQ(lines[0].first, "{\"a\":1}");
    EXPECT_EQ(lines[1].first, std::string(1024, 'h'));
    EXPECT_EQ(lines[1].second, huge.size());
    EXPECT_EQ(lines[2].first, "{\"b\":2}");
  }
}

TEST_F(LineReaderTest, CorruptCompressedInputIsAnErrorNotACrash) {
  auto r = LineReader::Open(Write("bad.ndjson.gz", "definitely not gzip data at all"));
  ASSERT_TRUE(r);
  while ((*r)->Next()) {
  }
  EXPECT_FALSE((*r)->error().ok());
  auto z = LineReader::Open(Write("bad.ndjson.zst", "not zstd either"));
  while ((*z)->Next()) {
  }
  EXPECT_FALSE((*z)->error().ok());
}

TEST_F(LineReaderTest, MissingFileAndDirectoryAreErrors) {
  EXPECT_FALSE(LineReader::Open((dir_ / "missing.ndjson").string()));
  EXPECT_FALSE(LineReader::Open(dir_.string()));
}

}  // namespace
}  // namespace seismo

namespace seismo {
namespace {

// What a replay checks of every input before reading the first: a missing path and a
// directory are errors naming the path; a regular file gives its size; stdin ("-") and a
// FIFO give none and are not opened (opening a FIFO would wait for a writer: this returns).
TEST_F(LineReaderTest, CheckRefusesWhatOpenWouldAndOpensNoPipe) {
  const std::string file = Write("seven.ndjson", "{\"a\":1}");
  auto size = LineReader::Check(file);
  ASSERT_TRUE(size) << size.error().message();
  EXPECT_EQ(*size, std::optional<uint64_t>(7));
  auto missing = LineReader::Check((dir_ / "missing.ndjson").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), (dir_ / "missing.ndjson").string() + ": No such file or directory");
  auto directory = LineReader::Check(dir_.string());
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().message(), dir_.string() + ": is a directory");
  auto stdin_size = LineReader::Check("-");
  ASSERT_TRUE(stdin_size);
  EXPECT_EQ(*stdin_size, std::nullopt);
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto fifo_size = LineReader::Check(fifo);  // no writer: an open would block
  ASSERT_TRUE(fifo_size) << fifo_size.error().message();
  EXPECT_EQ(*fifo_size, std::nullopt);
}

}  // namespace
}  // namespace seismo
