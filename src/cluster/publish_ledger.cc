#include "seismo/cluster/publish_ledger.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

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

bool Holds(const std::vector<uint64_t>& sorted, uint64_t id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

}  // namespace

void PublishLedger::DiffCrashIds(const std::string& topic, int32_t partition, const std::string& owner,
                                 const CrashIds& crash_ids, const Sent& before, Sent& now,
                                 std::vector<OutgoingRecord>& out) {
  now.next_chunk = before.next_chunk;
  for (const std::string& key : before.stale) out.push_back({key, std::nullopt});
  int64_t newest = crash_ids.empty() ? INT64_MIN : crash_ids.rbegin()->first;
  if (!before.crash_ids.empty()) newest = std::max(newest, before.crash_ids.rbegin()->first);
  auto tombstone = [&](int64_t epoch, const Sent::EpochIds& sent) {
    for (uint32_t chunk : sent.chunks)
      out.push_back({CrashIdsKey(topic, partition, epoch, chunk), std::nullopt});
  };
  auto has = [&](int64_t epoch, uint64_t id) {
    auto it = crash_ids.find(epoch);
    return it != crash_ids.end() && Holds(it->second, id);
  };
  for (const auto& entry : before.crash_ids) {
    const int64_t epoch = entry.first;  // (not a structured binding: the lambda below uses it)
    const Sent::EpochIds& sent = entry.second;
    // An epoch older than the one before the newest has expired: its chunks go.
    if (epoch < newest - 1) {
      tombstone(epoch, sent);
      continue;
    }
    // Ids the state no longer remembers under this epoch's label or a neighbour's (a full id
    // memory moves a generation down a label early, and drops the older one: shard_state.h):
    // the epoch is sent again as the state holds it, so a restore remembers what it did.
    const bool forgotten = std::any_of(sent.ids->begin(), sent.ids->end(), [&](uint64_t id) {
      return !has(epoch - 1, id) && !has(epoch, id) && !has(epoch + 1, id);
    });
    if (forgotten) {
      tombstone(epoch, sent);
      continue;
    }
    now.crash_ids.emplace(epoch, sent);  // shares the ids (copied only when new ones come)
  }
  for (const auto& [epoch, ids] : crash_ids) {
    if (epoch < newest - 1) continue;
    // New: not in a chunk of its epoch, nor of the next (where it was remembered first
    // when a state's newer generation is older here).
    auto same = now.crash_ids.find(epoch);
    auto next = now.crash_ids.find(epoch + 1);
    std::vector<uint64_t> fresh;
    for (uint64_t id : ids) {
      if ((same == now.crash_ids.end() || !Holds(*same->second.ids, id)) &&
          (next == now.crash_ids.end() || !Holds(*next->second.ids, id)))
        fresh.push_back(id);
    }
    if (fresh.empty()) continue;
    Sent::EpochIds& sent = now.crash_ids[epoch];
    for (size_t at = 0; at < fresh.size(); at += kMaxCrashIdsPerRecord) {
      CrashIdsRecord record{topic, partition, epoch, now.next_chunk++, owner, {}};
      record.ids.assign(
          fresh.begin() + static_cast<ptrdiff_t>(at),
          fresh.begin() + static_cast<ptrdiff_t>(std::min(fresh.size(), at + kMaxCrashIdsPerRecord)));
      sent.chunks.push_back(record.chunk);
      out.push_back({CrashIdsKey(topic, partition, epoch, record.chunk), EncodeCrashIds(record)});
    }
    auto merged = std::make_shared<std::vector<uint64_t>>();
    merged->reserve((sent.ids ? sent.ids->size() : 0) + fresh.size());
    if (sent.ids) merged->assign(sent.ids->begin(), sent.ids->end());
    const auto middle = static_cast<ptrdiff_t>(merged->size());
    merged->insert(merged->end(), fresh.begin(), fresh.end());
    std::inplace_merge(merged->begin(), merged->begin() + middle, merged->end());
    sent.ids = std::move(merged);
  }
}

