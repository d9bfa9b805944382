#include "seismo/ingest/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace seismo {
namespace {

constexpr size_t kChunk = 1 << 20;

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
  explicit GzipSource(std::unique_ptr<FdSource> raw) : raw_(std::move(raw)), in_(kChunk) {
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
        ssize_t r = raw_->Read(in_.data(), in_.size(), err);
        if (r < 0) return -1;
        if (r == 0) {
          eof_ = true;
          if (!stream_end_) {
            err = "truncated gzip stream";
            return -1;
          }
          return 0;
        }
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
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
  std::vector<char> in_;
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

class SplittingReader final : public LineReader {
 public:
  SplittingReader(std::unique_ptr<ByteSource> src, std::optional<uint64_t> total)
      : src_(std::move(src)), total_(total), buf_(kChunk) {}

  std::optional<std::string_view> Next() override {
    for (;;) {
      // Look for a newline in [begin_, end_).
      const char* start = buf_.data() + begin_;
      const void* nl = std::memchr(start, '\n', end_ - begin_);
      if (nl != nullptr) {
        size_t len = static_cast<const char*>(nl) - start;
        begin_ += len + 1;
        return Trim(std::string_view(start, len));
      }
      if (eof_) {
        if (begin_ == end_) return std::nullopt;
        std::string_view last(start, end_ - begin_);
        begin_ = end_;
        return Trim(last);
      }
      // Compact and grow if the pending line fills the buffer.
      if (begin_ > 0) {
        std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
      }
      if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
      std::string err;
      ssize_t r = src_->Read(buf_.data() + end_, buf_.size() - end_, err);
      if (r < 0) {
        error_ = Status::IoError(err);
        eof_ = true;
        return std::nullopt;
      }
      if (r == 0) eof_ = true;
      end_ += static_cast<size_t>(r);
    }
  }

  uint64_t bytes_read() const override { return src_->consumed(); }
  std::optional<uint64_t> total_bytes() const override { return total_; }
  const Status& error() const override { return error_; }

 private:
  static std::string_view Trim(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  }

  std::unique_ptr<ByteSource> src_;
  std::optional<uint64_t> total_;
  std::vector<char> buf_;
  size_t begin_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  Status error_;
};

}  // namespace

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path) {
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
  return std::unique_ptr<LineReader>(std::make_unique<SplittingReader>(std::move(src), total));
}

}  // namespace seismo
