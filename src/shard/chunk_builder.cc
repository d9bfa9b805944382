#include "seismo/shard/chunk_builder.h"

#include <algorithm>
#include <utility>

namespace seismo {

ChunkBuilder::ChunkBuilder(size_t max_document_bytes, Sink sink, size_t max_docs, NewChunk new_chunk,
                           size_t max_depth)
    : max_document_bytes_(max_document_bytes),
      sink_(std::move(sink)),
      max_docs_(max_docs),
      new_chunk_(new_chunk ? std::move(new_chunk) : [] { return std::make_unique<DocChunk>(); }),
      max_depth_(max_depth),
      chunk_(new_chunk_()) {}

bool ChunkBuilder::AddLine(uint16_t source, int64_t line_no, std::string_view line, uint64_t full_bytes) {
  if (line.find_first_not_of(" \t") == std::string_view::npos) return false;  // blank line
  DocRef ref;
  ref.source = source;
  ref.position = line_no;
  return Add(ref, line, full_bytes);
}

bool ChunkBuilder::AddMessage(uint16_t source, int32_t partition, int64_t offset,
                              std::optional<int64_t> timestamp_ms, std::string_view payload) {
  DocRef ref;
  ref.source = source;
  ref.partition = partition;
  ref.position = offset;
  if (timestamp_ms) ref.transport_time = EventTime{*timestamp_ms};
  return Add(ref, payload, 0);
}

void ChunkBuilder::EndFile(uint16_t source) {
  chunk_->ended.push_back(SourceKey{source, -1});
  Flush();
}

bool ChunkBuilder::empty() const {
  return chunk_->docs.empty() && chunk_->idle.empty() && chunk_->ended.empty() && !chunk_->settle;
}

void ChunkBuilder::Reserve(uint64_t bytes) { chunk_->data.reserve(std::min<uint64_t>(bytes, kChunkBytes)); }

void ChunkBuilder::Flush() {
  DocChunkPtr full = std::move(chunk_);
  chunk_ = new_chunk_();
  sink_(std::move(full));
}

bool ChunkBuilder::Add(const DocRef& ref, std::string_view body, uint64_t full_bytes) {
  AddDocument(*chunk_, ref, body, full_bytes, max_document_bytes_, max_depth_);
  // Chunks stay small: 32-bit offsets into them (see DocChunk). The padding after the last
  // document is no document's.
  if (chunk_->data.size() - kParsePadding < kChunkBytes && chunk_->docs.size() < max_docs_) return false;
  Flush();
  return true;
}

}  // namespace seismo
