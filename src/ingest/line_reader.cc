#include "seismo/ingest/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace seismo {
namespace {

constexpr size_t kChunk = 1 << 20;

// A reader's first buffer: a read's worth (kChunk), or less for a file known to be smaller
// (at least 64 KiB, which a compressed file's first reads fill): each byte of it is zeroed,
// a page fault each 4 KiB, and a replay of thousands of small files makes one per file.
// Next() grows it when a line needs more.
size_t InitialBuffer(std::optional<uint64_t> total, size_t max_buffer) {
  size_t n = kChunk;
  if (total && *total < kChunk) n = std::max<size_t>(static_cast<size_t>(*total) + 1, size_t{64} << 10);
  return std::min(n, max_buffer);
}

// A stream of decompressed bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; returns 0 at end, -1 on error (message in err).
  virtual ssize_t Read(char* buf, size_t n, std::string& err) = 0;
  virtual uint64_t consumed() const = 0;
};

class FdSource : public ByteSource {
 public:
  explicit FdSource(int fd) : fd_(fd) {}
  ~FdSource() override {
    if (fd_ > 0) close(fd_);
  }
  ssize_t Read(char* buf, size_t n, std::string& err) override {
    for (;;) {
      ssize_t r = read(fd_, buf, n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) err = std::strerror(errno);
      if (r > 0) consumed_ += static_cast<uint64_t>(r);
      return r;
    }
  }
  uint64_t consumed() const override { return consumed_; }
  int fd() const { return fd_; }

 private:
  int fd_;
  uint64_t consumed_ = 0;
};

class GzipSource : public ByteSource {
 public:
  // The input buffer is not zeroed: only the pages a read fills cost a fault (a small file's
  // few), where a zeroed 1 MiB took 256 of them for every file of an archive.
  explicit GzipSource(std::unique_ptr<FdSource> raw)
      : raw_(std::move(raw)), in_(std::make_unique_for_overwrite<char[]>(kChunk)) {
    std::memset(&zs_, 0, sizeof(zs_));
    ok_ = inflateInit2(&zs_, 15 + 32) == Z_OK;  // 32: accept gzip and zlib headers
  }
  ~GzipSource() override { inflateEnd(&zs_); }

  ssize_t Read(char* buf, size_t n, std::string& err) override {
    if (!ok_) {
      err = "cannot initialise zlib";
      return -1;
    }
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(n);
    while (zs_.avail_out == n) {
      if (zs_.avail_in == 0) {
        if (eof_) return 0;
        ssize_t r = raw_->Read(in_.get(), kChunk, err);
        if (r < 0) return -1;
        if (r == 0) {
          eof_ = true;
          if (!stream_end_) {
            err = "truncated gzip stream";
            return -1;
          }
          return 0;
        }
        zs_.next_in = reinterpret_cast<Bytef*>(in_.get());
        zs_.avail_in = static_cast<uInt>(r);
      }
      if (stream_end_) {
        // Concatenated gzip members: start the next one.
        inflateReset(&zs_);
        stream_end_ = false;
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        stream_end_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        err = std::string("gzip: ") + (zs_.msg ? zs_.msg : "corrupt data");
        return -1;
      }
    }
    return static_cast<ssize_t>(n - zs_.avail_out);
  }
  uint64_t consumed() const override { return raw_->consumed(); }

 private:
  std::unique_ptr<FdSource> raw_;
  std::unique_ptr<char[]> in_;
  z_stream zs_;
  bool ok_ = false;
  bool eof_ = false;
  bool stream_end_ = false;
};

class ZstdSource : public ByteSource {
 public:
  explicit ZstdSource(std::unique_ptr<FdSource> raw)
      : raw_(std::move(raw)), in_(ZSTD_DStreamInSize()), ds_(ZSTD_createDStream()) {}
  ~ZstdSource() override { ZSTD_freeDStream(ds_); }

  ssize_t Read(char* buf, size_t n, std::string& err) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      if (input_.pos == input_.size) {
        ssize_t r = raw_->Read(in_.data(), in_.size(), err);
        if (r < 0) return -1;
        if (r == 0) {
          if (last_ret_ != 0) {
            err = "truncated zstd stream";
            return -1;
          }
          return 0;
        }
        input_ = ZSTD_inBuffer{in_.data(), static_cast<size_t>(r), 0};
      }
      size_t ret = ZSTD_decompressStream(ds_, &out, &input_);
      if (ZSTD_isError(ret)) {
        err = std::string("zstd: ") + ZSTD_getErrorName(ret);
        return -1;
      }
      last_ret_ = ret;
    }
    return static_cast<ssize_t>(out.pos);
  }
  uint64_t consumed() const override { return raw_->consumed(); }

 private:
  std::unique_ptr<FdSource> raw_;
  std::vector<char> in_;
  ZSTD_DStream* ds_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  size_t last_ret_ = 0;
};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Splits the byte stream at '\n'. The buffer holds the pending line and grows
// while it must (a line longer than the buffer), never past max_line + kChunk:
// a longer line is returned as its first max_line bytes (kept at the front of
// the buffer) while the rest of it is read into the space behind them and
// dropped, up to its newline.
//
//   buf_: [ first max_line bytes of the cut line | scratch: the rest, read and dropped ]
class SplittingReader final : public LineReader {
 public:
  SplittingReader(std::unique_ptr<ByteSource> src, std::optional<uint64_t> total, size_t max_line)
      : src_(std::move(src)),
        total_(total),
        max_line_(std::max<size_t>(max_line, 1)),
        max_buffer_(max_line_ > SIZE_MAX - kChunk ? SIZE_MAX : max_line_ + kChunk),
        buf_(InitialBuffer(total, max_buffer_)) {}

