// WriteOutputFile and its ThreadedFileSink (app/output_file.h, ADR 0041): the bytes arrive
// whole and in order from a thread of their own; a regular file appears whole or not at all;
// a device or FIFO is written to, never replaced; a failed write is reported.
#include "seismo/app/output_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

namespace seismo {
namespace {

namespace fs = std::filesystem;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-output-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(OutputFile, PiecesOfEverySizeArriveWholeAndInOrder) {
  // Writes from one byte to several pieces' worth, so that pieces are handed on mid-write,
  // wait for room (more than kPiecesAhead of them) and are reused once written; every third
  // is handed over whole (Hand: queued as it is when nothing waits before it, else copied).
  std::mt19937 rng(7);
  std::vector<std::string> writes;
  std::string expected;
  for (size_t total = 0; total < 12 * ThreadedFileSink::kPieceBytes;) {
    const size_t n = std::uniform_int_distribution<size_t>(0, 2)(rng) == 0
                         ? std::uniform_int_distribution<size_t>(0, 3 * ThreadedFileSink::kPieceBytes)(rng)
                         : std::uniform_int_distribution<size_t>(1, 4096)(rng);
    std::string w(n, '\0');
    for (char& c : w) c = static_cast<char>('a' + std::uniform_int_distribution<int>(0, 25)(rng));
    expected += w;
    total += n;
    writes.push_back(std::move(w));
  }
  const fs::path out = dir_ / "out.json";
  ASSERT_TRUE(WriteOutputFile(out.string(), [&](OutputSink& sink) {
                for (size_t i = 0; i < writes.size(); ++i) {
                  if (i % 3 != 2) {
                    sink.Write(writes[i]);
                    continue;
                  }
                  const std::string back = sink.Hand(std::string(writes[i]));
                  EXPECT_TRUE(back.empty());
                }
              }).ok());
  EXPECT_EQ(Read(out), expected + "\n");
  EXPECT_FALSE(fs::exists(dir_ / "out.json.tmp"));
}

TEST_F(OutputFile, AFifoIsWrittenToAndNotReplaced) {
  // What `--output /dev/null` or a shell's `>(gzip > out.gz)` names: written to as it is. A
  // temporary file renamed over it made /dev/null a regular file (as root).
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // A reader first (non-blocking: it opens at once), so the writer's open does not wait;
  // the output fits the pipe's buffer, so the writer does not wait for it to be read.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  const std::string content(1000, 'x');
  const Status s = WriteOutputFile(fifo.string(), content);
  EXPECT_TRUE(s.ok()) << s.message();
  std::string got(4096, '\0');
  const ssize_t n = ::read(reader, got.data(), got.size());
  ::close(reader);
  ASSERT_GE(n, 0) << std::strerror(errno);
  got.resize(static_cast<size_t>(n));
  EXPECT_EQ(got, content + "\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_FALSE(fs::exists(dir_ / "fifo.tmp"));
}

TEST_F(OutputFile, AFileIsReplacedWholeOrNotAtAll) {
  const fs::path out = dir_ / "out.json";
  ASSERT_TRUE(WriteOutputFile(out.string(), "first").ok());
  EXPECT_EQ(Read(out), "first\n");
  ASSERT_TRUE(WriteOutputFile(out.string(), "second").ok());
  EXPECT_EQ(Read(out), "second\n");
  // Nowhere to write: an error that names the path, and the old file as it was.
  const Status s = WriteOutputFile((dir_ / "no-such-dir" / "out.json").string(), "third");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no-such-dir/out.json"), std::string::npos) << s.message();
  EXPECT_EQ(Read(out), "second\n");
}

TEST_F(OutputFile, ReplaceFilePutsTheNewFileInPlaceAndRemovesTheOldOne) {
  const fs::path out = dir_ / "out.json";
  const fs::path tmp = dir_ / "out.json.tmp";
  { std::ofstream(out) << "old"; }
  { std::ofstream(tmp) << "new"; }
  // A reader that has the old file open goes on reading it whole.
  const int reader = ::open(out.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  EXPECT_EQ(ReplaceFile(tmp.string(), out.string()), 0);
  EXPECT_EQ(Read(out), "new");
  EXPECT_FALSE(fs::exists(tmp));
  struct stat st {};
  ASSERT_EQ(::fstat(reader, &st), 0);
  EXPECT_EQ(st.st_nlink, 0u) << "the old file has a name left";
  char buf[8] = {};
  EXPECT_EQ(::pread(reader, buf, sizeof buf, 0), 3);
  EXPECT_EQ(std::string(buf), "old");
  ::close(reader);
  // Where there was nothing, a rename.
  const fs::path fresh = dir_ / "fresh.json";
  { std::ofstream(tmp) << "first"; }
  EXPECT_EQ(ReplaceFile(tmp.string(), fresh.string()), 0);
  EXPECT_EQ(Read(fresh), "first");
  EXPECT_FALSE(fs::exists(tmp));
  // A directory is not replaced: the error, and both left as they were.
  const fs::path dir = dir_ / "a-directory";
  fs::create_directories(dir / "inside");
  { std::ofstream(tmp) << "third"; }
  EXPECT_NE(ReplaceFile(tmp.string(), dir.string()), 0);
  EXPECT_TRUE(fs::is_directory(dir / "inside"));
  EXPECT_EQ(Read(tmp), "third");
}

TEST_F(OutputFile, ALinkIsWrittenThroughAndStaysALink) {
  // `/dev/stdout` is a link to /proc/self/fd/1, which is a link to wherever stdout goes: a
  // temporary file renamed over it would replace the link (as root) or fail (no right to
  // create /dev/stdout.tmp).
  const fs::path target = dir_ / "target.json";
  { std::ofstream(target) << "old"; }
  const fs::path link = dir_ / "link.json";
  fs::create_symlink(target, link);
  ASSERT_TRUE(WriteOutputFile(link.string(), "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Read(target), "new\n");
  EXPECT_FALSE(fs::exists(dir_ / "link.json.tmp"));
}

TEST_F(OutputFile, AWriterThatThrowsLeavesTheOldFileAndNoTemporaryOne) {
  const fs::path out = dir_ / "out.json";
  ASSERT_TRUE(WriteOutputFile(out.string(), "whole").ok());
  EXPECT_THROW((void)WriteOutputFile(out.string(),
                                     [](OutputSink& sink) {
                                       sink.Write(std::string(3 * ThreadedFileSink::kPieceBytes, 'z'));
                                       throw std::runtime_error("the writer failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(Read(out), "whole\n");
  EXPECT_FALSE(fs::exists(dir_ / "out.json.tmp"));
}

TEST_F(OutputFile, AShortWriteIsReportedWithItsErrno) {
  // A stream that cannot be written (opened for reading): every piece fails on the thread,
  // and Finish gives the first failure's errno to the caller's thread.
  const fs::path p = dir_ / "read-only";
  { std::ofstream(p) << "x"; }
  std::FILE* f = std::fopen(p.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int error = 0;
  {
    ThreadedFileSink sink(f);
    for (int i = 0; i < 3; ++i) sink.Write(std::string(ThreadedFileSink::kPieceBytes, 'y'));
    error = sink.Finish();
    EXPECT_EQ(sink.Finish(), error);  // once finished, the same answer
  }
  std::fclose(f);
  EXPECT_EQ(error, EBADF);
  EXPECT_EQ(Read(p), "x");
}

}  // namespace
}  // namespace seismo
