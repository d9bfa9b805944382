// The daemon's source thread: [sources] files, then Kafka, handed to the pipeline in
// chunks with backpressure (see daemon.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
#include <thread>

#include "daemon_rebalance.h"
#include "seismo/app/daemon.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/line_reader.h"
#include "seismo/shard/backoff.h"
#include "seismo/shard/chunk_builder.h"
#include "seismo/shard/pipeline.h"

namespace seismo {

bool Daemon::SubmitWithBackpressure(std::unique_ptr<DocChunk> chunk) {
  if (pipeline_->TrySubmit(chunk)) return true;
  // Workers are behind: stop fetching instead of growing memory; nothing is dropped.
  if (consumer_) {
    Status paused = consumer_->PauseAll();
    if (!paused.ok()) {
      spdlog::warn("kafka: pause failed: {}", paused.message());
    } else if (!consumer_->assignment().empty()) {
      pauses_.fetch_add(1, std::memory_order_relaxed);  // only pauses that stopped fetching
    }
  }
  Backoff backoff;
  bool submitted = true;
  while (!pipeline_->TrySubmit(chunk)) {
    // Past the shutdown deadline nothing handed from now on will be checkpointed
    // (every barrier fails), so the chunk can be left unsubmitted.
    if (std::chrono::steady_clock::now() >= ShutdownDeadline()) {
      submitted = false;
      break;
    }
    backoff.Idle();
  }
  if (consumer_) {
    // Even after a failed PauseAll(): some partitions may be paused, and PauseAll()
    // keeps pausing newly assigned ones until ResumeAll().
    Status s = consumer_->ResumeAll();
    if (!s.ok()) spdlog::warn("kafka: resume failed: {}", s.message());
  }
  return submitted;
}

void Daemon::RunSource() {
  if (waiting_for_operator_) {
    // Nothing is consumed and nothing is checkpointed: the unusable checkpoint stays
    // as it is until an operator decides (ADR 0018).
    while (!stop_source_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    drained_ = true;
    return;
  }
  // 1. Files named in [sources], read once.
  for (size_t s = 0; s < config_.sources.files.size() && !stop_source_.load(); ++s) {
    const std::string& path = config_.sources.files[s];
    auto reader = LineReader::Open(path, config_.ingest.max_document_bytes);
    if (!reader) {
      spdlog::error("sources: {}", reader.error().message());
      continue;
    }
    int64_t line_no = 0;
    const int64_t already = file_lines_[path];  // consumed before a restart
    const auto source = static_cast<uint16_t>(s);
    ChunkBuilder chunks(
        config_.ingest.max_document_bytes,
        [&](DocChunkPtr chunk) {
          handed_docs_ += chunk->docs.size();
          SubmitWithBackpressure(std::move(chunk));
          file_lines_[path] = line_no;
          MaybeCheckpoint();
        },
        chunk_docs_, [this] { return pipeline_->NewChunk(); }, config_.parse.max_depth);
    while (auto line = (*reader)->Next()) {
      ++line_no;
      if (line_no <= already) continue;
      chunks.AddLine(source, line_no, *line, (*reader)->line_bytes());
      if (stop_source_.load(std::memory_order_relaxed)) break;
    }
    chunks.EndFile(source);
    if (!(*reader)->error().ok()) spdlog::error("sources: {}: {}", path, (*reader)->error().message());
    spdlog::info("sources: read {} ({} lines)", path, line_no);
  }
  sources_done_.store(true, std::memory_order_relaxed);
  if (!consumer_) {
    while (!stop_source_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      MaybeCheckpoint();
    }
    drained_ = WaitForPipeline();
    // A failure is logged and counted; the previous checkpoint stays.
    if (drained_) static_cast<void>(Checkpoint());
    return;
  }

  // 2. Kafka, until told to stop. Every partition is a source of its own (ADR 0017).
  std::set<SourceKey> delivering;  // partitions that delivered since they last went idle
  // Up to chunk_docs_ documents a poll: the batch bounds a chunk's documents.
  ChunkBuilder chunks(
      config_.ingest.max_document_bytes,
      [this](DocChunkPtr chunk) {
        handed_docs_ += chunk->docs.size();
        SubmitWithBackpressure(std::move(chunk));
      },
      std::numeric_limits<size_t>::max(), [this] { return pipeline_->NewChunk(); }, config_.parse.max_depth);
  while (!stop_source_.load(std::memory_order_relaxed)) {
    KafkaMessageBatch batch = consumer_->Poll(chunk_docs_, std::chrono::milliseconds(100));
    chunks.Reserve(batch.payload_bytes());
    for (const KafkaMessage& m : batch) {
      if (!rebalance_->handed.Accept(m.topic(), m.partition(), m.offset())) continue;  // seen already
      const SourceKey source = KafkaSource(m.topic(), m.partition());
      if (!reread_undated_.empty()) NoteRereadTime(m.topic(), m.partition(), m.timestamp_ms());
      chunks.AddMessage(source.source, m.partition(), m.offset(), m.timestamp_ms(), m.payload());
      delivering.insert(source);
    }
    // A partition with nothing left to read (or given up) stops holding stream time back
    // until it delivers again.
    for (const KafkaPartitionStats& p : consumer_->stats().partitions) {
      if (p.lag != 0) continue;
      auto it = delivering.find(KafkaSource(p.tp.topic, p.tp.partition));
      if (it == delivering.end()) continue;
      chunks.chunk().idle.push_back(*it);
      delivering.erase(it);
    }
    for (const SourceKey& gone : gone_partitions_) {
      delivering.erase(gone);
      chunks.chunk().idle.push_back(gone);
    }
    gone_partitions_.clear();
    if (!chunks.empty()) chunks.Flush();
    MaybeCheckpoint();
  }
  drained_ = WaitForPipeline();
  // A failure is logged and counted; the previous checkpoint stays.
  if (drained_) static_cast<void>(Checkpoint());
  closing_ = true;                     // the revoke Close() makes does not end a hold (StallGuard)
  Status closed = consumer_->Close();  // commits the checkpointed offsets through OnRevoking
  if (!closed.ok()) spdlog::warn("kafka: close: {}", closed.message());
}

SourceKey Daemon::KafkaSource(std::string_view topic, int32_t partition) const {
  const auto& topics = config_.kafka.topics;
  const auto at = std::find(topics.begin(), topics.end(), topic);
  return SourceKey{
      static_cast<uint16_t>(config_.sources.files.size() + static_cast<size_t>(at - topics.begin())),
      partition};  // past the last topic: "(other topic)"
}

}  // namespace seismo