  std::optional<std::string_view> Next() override {
    for (;;) {
      if (eof_ && begin_ == end_) {
        std::vector<char>().swap(buf_);  // read to the end: the buffer is not needed any more
        begin_ = end_ = 0;
        return std::nullopt;
      }
      // Look for a newline within the first max_line + 1 bytes of [begin_, end_).
      const char* start = buf_.data() + begin_;
      const size_t pending = end_ - begin_;
      const size_t scan = max_line_ == SIZE_MAX ? pending : std::min(pending, max_line_ + 1);
      const void* nl = std::memchr(start, '\n', scan);
      if (nl != nullptr) {
        size_t len = static_cast<const char*>(nl) - start;
        begin_ += len + 1;
        line_bytes_ = len;
        return Trim(std::string_view(start, len));
      }
      if (pending > max_line_) return SkipRestOfLine();
      if (eof_) {
        std::string_view last(start, pending);
        begin_ = end_;
        line_bytes_ = pending;
        return Trim(last);
      }
      Compact();
      if (end_ == buf_.size()) buf_.resize(std::min(buf_.size() * 2, max_buffer_));
      if (!Fill(end_)) return std::nullopt;
    }
  }

  uint64_t bytes_read() const override { return src_->consumed(); }
  std::optional<uint64_t> total_bytes() const override { return total_; }
  uint64_t line_bytes() const override { return line_bytes_; }
  const Status& error() const override { return error_; }

 private:
  static std::string_view Trim(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  }

  // Moves the pending bytes to the front of the buffer.
  void Compact() {
    if (begin_ == 0) return;
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }

  // Reads more input into [at, buf_.size()); end_ = at + bytes read. False on a read error.
  bool Fill(size_t at) {
    std::string err;
    ssize_t r = src_->Read(buf_.data() + at, buf_.size() - at, err);
    if (r < 0) {
      error_ = Status::IoError(err);
      eof_ = true;
      end_ = begin_ = 0;
      return false;
    }
    if (r == 0) eof_ = true;
    end_ = at + static_cast<size_t>(r);
    return true;
  }

  // The pending line is longer than max_line: keeps its first max_line bytes,
  // reads and drops the rest up to its newline (or the end of input), and
  // returns the kept bytes with line_bytes_ = the whole line's length.
  std::optional<std::string_view> SkipRestOfLine() {
    Compact();
    if (buf_.size() < max_buffer_) buf_.resize(max_buffer_);  // room to read behind the kept bytes
    uint64_t total = max_line_;
    size_t from = max_line_;  // [from, end_): bytes of the line after the kept ones, or of later lines
    for (;;) {
      const void* nl = std::memchr(buf_.data() + from, '\n', end_ - from);
      if (nl != nullptr) {
        const size_t at = static_cast<size_t>(static_cast<const char*>(nl) - buf_.data());
        total += at - from;
        begin_ = at + 1;  // the next line starts behind the newline
        break;
      }
      total += end_ - from;
      from = max_line_;
      if (eof_) {
        begin_ = end_ = max_line_;
        break;
      }
      if (!Fill(max_line_)) return std::nullopt;
    }
    line_bytes_ = total;
    return std::string_view(buf_.data(), max_line_);
  }

  std::unique_ptr<ByteSource> src_;
  std::optional<uint64_t> total_;
  const size_t max_line_;
  const size_t max_buffer_;
  std::vector<char> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
  uint64_t line_bytes_ = 0;
  bool eof_ = false;
  Status error_;
};

}  // namespace

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path, size_t max_line_bytes) {
  int fd;
  std::optional<uint64_t> total;
  if (path == "-") {
    fd = dup(STDIN_FILENO);
  } else {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::IoError(path + ": " + std::strerror(errno));
    struct stat st{};
    if (fstat(fd, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        close(fd);
        return Status::IoError(path + ": is a directory");
      }
      if (S_ISREG(st.st_mode)) total = static_cast<uint64_t>(st.st_size);
    }
  }
  auto raw = std::make_unique<FdSource>(fd);
  std::unique_ptr<ByteSource> src;
  if (EndsWith(path, ".gz")) {
    src = std::make_unique<GzipSource>(std::move(raw));
  } else if (EndsWith(path, ".zst") || EndsWith(path, ".zstd")) {
    src = std::make_unique<ZstdSource>(std::move(raw));
  } else {
    src = std::move(raw);
  }
  return std::unique_ptr<LineReader>(
      std::make_unique<SplittingReader>(std::move(src), total, max_line_bytes));
}

Result<std::optional<uint64_t>> LineReader::Check(const std::string& path) {
  if (path == "-") return std::optional<uint64_t>();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Status::IoError(path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::IoError(path + ": is a directory");
  if (!S_ISREG(st.st_mode)) return std::optional<uint64_t>();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);  // the right to read it
  if (fd < 0) return Status::IoError(path + ": " + std::strerror(errno));
  close(fd);
  return std::optional<uint64_t>(static_cast<uint64_t>(st.st_size));
}

}  // namespace seismo