void PublishLedger::Diff(const CountsRecord& counts, const std::vector<PartialRecord>& partials,
                         const CrashIds& crash_ids, const Symbols& symbols, std::vector<OutgoingRecord>& out,
                         const std::vector<std::string>& bad_keys) {
  const PartitionId id{counts.topic, counts.partition};
  const size_t first = out.size();
  auto before_it = committed_.find(id);
  static const Sent kNothing;
  const Sent& before = before_it == committed_.end() ? kNothing : before_it->second;
  Sent now;
  const NewestBuckets newest = NewestBucketOfEachSeries(partials);
  for (const PartialRecord& p : partials) {
    std::string key = PartialKey(p.where);
    const uint64_t hash = ValuesHash(p, symbols);
    auto it = before.hashes.find(key);
    bool send = it == before.hashes.end() || it->second == kUnknownHash || it->second != hash;
    for (const SeriesImage& s : p.series) {
      if (newest.at(s.key) != p.where.bucket) continue;  // its newest bucket's record carries it
      const uint64_t sketch = SketchHash(s);
      auto was = before.series.find(s.key);
      send = send || was == before.series.end() || was->second == kUnknownHash || was->second != sketch;
      now.series[s.key] = sketch;  // as sent now, or as sent before (unchanged)
    }
    if (send) out.push_back({key, EncodePartial(p, symbols)});
    now.hashes.emplace(std::move(key), hash);
  }
  for (const auto& [key, hash] : before.hashes) {
    if (!now.hashes.contains(key)) out.push_back({key, std::nullopt});
  }
  DiffCrashIds(counts.topic, counts.partition, counts.owner, crash_ids, before, now, out);
  std::string counts_key = CountsKey(counts.topic, counts.partition);
  if (!bad_keys.empty()) {
    absl::flat_hash_set<std::string_view> sent;
    for (size_t i = first; i < out.size(); ++i) sent.insert(out[i].key);
    for (const std::string& key : bad_keys) {
      if (key != counts_key && !sent.contains(key)) out.push_back({key, std::nullopt});
    }
  }
  std::string encoded = EncodeCounts(counts);
  now.counts = Hash64(encoded);
  // Last, and whenever anything else was sent: the record that closes the publish.
  if (out.size() > first || now.counts != before.counts)
    out.push_back({std::move(counts_key), std::move(encoded)});
  pending_[id] = std::move(now);
}

void PublishLedger::Commit() {
  for (auto& [id, sent] : pending_) committed_[id] = std::move(sent);
  pending_.clear();
}

void PublishLedger::Abort() { pending_.clear(); }

void PublishLedger::Uncertain() {
  for (auto& [id, pending] : pending_) {
    Sent& committed = committed_[id];
    Sent unknown;
    for (const Sent* side : {&committed, &pending}) {
      for (const auto& entry : side->hashes) unknown.hashes.emplace(entry.first, kUnknownHash);
      for (const auto& entry : side->series) unknown.series.emplace(entry.first, kUnknownHash);
      unknown.next_chunk = std::max(unknown.next_chunk, side->next_chunk);
      unknown.stale.insert(unknown.stale.end(), side->stale.begin(), side->stale.end());
      StaleChunkKeys(id.first, id.second, *side, unknown.stale);
    }
    std::sort(unknown.stale.begin(), unknown.stale.end());
    unknown.stale.erase(std::unique(unknown.stale.begin(), unknown.stale.end()), unknown.stale.end());
    committed = std::move(unknown);  // counts 0: none known, so the next Diff sends them
  }
  pending_.clear();
}

void PublishLedger::Forget(const std::string& topic, int32_t partition) {
  committed_.erase({topic, partition});
  pending_.erase({topic, partition});
}

void PublishLedger::Resend(const std::string& topic, int32_t partition) {
  pending_.erase({topic, partition});
  auto it = committed_.find({topic, partition});
  if (it == committed_.end()) return;
  Sent again;
  again.next_chunk = it->second.next_chunk;
  again.stale = std::move(it->second.stale);
  StaleChunkKeys(topic, partition, it->second, again.stale);
  it->second = std::move(again);
}

void PublishLedger::StaleChunkKeys(const std::string& topic, int32_t partition, const Sent& sent,
                                   std::vector<std::string>& stale) {
  for (const auto& [epoch, ids] : sent.crash_ids) {
    for (uint32_t chunk : ids.chunks) stale.push_back(CrashIdsKey(topic, partition, epoch, chunk));
  }
}

void PublishLedger::Seed(const std::string& topic, int32_t partition, const TopicCrashIds& chunks) {
  Sent& sent = committed_[{topic, partition}];
  sent.crash_ids.clear();
  for (const auto& [epoch, by_chunk] : chunks) {
    Sent::EpochIds& e = sent.crash_ids[epoch];
    auto all = std::make_shared<std::vector<uint64_t>>();
    for (const auto& [chunk, ids] : by_chunk) {
      e.chunks.push_back(chunk);
      all->insert(all->end(), ids.begin(), ids.end());
      sent.next_chunk = std::max(sent.next_chunk, chunk + 1);  // chunks are below UINT32_MAX (record.h)
    }
    std::sort(all->begin(), all->end());
    all->erase(std::unique(all->begin(), all->end()), all->end());
    e.ids = std::move(all);
  }
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
