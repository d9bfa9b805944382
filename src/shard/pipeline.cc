#include "seismo/shard/pipeline.h"

#include <algorithm>
#include <thread>

#include "seismo/shard/backoff.h"

namespace seismo {

struct Pipeline::Worker {
  Worker(const ParseOptions& o, const SignatureGenerator* g, size_t ring_capacity)
      : parser(o, g), ring(ring_capacity) {}
  Parser parser;
  SpscRing<DocChunkPtr> ring;  // producer: the source thread; consumer: this worker
  std::thread thread;
};

void AddDocument(DocChunk& chunk, DocRef ref, std::string_view body, uint64_t full_bytes,
                 size_t max_document_bytes) {
  const uint64_t size = std::max<uint64_t>(full_bytes, body.size());
  ref.cut_from_bytes = 0;
  if (size > max_document_bytes) {
    body = body.substr(0, std::min(body.size(), kMaxDeadLetterDocumentBytes));
    ref.cut_from_bytes = size;
  }
  ref.begin = static_cast<uint32_t>(chunk.data.size());
  ref.length = static_cast<uint32_t>(body.size());
  chunk.data.append(body);
  chunk.docs.push_back(ref);
}

Pipeline::Pipeline(PipelineOptions options, const SignatureGenerator* signatures,
                   DeadLetterSink* dead_letters, const Clock* clock)
    : options_(std::move(options)),
      signatures_(signatures),
      dead_letters_(dead_letters),
      clock_(clock),
      shards_(options_.shards, options_.parse_threads == 0 ? 1 : options_.parse_threads,
              options_.delta_ring_capacity, options_.aggregate, &stream_time_) {
  if (options_.parse_threads == 0) options_.parse_threads = 1;
  shards_.SetApplyDelayForTesting(options_.apply_delay_for_testing);
  for (size_t i = 0; i < options_.parse_threads; ++i) {
    workers_.push_back(
        std::make_unique<Worker>(options_.parse, signatures_, options_.chunk_ring_capacity));
  }
}

Pipeline::~Pipeline() { Finish(); }

void Pipeline::Start() {
  shards_.Start();
  for (size_t i = 0; i < workers_.size(); ++i) {
    workers_[i]->thread = std::thread([this, i] { RunWorker(i); });
  }
}

bool Pipeline::TrySubmit(DocChunkPtr& chunk) {
  const size_t docs = chunk->docs.size();
  for (size_t tries = 0; tries < workers_.size(); ++tries) {
    size_t w = next_worker_;
    next_worker_ = (next_worker_ + 1) % workers_.size();
    if (workers_[w]->ring.TryPush(chunk)) {
      submitted_docs_ += docs;
      ++chunks_submitted_;
      return true;
    }
  }
  return false;
}

bool Pipeline::WaitIdle(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  Backoff backoff;
  for (;;) {
    // acquire: pairs with the workers' release after they pushed a chunk's batches.
    bool parsed = chunks_done_.load(std::memory_order_acquire) == chunks_submitted_;
    if (parsed && shards_.Idle()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    backoff.Idle();
  }
}

void Pipeline::Restore(const RecordCounts& counts, const std::vector<ShardImage>& shards) {
  for (size_t i = 0; i < counts.by_kind.size(); ++i) counters_.records[i].store(counts.by_kind[i]);
  for (size_t i = 0; i < kRejectReasonCount; ++i) counters_.rejected[i].store(counts.rejected[i]);
  counters_.documents.store(counts.documents);
  counters_.bytes.store(counts.bytes);
  shards_.Restore(shards);
}

void Pipeline::Submit(DocChunkPtr chunk) {
  Backoff backoff;
  while (!TrySubmit(chunk)) backoff.Idle();
}

void Pipeline::Finish() {
  if (finishing_.exchange(true)) return;
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  shards_.Stop();
  int64_t st = stream_time_.load(std::memory_order_relaxed);
  if (st != INT64_MIN) shards_.AdvanceAllTo(EventTime{st});
}

void Pipeline::Abandon() {
  // relaxed: the workers only need to see it eventually; Finish() joins them.
  abandoned_.store(true, std::memory_order_relaxed);
  Finish();
}

std::shared_ptr<const Snapshot> Pipeline::FinalSnapshot() const {
  return MergeSnapshots(shards_.FinalSnapshots(), options_.aggregate.bucket_ms, options_.aggregate.windows_ms);
}

size_t Pipeline::QueuedChunks() const {
  size_t n = 0;
  for (const auto& w : workers_) n += w->ring.SizeApprox();
  return n;
}

void Pipeline::RunWorker(size_t index) {
  Worker& worker = *workers_[index];
  const size_t shard_count = shards_.shard_count();
  std::vector<DeltaBatchPtr> batches(shard_count);
  Backoff backoff;
  auto flush = [&] {
    for (size_t s = 0; s < shard_count; ++s) {
      if (batches[s] && !batches[s]->deltas.empty()) shards_.Push(index, s, std::move(batches[s]));
      batches[s].reset();
    }
  };
  for (;;) {
    if (abandoned_.load(std::memory_order_relaxed)) break;
    std::optional<DocChunkPtr> chunk = worker.ring.TryPop();
    if (!chunk) {
      // acquire: pairs with the release in Finish(); chunks pushed before it are visible.
      if (finishing_.load(std::memory_order_acquire) && worker.ring.SizeApprox() == 0) break;
      backoff.Idle();
      continue;
    }
    backoff.Reset();
    // Test seam: slept in steps, so that Abandon() is not held up by it.
    for (auto slept = std::chrono::milliseconds(0);
         slept < options_.parse_delay_for_testing && !abandoned_.load(std::memory_order_relaxed);
         slept += std::chrono::milliseconds(10)) {
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(
          std::chrono::milliseconds(10), options_.parse_delay_for_testing - slept));
    }
    if (abandoned_.load(std::memory_order_relaxed)) break;  // dropped with the queued ones
    const DocChunk& c = **chunk;
    const int64_t latest_allowed = clock_->Now().ms + options_.max_clock_skew_ms;
    int64_t chunk_max = INT64_MIN;
    for (const DocRef& ref : c.docs) {
      std::string_view body(c.data.data() + ref.begin, ref.length);
      const SourceInfo& source = options_.sources[ref.source];
      counters_.documents.fetch_add(1, std::memory_order_relaxed);  // monitoring only
      counters_.bytes.fetch_add(ref.cut_from_bytes > 0 ? ref.cut_from_bytes : ref.length,
                                std::memory_order_relaxed);
      ParseResult<ParsedDocument> parsed = ref.cut_from_bytes > 0
                                               ? ParseResult<ParsedDocument>(RejectReason::kTooLarge)
                                               : worker.parser.Parse(body, DocHints{source.kind});
      if (!parsed.ok()) {
        counters_.rejected[static_cast<size_t>(parsed.reason())].fetch_add(
            1, std::memory_order_relaxed);
        if (dead_letters_ != nullptr && parsed.reason() != RejectReason::kFiltered) {
          dead_letters_->Write(
              {parsed.reason(), source.name, ref.partition, ref.offset, body, ref.cut_from_bytes});
        }
        continue;
      }
      const ParsedDocument& doc = parsed.value();
      counters_.records[static_cast<size_t>(doc.kind)].fetch_add(1, std::memory_order_relaxed);
      EventTime t = ResolveEventTime(doc, ref.transport_time).value_or(EventTime{latest_allowed - options_.max_clock_skew_ms});
      t.ms = std::min(t.ms, latest_allowed);  // clock skew: never ahead of now + skew
      chunk_max = std::max(chunk_max, t.ms);
      DocumentToDeltas(doc, t, [&](Delta&& d) {
        size_t s = shards_.ShardFor(d.route_hash);
        if (!batches[s]) batches[s] = std::make_unique<DeltaBatch>();
        batches[s]->deltas.push_back(std::move(d));
      });
    }
    // Raise the global stream time before handing the deltas over, so shards
    // never see a delta from beyond the stream time they follow.
    int64_t seen = stream_time_.load(std::memory_order_relaxed);
    while (chunk_max > seen &&
           !stream_time_.compare_exchange_weak(seen, chunk_max, std::memory_order_relaxed)) {
    }
    flush();
    // release: the chunk's batches were pushed before it counts as done.
    chunks_done_.fetch_add(1, std::memory_order_release);
  }
  flush();
}

}  // namespace seismo
