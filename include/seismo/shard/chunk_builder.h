// ChunkBuilder: fills the DocChunks a source hands to the Pipeline, one document at a
// time, and hands each one on once it is full (kChunkBytes, or `max_docs` documents).
// The one place that knows how a document becomes a DocRef: the line of a file (blank
// lines skipped, numbered from 1) or the message of a Kafka partition (its offset and
// transport time); the bytes kept of one over max_document_bytes are AddDocument's.
//
// What "hand on" means is the source's: a blocking Pipeline::Submit (replay) or a
// submit with backpressure that pauses Kafka (the daemon). Markers that follow the
// documents (idle, ended) go into chunk() before Flush().
//
// Ownership: owns the chunk in hand. Threading: one source thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>

#include "seismo/shard/pipeline.h"

namespace seismo {

// Documents per chunk at most, for file sources (≈1 MB of pings).
inline constexpr size_t kChunkDocs = 2048;

class ChunkBuilder {
 public:
  using Sink = std::function<void(DocChunkPtr)>;
  using NewChunk = std::function<DocChunkPtr()>;
  // `max_docs`: the chunk is handed on once it holds that many documents (no limit by
  // default: a Kafka poll's batch bounds them already). `new_chunk` gives the empty chunks
  // to fill (Pipeline::NewChunk; by default new ones). `max_depth`: the parser's
  // (ParseOptions::max_depth), to scan each document for too_deep as it is copied in
  // (AddDocument); 0: the parse worker scans it.
  ChunkBuilder(size_t max_document_bytes, Sink sink, size_t max_docs = std::numeric_limits<size_t>::max(),
               NewChunk new_chunk = nullptr, size_t max_depth = 0);

  // Line `line_no` of the file that is source `source`; `full_bytes` as AddDocument's (the
  // size of a line LineReader cut, else 0). A blank line (spaces and tabs only) is no
  // document. True when the chunk filled and was handed on.
  bool AddLine(uint16_t source, int64_t line_no, std::string_view line, uint64_t full_bytes);
  // The message at `offset` of a Kafka partition that is source `source`. True when the
  // chunk filled and was handed on.
  bool AddMessage(uint16_t source, int32_t partition, int64_t offset, std::optional<int64_t> timestamp_ms,
                  std::string_view payload);
  // The file that is source `source` was read to its end: its last documents and its end
  // go on together (its held documents are decided, and it no longer holds stream time).
  void EndFile(uint16_t source);

  // The chunk in hand, for the markers after its documents.
  DocChunk& chunk() { return *chunk_; }
  // Nothing in hand: no documents and no markers.
  bool empty() const;
  // Room for `bytes` of documents in the chunk in hand (at most kChunkBytes).
  void Reserve(uint64_t bytes);
  // Hands the chunk in hand on, as it is, and starts the next one.
  void Flush();

 private:
  bool Add(const DocRef& ref, std::string_view body, uint64_t full_bytes);

  size_t max_document_bytes_;
  Sink sink_;
  size_t max_docs_;
  NewChunk new_chunk_;
  size_t max_depth_;
  DocChunkPtr chunk_;
};

}  // namespace seismo
