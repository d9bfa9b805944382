#include "seismo/app/replay.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "seismo/app/dead_letters.h"
#include "seismo/app/phase_times.h"
#include "seismo/ingest/line_reader.h"
#include "seismo/shard/chunk_builder.h"
#include "seismo/shard/pipeline.h"
#include "seismo/signature/generator.h"

namespace seismo {

namespace {

// Chunks a file's reader may run ahead of each parse worker (see RunReplay).
constexpr size_t kReplayQueueChunks = 4;
constexpr size_t kMaxInputs = UINT16_MAX;

// About the most distinct texts and stacks a replay's input holds per byte (the dense
// corpus: one text per 650 bytes, one stack per 2 600; padded pings far fewer). The intern
// tables get room for them ahead, capped, and grow only past it (InternTable::Reserve).
constexpr uint64_t kInputBytesPerText = 512;
constexpr uint64_t kInputBytesPerStack = 2048;
constexpr uint64_t kMaxReservedIds = uint64_t{1} << 22;

// Redraws one status line on stderr about four times a second.
class ProgressBar {
 public:
  ProgressBar(const PipelineCounters& counters, const std::atomic<uint64_t>& read,
              std::optional<uint64_t> total)
      : counters_(counters), read_(read), total_(total), thread_([this] { Loop(); }) {}
  ~ProgressBar() {
    done_.store(true);
    thread_.join();
    std::fputs("\r\033[K", stderr);
  }

 private:
  void Loop() {
    auto start = std::chrono::steady_clock::now();
    while (!done_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      uint64_t docs = counters_.documents.load(std::memory_order_relaxed);
      uint64_t bytes = counters_.bytes.load(std::memory_order_relaxed);
      std::string pct;
      if (total_ && *total_ > 0) {
        double f = std::min(1.0, static_cast<double>(read_.load()) / static_cast<double>(*total_));
        int filled = static_cast<int>(f * 30);
        pct = fmt::format("[{}{}] {:3.0f}% ", std::string(filled, '#'), std::string(30 - filled, '.'),
                          f * 100);
      }
      std::fprintf(stderr, "\r\033[K%s%llu records  %.0f records/s  %.1f MB/s", pct.c_str(),
                   static_cast<unsigned long long>(docs), docs / std::max(secs, 1e-9),
                   bytes / 1e6 / std::max(secs, 1e-9));
      std::fflush(stderr);
    }
  }

  const PipelineCounters& counters_;
  const std::atomic<uint64_t>& read_;
  std::optional<uint64_t> total_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<SignatureGenerator>> LoadSignatures(const Config& config) {
  if (config.crashes.siglists_dir.empty()) return SignatureGenerator::LoadDefault();
  return SignatureGenerator::LoadFromDir(config.crashes.siglists_dir);
}

Result<ReplayResult> RunReplay(const Config& config, const std::vector<std::string>& inputs,
                               const SignatureGenerator* signatures, const ReplayOptions& options) {
  std::optional<uint64_t> total = 0;
  PipelineOptions po = ToPipelineOptions(config);
  po.ingest_nice = 0;  // every thread of a replay is ingest: nothing to put first
  // A file is read several times faster than it is parsed and never comes in bursts: a
  // few chunks ahead of each worker keep it busy. [ingest] queue_chunks is sized for
  // Kafka's bursts; with it the reader first filled 64 fresh 1 MiB chunks per worker,
  // and the page faults took a third of a replay's system time (docs/benchmarks.md).
  po.chunk_ring_capacity = std::min(po.chunk_ring_capacity, kReplayQueueChunks);
  // Every input is checked before the first is read, and each is opened at its turn: a
  // replay of an archive of thousands of files holds one descriptor and one buffer. A
  // source is 16 bits (UINT16_MAX is no file's, Pipeline::kUnscopedSource).
  if (inputs.size() > kMaxInputs) {
    return Status::InvalidArgument(
        fmt::format("{} inputs: a replay reads at most {} (concatenate some: "
                    "`cat` or `zcat` into one, or `-` for stdin)",
                    inputs.size(), kMaxInputs));
  }
  for (const std::string& path : inputs) {
    auto size = LineReader::Check(path);
    if (!size) return size.error();
    if (total && *size) {
      *total += **size;
    } else {
      total.reset();
    }
    po.sources.push_back({path == "-" ? std::string("stdin") : path, std::nullopt});
  }

  auto opened = OpenDeadLetters(config);
  if (!opened) return opened.error();
  std::unique_ptr<DeadLetterSink> dead_letters = std::move(*opened);

  SystemClock system_clock;
  auto symbols = std::make_unique<Symbols>();
  if (total) {  // files' sizes, compressed or not (stdin has none)
    symbols->Reserve(std::min(*total / kInputBytesPerText, kMaxReservedIds),
                     std::min(*total / kInputBytesPerStack, kMaxReservedIds));
  }
  Pipeline pipeline(po, symbols.get(), signatures, dead_letters.get(),
                    options.clock ? options.clock : &system_clock);
  pipeline.Start();
  if (options.phases != nullptr) options.phases->Mark("setup");
  auto start = std::chrono::steady_clock::now();
  std::atomic<uint64_t> read_bytes{0};
  uint64_t finished_bytes = 0;
  Status read_error;
  {
    std::unique_ptr<ProgressBar> bar;
    if (options.progress) bar = std::make_unique<ProgressBar>(pipeline.counters(), read_bytes, total);
    for (size_t s = 0; s < inputs.size() && read_error.ok(); ++s) {
      auto input = LineReader::Open(inputs[s], config.ingest.max_document_bytes);
      if (!input) {
        read_error = input.error();  // gone or changed since it was checked
        break;
      }
      LineReader& reader = **input;
      const auto source = static_cast<uint16_t>(s);
      ChunkBuilder chunks(
          config.ingest.max_document_bytes,
          [&pipeline](DocChunkPtr chunk) { pipeline.Submit(std::move(chunk)); }, kChunkDocs,
          [&pipeline] { return pipeline.NewChunk(); }, config.parse.max_depth);
      int64_t line_no = 0;
      while (std::optional<std::string_view> line = reader.Next()) {
        ++line_no;
        if (chunks.AddLine(source, line_no, *line, reader.line_bytes())) {
          (void)pipeline.MaybeSweep(std::chrono::hours(1));  // a replay has no deadline
          read_bytes.store(finished_bytes + reader.bytes_read(), std::memory_order_relaxed);
        }
      }
      // The file's last documents, and its end: its held documents are decided, and it no
      // longer holds stream time back (the next file starts from where this one left it).
      chunks.EndFile(source);
      finished_bytes += reader.bytes_read();
      read_bytes.store(finished_bytes, std::memory_order_relaxed);
      if (!reader.error().ok()) {
        read_error = Status::IoError(po.sources[s].name + ": " + reader.error().message());
      }
    }
    pipeline.Finish();
  }
  if (!read_error.ok()) return read_error;
  ReplayResult result;
  result.ingest_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.phases != nullptr) options.phases->Mark("ingest");
  result.snapshot = pipeline.FinalSnapshot();  // what the output and the alert rules read
  result.symbols = std::move(symbols);
  if (options.phases != nullptr) options.phases->Mark("merge");
  result.counts = CountsOf(pipeline.counters());
  result.input_bytes = result.counts.bytes;
  return result;
}

}  // namespace seismo
