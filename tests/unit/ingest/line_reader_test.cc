#include "seismo/ingest/line_reader.h"

#include <gtest/gtest.h>
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
