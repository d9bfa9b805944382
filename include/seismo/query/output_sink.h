// OutputSink: where a long output goes as it is made (replay output of SPEC §6.4:
// tens of MB), so it is never held whole in memory.
//
//   WriteReplayOutput ──Write(piece ~1 MiB)──> FileOutputSink ──fwrite──> FILE*
//
// The commands write through app/output_file.h's ThreadedFileSink instead, whose own thread
// fwrites while the next pieces are made (ADR 0041).
//
// Ownership: a sink borrows what it writes to. Threading: one writer at a time.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace seismo {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // Appends `bytes`. A sink that failed keeps accepting (and dropping) bytes; its
  // owner checks for failure once at the end.
  virtual void Write(std::string_view bytes) = 0;
  // Takes a whole piece (`piece`, its bytes after those written so far) and gives back an
  // empty string to make the next one in. A sink that keeps pieces (ThreadedFileSink) takes
  // it without copying its bytes and gives back one it has written, with its capacity; this
  // one writes it and gives it back emptied.
  virtual std::string Hand(std::string piece) {
    Write(piece);
    piece.clear();
    return piece;
  }
};

// Writes to a stdio stream it does not own (fwrite; the caller flushes and closes).
class FileOutputSink final : public OutputSink {
 public:
  explicit FileOutputSink(std::FILE* file) : file_(file) {}
  void Write(std::string_view bytes) override;
  // False once a write came short (errno tells why).
  bool ok() const { return ok_; }

 private:
  std::FILE* file_;
  bool ok_ = true;
};

}  // namespace seismo
