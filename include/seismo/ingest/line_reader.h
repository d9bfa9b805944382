// LineReader: NDJSON input from a file (plain, .gz, .zst) or standard input
// ("-"), one line at a time, without copying lines that fit the read buffer.
//
// Ownership: returned by Open(); the caller owns it. Threading: single thread.
// A line returned by Next() stays valid until the next call to Next().
#pragma once

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
  static Result<std::unique_ptr<LineReader>> Open(const std::string& path);

  // The next line without its '\n' (and without a trailing '\r'), or nullopt at
  // the end of input or on a read error (then error() is set).
  virtual std::optional<std::string_view> Next() = 0;

  // Compressed bytes consumed so far (for progress), and total size if known.
  virtual uint64_t bytes_read() const = 0;
  virtual std::optional<uint64_t> total_bytes() const = 0;

  // OK unless reading or decompressing failed.
  virtual const Status& error() const = 0;
};

}  // namespace seismo
