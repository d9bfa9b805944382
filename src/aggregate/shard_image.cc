#include "seismo/aggregate/shard_image.h"

namespace seismo {
namespace {

void EncodeHll(const HyperLogLog& h, ByteWriter& w) {
  if (!h.dense().empty()) {
    w.U8(2);
    w.Str(std::string_view(reinterpret_cast<const char*>(h.dense().data()), h.dense().size()));
  } else if (!h.sparse().empty()) {
    w.U8(1);
    w.U64(h.sparse().size());
    for (uint32_t e : h.sparse()) w.U64(e);
  } else {
    w.U8(0);
  }
}

bool DecodeHll(ByteReader& r, HyperLogLog& h) {
  uint8_t kind = r.U8();
  if (kind == 0) return r.ok();
  if (kind == 1) {
    uint64_t n = r.Count();
    if (n > HyperLogLog::kRegisters) return false;
    std::vector<uint32_t> sparse(n);
    uint32_t previous_index = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t e = r.U64();
      uint32_t index = static_cast<uint32_t>(e >> 8);
      if (e > UINT32_MAX || index >= HyperLogLog::kRegisters || (i > 0 && index <= previous_index)) return false;
      previous_index = index;
      sparse[i] = static_cast<uint32_t>(e);
    }
    h = HyperLogLog::FromParts(std::move(sparse), {});
    return r.ok();
  }
  if (kind == 2) {
    std::string_view bytes = r.Str();
    if (bytes.size() != HyperLogLog::kRegisters) return false;
    h = HyperLogLog::FromParts({}, std::vector<uint8_t>(bytes.begin(), bytes.end()));
    return r.ok();
  }
  return false;
}

}  // namespace

void EncodeShardImage(const ShardImage& image, ByteWriter& w) {
  w.I64(image.stream_time_ms);
  w.U64(image.counters.deltas);
  w.U64(image.counters.duplicates);
  w.U64(image.counters.late_dropped);
  w.U64(image.counters.folded);
  w.U64(image.counters.dedup_forgotten);
  w.I64(image.dedup_epoch);
  for (const auto* set : {&image.seen_docs, &image.seen_previous}) {
    w.U64(set->size());
    for (uint64_t h : *set) w.Fixed64(h);
  }
  w.U64(image.series.size());
  for (const SeriesImage& s : image.series) {
    w.U8(static_cast<uint8_t>(s.table));
    w.Str(s.key);
    w.I64(s.first_ms);
    w.U64(s.entries.size());
    for (const SeriesImage::Entry& e : s.entries) {
      w.I64(e.bucket);
      for (size_t i = 0; i < ValueCount(s.table); ++i) w.I64(e.v[i]);
      EncodeHll(e.installs, w);
    }
  }
}

bool DecodeShardImage(ByteReader& r, ShardImage& image) {
  image.stream_time_ms = r.I64();
  image.counters.deltas = r.U64();
  image.counters.duplicates = r.U64();
  image.counters.late_dropped = r.U64();
  image.counters.folded = r.U64();
  image.counters.dedup_forgotten = r.U64();
  image.dedup_epoch = r.I64();
  for (auto* set : {&image.seen_docs, &image.seen_previous}) {
    uint64_t n = r.Count(8);
    set->resize(n);
    for (uint64_t i = 0; i < n; ++i) (*set)[i] = r.Fixed64();
  }
  uint64_t series = r.Count(3);
  image.series.resize(series);
  for (SeriesImage& s : image.series) {
    uint8_t table = r.U8();
    if (table >= kTableCount) return false;
    s.table = static_cast<Table>(table);
    s.key = std::string(r.Str());
    s.first_ms = r.I64();
    uint64_t entries = r.Count(2);
    s.entries.resize(entries);
    for (SeriesImage::Entry& e : s.entries) {
      e.bucket = r.I64();
      for (size_t i = 0; i < ValueCount(s.table); ++i) e.v[i] = r.I64();
      if (!DecodeHll(r, e.installs)) return false;
    }
    if (!r.ok()) return false;
  }
  return r.ok();
}

}  // namespace seismo
