#include "seismo/cluster/publish_ledger.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <utility>

#include "seismo/core/hash.h"

namespace seismo {
namespace {

// Each series' newest bucket among the partials.
using NewestBuckets = absl::flat_hash_map<SeriesKey, int64_t>;
NewestBuckets NewestBucketOfEachSeries(const std::vector<PartialRecord>& partials) {
  NewestBuckets out;
  for (const PartialRecord& p : partials) {
    for (const SeriesImage& s : p.series) {
      auto [it, inserted] = out.try_emplace(s.key, p.where.bucket);
      it->second = std::max(it->second, p.where.bucket);
    }
  }
  return out;
}

// The partial's contents without the offset and stream time it carries, and without the
// series' own installs sketches and first times (publish_ledger.h).
uint64_t ValuesHash(const PartialRecord& p, const Symbols& symbols) {
  PartialRecord copy;
  copy.where = p.where;
  copy.parts = p.parts;
  copy.bucket_ms = p.bucket_ms;
  copy.owner = p.owner;
  copy.series = p.series;
  for (SeriesImage& s : copy.series) {
    s.installs = HyperLogLog();
    s.first_ms = 0;
  }
  return Hash64(EncodePartial(copy, symbols));
}

uint64_t SketchHash(const SeriesImage& s) {
  const auto& sparse = s.installs.sparse();
  const auto& dense = s.installs.dense();
  uint64_t h = Hash64({reinterpret_cast<const char*>(sparse.data()), sparse.size() * sizeof(uint32_t)},
                      static_cast<uint64_t>(s.first_ms));
  return Hash64({reinterpret_cast<const char*>(dense.data()), dense.size()}, h);
}

}  // namespace

void PublishLedger::Diff(const CountsRecord& counts, const std::vector<PartialRecord>& partials,
                         const Symbols& symbols, std::vector<OutgoingRecord>& out) {
  const PartitionId id{counts.topic, counts.partition};
  auto before_it = committed_.find(id);
  static const Sent kNothing;
  const Sent& before = before_it == committed_.end() ? kNothing : before_it->second;
  Sent now;
  const NewestBuckets newest = NewestBucketOfEachSeries(partials);
  for (const PartialRecord& p : partials) {
    std::string key = PartialKey(p.where);
    const uint64_t hash = ValuesHash(p, symbols);
    auto it = before.hashes.find(key);
    bool send = it == before.hashes.end() || it->second != hash;
    for (const SeriesImage& s : p.series) {
      if (newest.at(s.key) != p.where.bucket) continue;  // its newest bucket's record carries it
      const uint64_t sketch = SketchHash(s);
      auto was = before.series.find(s.key);
      send = send || was == before.series.end() || was->second != sketch;
      now.series[s.key] = sketch;  // as sent now, or as sent before (unchanged)
    }
    if (send) out.push_back({key, EncodePartial(p, symbols)});
    now.hashes.emplace(std::move(key), hash);
  }
  for (const auto& [key, hash] : before.hashes) {
    if (!now.hashes.contains(key)) out.push_back({key, std::nullopt});
  }
  std::string encoded = EncodeCounts(counts);
  now.counts = Hash64(encoded);
  if (now.counts != before.counts)
    out.push_back({CountsKey(counts.topic, counts.partition), std::move(encoded)});
  pending_[id] = std::move(now);
}

void PublishLedger::Commit() {
  for (auto& [id, sent] : pending_) committed_[id] = std::move(sent);
  pending_.clear();
}

void PublishLedger::Abort() { pending_.clear(); }

void PublishLedger::Forget(const std::string& topic, int32_t partition) {
  committed_.erase({topic, partition});
  pending_.erase({topic, partition});
}

void PublishLedger::MarkIds(std::vector<uint64_t>& text, std::vector<uint64_t>& stacks) const {
  for (const auto* sent : {&committed_, &pending_}) {
    for (const auto& [id, s] : *sent) {
      for (const auto& [key, hash] : s.series) MarkKeyIds(key, text, stacks);
    }
  }
}

size_t PublishLedger::keys() const {
  size_t n = 0;
  for (const auto& [id, sent] : committed_) n += sent.hashes.size();
  return n;
}

}  // namespace seismo
