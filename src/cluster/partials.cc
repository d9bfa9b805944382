#include "seismo/cluster/partials.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

namespace seismo {
namespace {

// The bucket's partial split into `parts` parts by content hash.
std::vector<PartialRecord> Parts(const PartialRecord& whole, const std::vector<uint64_t>& hashes,
                                 uint32_t parts) {
  std::vector<PartialRecord> out(parts);
  for (uint32_t i = 0; i < parts; ++i) {
    out[i].where = whole.where;
    out[i].where.part = i;
    out[i].parts = parts;
    out[i].bucket_ms = whole.bucket_ms;
    out[i].source_offset = whole.source_offset;
    out[i].stream_time_ms = whole.stream_time_ms;
    out[i].owner = whole.owner;
  }
  for (size_t s = 0; s < whole.series.size(); ++s) out[hashes[s] % parts].series.push_back(whole.series[s]);
  return out;
}

}  // namespace

std::vector<PartialRecord> SplitIntoPartials(std::span<const SeriesImage> series,
                                             const PartitionBucket& partition, int64_t bucket_ms,
                                             int64_t source_offset, int64_t stream_time_ms,
                                             std::string_view owner, const Symbols& symbols,
                                             size_t max_value_bytes) {
  struct Bucket {
    PartialRecord partial;
    absl::flat_hash_map<SeriesKey, size_t> at;  // key -> its series in the partial
  };
  std::map<int64_t, Bucket> by_bucket;
  for (const SeriesImage& s : series) {
    for (const SeriesImage::Entry& e : s.entries) {
      auto [it, inserted] = by_bucket.try_emplace(e.bucket);
      PartialRecord& p = it->second.partial;
      if (inserted) {
        p.where = {partition.topic, partition.partition, e.bucket, 0};
        p.bucket_ms = bucket_ms;
        p.source_offset = source_offset;
        p.stream_time_ms = stream_time_ms;
        p.owner = std::string(owner);
      }
      auto [at, first] = it->second.at.try_emplace(s.key, p.series.size());
      if (!first) {
        // The key again: a crash series lives in every shard its documents' ids routed
        // it to (delta.h). One record holds each key once; the copies merge as a reader
        // merges records (ShardState::RestoreSeries).
        SeriesImage& one = p.series[at->second];
        one.first_ms = std::min(one.first_ms, s.first_ms);
        one.installs.Merge(s.installs);
        SeriesImage::Entry& entry = one.entries.front();
        for (size_t v = 0; v < entry.v.size(); ++v) entry.v[v] += e.v[v];
        entry.installs.Merge(e.installs);
        continue;
      }
      SeriesImage one;
      one.key = s.key;
      one.first_ms = s.first_ms;
      one.installs = s.installs;
      one.entries.push_back(e);
      p.series.push_back(std::move(one));
    }
  }
  std::vector<PartialRecord> out;
  for (auto& [bucket, entry] : by_bucket) {
    PartialRecord& whole = entry.partial;
    // One order whatever the state's: a bucket whose series did not change encodes to the
    // same bytes (the publisher's ledger compares them: publish_ledger.h).
    std::vector<SeriesImage>& unordered = whole.series;  // (a lambda cannot capture a binding)
    std::vector<std::pair<uint64_t, size_t>> order;
    order.reserve(unordered.size());
    for (size_t i = 0; i < whole.series.size(); ++i)
      order.emplace_back(KeyContentHash(whole.series[i].key, symbols), i);
    std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return std::memcmp(&unordered[a.second].key, &unordered[b.second].key, sizeof(SeriesKey)) < 0;
    });
    std::vector<SeriesImage> sorted;
    sorted.reserve(order.size());
    for (const auto& [hash, i] : order) sorted.push_back(std::move(whole.series[i]));
    whole.series = std::move(sorted);
    size_t bytes = EncodePartial(whole, symbols).size();
    if (bytes <= max_value_bytes) {
      out.push_back(std::move(whole));
      continue;
    }
    std::vector<uint64_t> hashes;
    hashes.reserve(whole.series.size());
    for (const SeriesImage& s : whole.series) hashes.push_back(KeyContentHash(s.key, symbols));
    // Parts are about equal (content hashes are uniform): start from the ratio,
    // double while one is still too large.
    uint32_t parts = 2;
    while (parts < kMaxPartialParts && parts * max_value_bytes < bytes) parts *= 2;
    for (;;) {
      std::vector<PartialRecord> split = Parts(whole, hashes, parts);
      bool fits = true;
      for (const PartialRecord& p : split) fits = fits && EncodePartial(p, symbols).size() <= max_value_bytes;
      if (fits || parts == kMaxPartialParts) {
        for (PartialRecord& p : split) out.push_back(std::move(p));
        break;
      }
      parts *= 2;
    }
  }
  return out;
}

void MergePartial(const PartialRecord& partial, ShardState& state) {
  for (const SeriesImage& s : partial.series) state.RestoreSeries(s);
}

}  // namespace seismo
