// Writes an output file from a writer that streams into a sink (replay output is written as
// it is made), on a thread of its own (ADR 0041):
//
//   write(sink) ──Write(piece)──> WritingThread ──pieces, at most kPiecesAhead──> its thread
//                                                                    ──fwrite──> the file
//
// Where it goes:
//   - "-": stdout;
//   - a path that is a device, a FIFO, a socket or a symbolic link (`/dev/null`,
//     `/dev/stdout`, a shell's `>(gzip > out.gz)`, a link to a file): written to as it is,
//     never replaced;
//   - any other path: atomically, into `<path>.tmp` put in its place once whole
//     (ReplaceFile: a reader never sees half a file, nor none; on an error, or an exception
//     from the writer, the temporary file is removed and the old file stays as it was).
//     Nothing is synced to disk: after a power cut the file may be short (ADR 0044).
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "seismo/core/status.h"
#include "seismo/query/output_sink.h"

namespace seismo {

// `write` fills the sink; a newline ends the file.
Status WriteOutputFile(const std::string& path, const std::function<void(OutputSink&)>& write);
Status WriteOutputFile(const std::string& path, std::string_view content);

// Puts the file `from` in the place of `path` atomically: a reader of `path` finds the old file
// or the new one, never none. Over an existing file, renameat2's RENAME_EXCHANGE swaps the two
// names and the old file is then removed under `from`'s: a plain rename over it made ext4 write
// the new file's pages out first (its auto_da_alloc: 5 ms for 10 MB, 20 ms for 50 MB, against
// 0.5 and 2.6 ms; ADR 0044). Otherwise, or where the exchange is refused, a rename. 0, or the
// errno of the failure (`from` is then still there). A process killed between the exchange
// and the unlink leaves the old file at `from` (`<path>.tmp`, truncated by the next run).
int ReplaceFile(const std::string& from, const std::string& path);

// A sink whose bytes a thread of its own writes to `file`, a piece of about kPieceBytes at a
// time, while the caller makes the next ones: the kernel's copy of a 50 MB output into the
// page cache (about 0.1 s here) overlaps the making instead of following it. At most
// kPiecesAhead pieces wait; Write blocks past that. Finish() writes what is left and joins
// the thread (the destructor does too). The sink owns no stream: its owner opens `file`
// and, after Finish, flushes and closes it.
class WritingThread;
class ThreadedFileSink final : public OutputSink {
 public:
  static constexpr size_t kPieceBytes = size_t{1} << 20;
  static constexpr size_t kPiecesAhead = 4;

  explicit ThreadedFileSink(std::FILE* file);
  ~ThreadedFileSink() override;
  ThreadedFileSink(const ThreadedFileSink&) = delete;
  ThreadedFileSink& operator=(const ThreadedFileSink&) = delete;

  void Write(std::string_view bytes) override;
  // Queues `piece` as it is, without the copy Write makes, once the bytes before it are
  // queued (else: as Write), and gives back a written piece's string, or a new one with room
  // for a piece.
  std::string Hand(std::string piece) override;
  // Hands the last bytes on and waits until every piece is written: 0 when every byte was,
  // else the errno of the first write that came short (later bytes are dropped).
  int Finish();

 private:
  std::unique_ptr<WritingThread> thread_;  // until Finish
  std::string filling_;                    // the piece being made, on the caller's thread
  int error_ = 0;
  bool finished_ = false;
};

}  // namespace seismo
