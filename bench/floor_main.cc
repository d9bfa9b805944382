// seismo_floor: the parse floor as a whole process (scripts/bench, SPEC §8).
//
//   seismo_floor [--keyed] FILE...
//
// --keyed: also key every hang frame and stack as an exact aggregation must (FloorKeys in
// floor.h), the floor of what seismo does rather than of what it reads.
//
// Reads each NDJSON file in 4 MiB blocks into one reused, padded buffer (the
// same read(2) pattern as seismo's LineReader, without its copy per line),
// and runs FloorExtractor (floor.h: simdjson On-Demand over the fields seismo
// reads) on each document in place. One thread. Prints one JSON object to
// stdout: documents, bytes, errors, what was read, the in-process time and the
// part of it spent parsing. scripts/bench times the whole process from outside.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "floor.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kBlock = 4 << 20;

}  // namespace

int main(int argc, char** argv) {
  const bool keyed = argc > 1 && std::strcmp(argv[1], "--keyed") == 0;
  if (argc < 2 + (keyed ? 1 : 0)) {
    std::fprintf(stderr, "usage: seismo_floor [--keyed] FILE...\n");
    return 2;
  }
  const auto t0 = Clock::now();
  seismo::bench::FloorExtractor extractor;
  seismo::bench::FloorTotals totals;
  seismo::bench::FloorKeys keys;
  if (keyed) totals.keys = &keys;
  uint64_t bytes = 0;
  double parse_s = 0;
  // [carried partial line][new block][padding]
  std::vector<char> buffer;
  for (int a = keyed ? 2 : 1; a < argc; ++a) {
    const int fd = open(argv[a], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      std::fprintf(stderr, "seismo_floor: cannot read %s: %s\n", argv[a], std::strerror(errno));
      return 1;
    }
    size_t held = 0;  // bytes of an unfinished line at the start of the buffer
    for (;;) {
      if (buffer.size() < held + kBlock + simdjson::SIMDJSON_PADDING) {
        buffer.resize(held + kBlock + simdjson::SIMDJSON_PADDING);
      }
      const ssize_t n = read(fd, buffer.data() + held, kBlock);
      if (n < 0) {
        std::fprintf(stderr, "seismo_floor: %s: %s\n", argv[a], std::strerror(errno));
        return 1;
      }
      const size_t end = held + static_cast<size_t>(n);
      const bool eof = n == 0;
      const auto p0 = Clock::now();
      size_t begin = 0;
      for (;;) {
        const void* nl = std::memchr(buffer.data() + begin, '\n', end - begin);
        if (nl == nullptr && !(eof && begin < end)) break;
        const size_t line_end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - buffer.data()) : end;
        const size_t length = line_end - begin;
        if (length > 0) {
          // What follows the line in the buffer (the next lines, the padding) is its padding.
          extractor.Extract(
              simdjson::padded_string_view(buffer.data() + begin, length, buffer.size() - begin), totals);
          bytes += length;
        }
        begin = line_end + 1;
        if (nl == nullptr) break;
      }
      parse_s += std::chrono::duration<double>(Clock::now() - p0).count();
      if (eof) break;
      held = begin < end ? end - begin : 0;
      if (held > 0) std::memmove(buffer.data(), buffer.data() + begin, held);
    }
    close(fd);
  }
  std::printf(
      "{\"documents\":%llu,\"bytes\":%llu,\"errors\":%llu,\"frames_read\":%llu,\"string_bytes_read\":%llu,"
      "\"texts\":%zu,\"series\":%zu,\"parse_s\":%.6f,\"total_s\":%.6f}\n",
      static_cast<unsigned long long>(totals.documents), static_cast<unsigned long long>(bytes),
      static_cast<unsigned long long>(totals.errors), static_cast<unsigned long long>(totals.frames),
      static_cast<unsigned long long>(totals.string_bytes), keys.texts(), keys.series(), parse_s,
      std::chrono::duration<double>(Clock::now() - t0).count());
  return totals.errors == 0 ? 0 : 1;
}
