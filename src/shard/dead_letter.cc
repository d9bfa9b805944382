#include "seismo/shard/dead_letter.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "seismo/core/json_writer.h"
#include "seismo/core/mutex.h"
#include "seismo/parse/utf8.h"

namespace seismo {
namespace {

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16 | static_cast<uint8_t>(in[i + 1]) << 8 |
                 static_cast<uint8_t>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(n >> s) & 63];
  }
  if (i < in.size()) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

class FileSink final : public DeadLetterSink {
 public:
  explicit FileSink(FILE* f) : file_(f) {}
  ~FileSink() override { std::fclose(file_); }

  void Write(const DeadLetter& letter) override {
    std::string line = FormatDeadLetter(letter);
    line += '\n';
    MutexLock lock(mu_);
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
      const int error = errno;
      std::clearerr(file_);
      if (failures_.fetch_add(1, std::memory_order_relaxed) % 1000 == 0) {
        spdlog::error("dead letters: cannot write: {}", std::strerror(error));
      }
    }
  }
  uint64_t failures() const override { return failures_.load(std::memory_order_relaxed); }

 private:
  Mutex mu_;
  FILE* file_ GUARDED_BY(mu_);         // written (and flushed) with mu_ held
  std::atomic<uint64_t> failures_{0};  // relaxed: a monitoring counter
};

}  // namespace

std::string FormatDeadLetter(const DeadLetter& letter) {
  JsonWriter w;
  w.BeginObject();
  w.Key("id").String(fmt::format("{}:{}:{}", letter.source, letter.partition, letter.offset));
  w.Key("reason").String(RejectReasonName(letter.reason));
  w.Key("source").String(letter.source);
  w.Key("partition").Int(letter.partition);
  w.Key("offset").Int(letter.offset);
  std::string_view doc = letter.document;
  const uint64_t size = std::max<uint64_t>(letter.document_bytes, doc.size());
  if (size > kMaxDeadLetterDocumentBytes || size > doc.size()) {
    w.Key("document_bytes").Uint(size);
    w.Key("truncated").Bool(true);
    doc = doc.substr(0, kMaxDeadLetterDocumentBytes);
  }
  if (IsValidUtf8(doc)) {
    w.Key("document").String(doc);
  } else {
    w.Key("document_base64").String(Base64(doc));
  }
  w.EndObject();
  return w.Take();
}

Result<std::unique_ptr<DeadLetterSink>> OpenDeadLetterFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "ae");
  if (f == nullptr) return Status::IoError(path + ": " + std::strerror(errno));
  return std::unique_ptr<DeadLetterSink>(std::make_unique<FileSink>(f));
}

}  // namespace seismo
