#include "seismo/app/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "seismo/core/mutex.h"

namespace seismo {

// The thread of a ThreadedFileSink and the pieces between the two.
class WritingThread {
 public:
  explicit WritingThread(std::FILE* file) : file_(file), thread_([this] { Run(); }) {}
  ~WritingThread() { Join(); }
  WritingThread(const WritingThread&) = delete;
  WritingThread& operator=(const WritingThread&) = delete;

  // Queues `piece` (waiting while kPiecesAhead wait already) and gives back an empty string
  // to fill next: one the thread has written, with its capacity, when there is one.
  std::string HandOn(std::string piece) {
    MutexLock lock(mu_);
    while (queued_.size() >= ThreadedFileSink::kPiecesAhead) cv_.Wait(mu_);
    queued_.push_back(std::move(piece));
    cv_.NotifyAll();
    if (written_.empty()) return {};
    std::string next = std::move(written_.back());
    written_.pop_back();
    return next;
  }
  // Waits until every queued piece is written and the thread has ended; its error (0: none).
  int Join() {
    {
      MutexLock lock(mu_);
      done_ = true;
    }
    cv_.NotifyAll();
    if (thread_.joinable()) thread_.join();
    MutexLock lock(mu_);
    return error_;
  }

 private:
  void Run() {
    int error = 0;  // this thread's; the first short write's errno
    for (;;) {
      std::string piece;
      {
        MutexLock lock(mu_);
        while (queued_.empty() && !done_) cv_.Wait(mu_);
        if (queued_.empty()) {
          error_ = error;
          return;
        }
        piece = std::move(queued_.front());
        queued_.pop_front();
      }
      cv_.NotifyAll();  // room for another piece
      if (error == 0) {
        errno = 0;  // a short write that sets none is an EIO, not what an earlier call left
        if (std::fwrite(piece.data(), 1, piece.size(), file_) != piece.size())
          error = errno != 0 ? errno : EIO;
      }
      piece.clear();
      MutexLock lock(mu_);
      written_.push_back(std::move(piece));
    }
  }

  std::FILE* const file_;  // this thread's alone until it has ended
  Mutex mu_;
  CondVar cv_;
  std::deque<std::string> queued_ GUARDED_BY(mu_);
  std::vector<std::string> written_ GUARDED_BY(mu_);  // emptied, for the next pieces
  bool done_ GUARDED_BY(mu_) = false;
  int error_ GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: starts once the members above are made
};

ThreadedFileSink::ThreadedFileSink(std::FILE* file) : thread_(std::make_unique<WritingThread>(file)) {
  filling_.reserve(kPieceBytes + kPieceBytes / 2);
}

ThreadedFileSink::~ThreadedFileSink() {
  try {
    (void)Finish();
  } catch (...) {  // no memory for the last piece: it is dropped, and the thread still joined
    if (thread_) error_ = thread_->Join();
  }
}

void ThreadedFileSink::Write(std::string_view bytes) {
  filling_.append(bytes);
  if (filling_.size() >= kPieceBytes) filling_ = thread_->HandOn(std::move(filling_));
}

std::string ThreadedFileSink::Hand(std::string piece) {
  if (!filling_.empty() || piece.empty()) return OutputSink::Hand(std::move(piece));  // after those bytes
  std::string next = thread_->HandOn(std::move(piece));
  if (next.capacity() == 0) next.reserve(kPieceBytes + kPieceBytes / 2);
  return next;
}

int ThreadedFileSink::Finish() {
  if (finished_) return error_;
  finished_ = true;
  if (!filling_.empty()) (void)thread_->HandOn(std::move(filling_));
  error_ = thread_->Join();
  thread_.reset();
  return error_;
}

namespace {

// Writes the output and its closing newline to `f`, which it closes (`close`) or flushes;
// the errno of the first failure (0: none). An exception from `write` is rethrown once the
// writing thread has ended and `f` is closed.
int WriteAndClose(std::FILE* f, const std::function<void(OutputSink&)>& write, bool close) {
  int error = 0;
  std::exception_ptr thrown;
  {
    ThreadedFileSink sink(f);
    try {
      write(sink);
      sink.Write("\n");
      error = sink.Finish();
    } catch (...) {
      thrown = std::current_exception();
    }
  }  // joined
  if (std::fflush(f) != 0 && error == 0) error = errno;
  if (close && std::fclose(f) != 0 && error == 0) error = errno;
  if (thrown) std::rethrow_exception(thrown);
  return error;
}

Status Failed(const std::string& where, int error) {
  return Status::IoError(where + ": " + std::strerror(error != 0 ? error : EIO));
}

// A path written to where it is: a device, a FIFO or a socket, or a symbolic link (to a
// file, or `/dev/stdout` to `/proc/self/fd/1` to wherever stdout goes). Replacing it by a
// renamed file would be wrong (`--output /dev/null` as root made /dev/null a regular file, and
// a link would become a file) or impossible (no right to create a file beside it).
bool WrittenInPlace(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

}  // namespace

int ReplaceFile(const std::string& from, const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) {
    if (::unlink(from.c_str()) == 0) return 0;
    // What was at `path` could not be removed: made a directory since the lstat, say. The
    // names go back as they were, and the rename below fails (or succeeds) as it would have.
    // Where they cannot go back, the new file is in place: done, the old one left at `from`.
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) != 0) return 0;
  }
  return std::rename(from.c_str(), path.c_str()) == 0 ? 0 : errno;
}

Status WriteOutputFile(const std::string& path, const std::function<void(OutputSink&)>& write) {
  if (path == "-") {
    const int error = WriteAndClose(stdout, write, /*close=*/false);
    return error == 0 ? Status::Ok() : Failed("stdout", error);
  }
  if (WrittenInPlace(path)) {
    std::FILE* f = std::fopen(path.c_str(), "we");
    if (f == nullptr) return Failed(path, errno);
    const int error = WriteAndClose(f, write, /*close=*/true);
    return error == 0 ? Status::Ok() : Failed(path, error);
  }
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "we");
  if (f == nullptr) return Failed(path, errno);
  int error = 0;
  try {
    error = WriteAndClose(f, write, /*close=*/true);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (error == 0) error = ReplaceFile(tmp, path);
  if (error != 0) {
    std::remove(tmp.c_str());
    return Failed(path, error);
  }
  return Status::Ok();
}

Status WriteOutputFile(const std::string& path, std::string_view content) {
  return WriteOutputFile(path, [&](OutputSink& sink) { sink.Write(content); });
}

}  // namespace seismo
