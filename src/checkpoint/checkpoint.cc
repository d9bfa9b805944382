#include "seismo/checkpoint/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "seismo/core/bytes.h"
#include "seismo/core/hash.h"

namespace seismo {
namespace {

constexpr std::string_view kMagic = "SEISMOCP";
constexpr size_t kHeaderBytes = 28;

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError(fmt::format("{}: {}", path, std::strerror(n < 0 ? errno : ENOSPC)));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeCheckpoint(const CheckpointData& d, const Symbols& symbols) {
  // Format 4 when the trailer would say nothing format 4 does not (one image per shard, in
  // shard order, of no partition: an unscoped pipeline's), so a build one release older
  // still reads it; format 5 only when it carries partitions.
  bool plain = d.source_counts.empty();
  for (size_t i = 0; i < d.shards.size(); ++i) {
    plain = plain && d.shards[i].shard == i && (i >= d.partitions.size() || !d.partitions[i].has_value());
  }
  const uint32_t version = plain ? 4 : d.source_counts.empty() ? 5 : kCheckpointFormatVersion;
  ByteWriter w;
  w.I64(d.written_at_ms);
  w.I64(d.bucket_ms);
  EncodeRecordCounts(d.counts, w);
  w.U64(d.kafka_offsets.size());
  for (const auto& [tp, offset] : d.kafka_offsets) {
    w.Str(tp.first);
    w.I64(tp.second);
    w.I64(offset);
  }
  w.U64(d.file_lines.size());
  for (const auto& [path, lines] : d.file_lines) {
    w.Str(path);
    w.I64(lines);
  }
  w.U64(d.shards.size());
  for (const ShardImage& s : d.shards) EncodeShardImage(s, symbols, w);
  for (size_t i = 0; i < d.shards.size() && !plain; ++i) {
    w.U64(d.shards[i].shard);
    const bool tagged = i < d.partitions.size() && d.partitions[i].has_value();
    w.U8(tagged ? 1 : 0);
    if (tagged) {
      w.Str(d.partitions[i]->first);
      w.I64(d.partitions[i]->second);
    }
  }
  if (version >= 6) {
    w.U64(d.source_counts.size());
    for (const auto& [name, counts] : d.source_counts) {
      w.Str(name.first);
      w.I64(name.second);
      EncodeRecordCounts(counts, w);
    }
  }
  w.Str(d.alerts);
  std::string payload = w.Take();

  std::string out(kMagic);
  PutFixed(out, version, 4);
  PutFixed(out, payload.size(), 8);
  PutFixed(out, Hash64(payload), 8);
  out += payload;
  return out;
}

Result<CheckpointData> DecodeCheckpoint(std::string_view bytes, Symbols& symbols) {
  if (bytes.size() < kHeaderBytes || bytes.substr(0, kMagic.size()) != kMagic) {
    return Status::Corrupt("not a seismo checkpoint (bad magic or too short)");
  }
  auto version = static_cast<uint32_t>(GetFixed(bytes, 8, 4));
  if (version < kOldestReadableCheckpointVersion || version > kCheckpointFormatVersion) {
    return Status::Corrupt(fmt::format("incompatible format version {} (this build reads {})", version,
                                       kCheckpointFormatVersion));
  }
  uint64_t length = GetFixed(bytes, 12, 8);
  if (length != bytes.size() - kHeaderBytes) {
    return Status::Corrupt(fmt::format("truncated: payload is {} bytes, header says {}", bytes.size() - kHeaderBytes,
                                       length));
  }
  std::string_view payload = bytes.substr(kHeaderBytes);
  if (Hash64(payload) != GetFixed(bytes, 20, 8)) return Status::Corrupt("checksum mismatch");

  CheckpointData d;
  ByteReader r(payload);
  d.written_at_ms = r.I64();
  d.bucket_ms = r.I64();
  DecodeRecordCounts(r, d.counts);
  uint64_t offsets = r.Count(3);
  for (uint64_t i = 0; i < offsets && r.ok(); ++i) {
    std::string topic(r.Str());
    const int64_t partition = r.I64();
    if (partition < 0 || partition > INT32_MAX) return Status::Corrupt("a partition number out of range");
    d.kafka_offsets[{topic, static_cast<int32_t>(partition)}] = r.I64();
  }
  uint64_t files = r.Count(2);
  for (uint64_t i = 0; i < files && r.ok(); ++i) {
    std::string path(r.Str());
    d.file_lines[path] = r.I64();
  }
  uint64_t shards = r.Count(8);
  d.shards.resize(shards);
  for (ShardImage& s : d.shards) {
    if (!DecodeShardImage(r, version, symbols, s)) return Status::Corrupt("undecodable shard state");
  }
  if (version >= 5) {
    d.partitions.resize(d.shards.size());
    for (size_t i = 0; i < d.shards.size() && r.ok(); ++i) {
      const uint64_t shard = r.U64();
      if (shard > UINT32_MAX) return Status::Corrupt("a shard number out of range");
      d.shards[i].shard = static_cast<uint32_t>(shard);
      const uint8_t tagged = r.U8();
      if (tagged > 1) return Status::Corrupt("undecodable shard partition");
      if (tagged == 1) {
        std::string source(r.Str());
        const int64_t partition = r.I64();
        if (partition < -1 || partition > INT32_MAX)
          return Status::Corrupt("a partition number out of range");
        d.partitions[i] = std::make_pair(std::move(source), static_cast<int32_t>(partition));
      }
    }
  } else {
    for (size_t i = 0; i < d.shards.size(); ++i) d.shards[i].shard = static_cast<uint32_t>(i);
  }
  if (version >= 6) {
    const uint64_t n = r.Count(3);
    for (uint64_t i = 0; i < n && r.ok(); ++i) {
      std::string source(r.Str());
      const int64_t partition = r.I64();
      if (partition < -1 || partition > INT32_MAX) return Status::Corrupt("a partition number out of range");
      DecodeRecordCounts(r, d.source_counts[{std::move(source), static_cast<int32_t>(partition)}]);
    }
  }
  d.alerts = std::string(r.Str());
  if (!r.ok() || !r.at_end()) return Status::Corrupt("undecodable payload");
  return d;
}

Status WriteCheckpoint(const std::string& dir, const CheckpointData& data, const Symbols& symbols,
                       const CheckpointWriteOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("{}: {}", dir, ec.message()));
  const std::string final_path = dir + "/" + std::string(kCheckpointFile);
  const std::string tmp_path = final_path + ".tmp";
  std::string bytes = EncodeCheckpoint(data, symbols);
  int fd = open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(fmt::format("{}: {}", tmp_path, std::strerror(errno)));
  Status s;
  if (options.pause_midway_for_testing.count() > 0) {
    const std::string_view all(bytes);
    s = WriteAll(fd, all.substr(0, all.size() / 2), tmp_path);
    std::this_thread::sleep_for(options.pause_midway_for_testing);
    if (s.ok()) s = WriteAll(fd, all.substr(all.size() / 2), tmp_path);
  } else {
    s = WriteAll(fd, bytes, tmp_path);
  }
  if (s.ok() && fsync(fd) != 0) s = Status::IoError(fmt::format("{}: fsync: {}", tmp_path, std::strerror(errno)));
  if (close(fd) != 0 && s.ok()) s = Status::IoError(fmt::format("{}: close: {}", tmp_path, std::strerror(errno)));
  if (s.ok() && std::rename(tmp_path.c_str(), final_path.c_str()) != 0) {
    s = Status::IoError(fmt::format("{}: rename: {}", final_path, std::strerror(errno)));
  }
  if (!s.ok()) {
    unlink(tmp_path.c_str());
    return s;
  }
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);  // make the rename durable
    close(dfd);
  }
  return Status::Ok();
}

