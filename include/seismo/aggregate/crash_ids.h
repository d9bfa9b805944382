// CrashIds: the crash document ids one source partition's states remember
// (ShardState::SeenBefore: two generations, each half a retention), by the generation
// ("epoch") they were remembered in. A cluster publishes them with the partition
// (cluster/record.h, d/ records) so a partition that moves keeps counting a crash
// once however many copies of it arrive (ADR 0024, "Crash ids").
//
// An image's current generation is labelled with its epoch, its previous one with
// the epoch before. A state that adopts ids takes the newest label as its current
// generation and the one before as its previous; older labels have expired. Ids route
// to shards as their crash deltas do (delta.h: a crash's route hash is its id), so each
// shard takes back exactly the ids it would have remembered (a partition's shards share its
// stream time: a shard one label behind would drop the same generation at its next crash).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "seismo/aggregate/shard_image.h"

namespace seismo {

// epoch -> ids, each ascending and unique.
using CrashIds = std::map<int64_t, std::vector<uint64_t>>;

// Adds an image's remembered ids under their labels (keeps each list ascending, unique).
void AddCrashIds(CrashIds& into, const ShardImage& image);

// The newest label and the ids a shard takes: those of the newest label as its current
// generation, of the label before as its previous one, of `route(id) == shard` only.
struct ShardCrashIds {
  int64_t epoch = INT64_MIN;
  std::vector<uint64_t> current;
  std::vector<uint64_t> previous;
};
template <typename Route>
ShardCrashIds CrashIdsOfShard(const CrashIds& ids, size_t shard, Route route) {
  ShardCrashIds out;
  if (ids.empty()) return out;
  out.epoch = ids.rbegin()->first;
  for (const auto& [epoch, list] : ids) {
    std::vector<uint64_t>* to = epoch == out.epoch       ? &out.current
                                : epoch == out.epoch - 1 ? &out.previous
                                                         : nullptr;
    if (to == nullptr) continue;
    for (uint64_t id : list) {
      if (route(id) == shard) to->push_back(id);
    }
  }
  return out;
}

}  // namespace seismo
