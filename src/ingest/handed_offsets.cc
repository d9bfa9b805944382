#include "seismo/ingest/handed_offsets.h"

#include <string>

namespace seismo {

bool HandedOffsets::Accept(std::string_view topic, int32_t partition, int64_t offset) {
  auto [it, inserted] = next_.try_emplace(TopicPartition{std::string(topic), partition}, offset);
  if (!inserted && offset < it->second) {
    redelivered_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  it->second = offset + 1;
  return true;
}

}  // namespace seismo