std::optional<CheckpointData> LoadCheckpoint(const std::string& dir, int64_t bucket_ms, Symbols& symbols,
                                            std::string* problem) {
  const std::string path = dir + "/" + std::string(kCheckpointFile);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  Result<CheckpointData> data = DecodeCheckpoint(bytes, symbols);
  std::string why;
  if (!data) {
    why = data.error().message();
  } else if (data->bucket_ms != bucket_ms) {
    why = fmt::format("written with bucket {} ms, configured bucket is {} ms", data->bucket_ms, bucket_ms);
  }
  if (why.empty()) return std::move(*data);
  if (problem != nullptr) *problem = fmt::format("{}: {}", path, why);
  return std::nullopt;
}

Result<std::string> SetAsideCheckpoint(const std::string& dir) {
  const std::string path = dir + "/" + std::string(kCheckpointFile);
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  // RENAME_NOREPLACE: a name taken already (a second set-aside within the same
  // millisecond) is never overwritten; the next suffix is tried instead.
  for (int n = 0; n < 1000; ++n) {
    const std::string aside =
        n == 0 ? fmt::format("{}.bad-{}", path, now) : fmt::format("{}.bad-{}-{}", path, now, n);
    int rc = renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && errno == EINVAL) {
      // A file system without RENAME_NOREPLACE: link() refuses a taken name too.
      rc = link(path.c_str(), aside.c_str());
      if (rc == 0) unlink(path.c_str());
    }
    if (rc == 0) return aside;
    if (errno == EEXIST) continue;
    if (errno == ENOENT) return Status::NotFound(fmt::format("{}: no such file", path));
    return Status::IoError(fmt::format("cannot move {} aside: {}", path, std::strerror(errno)));
  }
  return Status::IoError(fmt::format("cannot move {} aside: no free name", path));
}

}  // namespace seismo
