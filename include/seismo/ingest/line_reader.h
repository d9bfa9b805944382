// LineReader: NDJSON input from a file (plain, .gz, .zst) or standard input
// ("-"), one line at a time, without copying lines that fit the read buffer.
//
// Ownership: returned by Open(); the caller owns it. Threading: single thread.
// A line returned by Next() stays valid until the next call to Next().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "seismo/core/status.h"

namespace seismo {

class LineReader {
 public:
  virtual ~LineReader() = default;

  // Opens `path`; the format is chosen by its suffix (".gz", ".zst"), "-" is stdin.
  // Lines longer than `max_line_bytes` are cut (see Next()); the reader then holds
  // at most max_line_bytes + 1 MiB, however long a line is.
  static Result<std::unique_ptr<LineReader>> Open(const std::string& path, size_t max_line_bytes = SIZE_MAX);

  // What Open would refuse of `path`, found without keeping it open (a caller with many
  // inputs opens each at its turn: a replay of 10 000 files holds one descriptor and one
  // buffer): an error for a path that does not exist, is a directory or cannot be read;
  // else its size when it is a regular file. "-", a pipe or a device: nullopt, and not
  // opened here (opening a FIFO waits for its writer, and closing it would end the stream).
  static Result<std::optional<uint64_t>> Check(const std::string& path);

  // The next line without its '\n' (and without a trailing '\r'), or nullopt at
  // the end of input or on a read error (then error() is set). A line longer than
  // max_line_bytes comes back as its first max_line_bytes bytes; the rest of it is
  // read and dropped up to the next newline, never held.
  virtual std::optional<std::string_view> Next() = 0;

  // The whole length of the line Next() returned last, '\r' included: more than
  // that line's size when it was cut.
  virtual uint64_t line_bytes() const = 0;

  // Compressed bytes consumed so far (for progress), and total size if known.
  virtual uint64_t bytes_read() const = 0;
  virtual std::optional<uint64_t> total_bytes() const = 0;

  // OK unless reading or decompressing failed.
  virtual const Status& error() const = 0;
};

}  // namespace seismo
