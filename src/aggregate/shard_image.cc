#include "seismo/aggregate/shard_image.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <span>

namespace seismo {

SeriesImage ImageOf(const SeriesData& s) {
  SeriesImage out;
  out.key = s.key;
  out.first_ms = s.first_ms;
  out.installs = s.installs;
  for (const auto& c : s.hours) {
    for (size_t i = 0; i < c->buckets.size(); ++i) {
      const HyperLogLog* h = BucketImageInstalls(*c, i);
      out.entries.push_back({c->buckets[i], c->values[i], h != nullptr ? *h : HyperLogLog()});
    }
  }
  return out;
}

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

namespace {

constexpr char kLegacyKeySep = '\x1f';
constexpr char kLegacyStackSep = '\x1e';

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

void EncodeCounters(const ShardImage& image, ByteWriter& w) {
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
}

void DecodeCounters(ByteReader& r, ShardImage& image) {
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
}

// Format 2: each key one string, fields joined by \x1f, a stack's frames by \x1e;
// every entry carried an installs sketch.
// Tables whose entries carry an installs sketch.
bool EntryInstalls(Table t, SeriesSetFormat format) {
  return t == Table::kCrashes ||
         (t == Table::kBuildUsage && format == SeriesSetFormat::kWithUsageEntryInstalls);
}

// A build-usage series written before its entries carried sketches: its series sketch held
// the sub-process crash reporters, the side that now lives in its hours (ADR 0031).
void MoveLegacyUsageInstalls(SeriesImage& s) {
  if (s.table() != Table::kBuildUsage || s.installs.empty() || s.entries.empty()) return;
  s.entries.back().installs.Merge(s.installs);
  s.installs = HyperLogLog();
}

bool DecodeLegacySeries(ByteReader& r, Symbols& symbols, SeriesImage& s) {
  uint8_t table = r.U8();
  if (table >= kTableCount) return false;
  s.key = SeriesKey{};
  s.key.table = static_cast<Table>(table);
  std::vector<std::string_view> fields = Split(r.Str(), kLegacyKeySep);
  if (!r.ok() || fields.size() != FieldCount(s.key.table)) return false;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (IsStackField(s.key.table, i)) {
      std::vector<Sym> frames;
      if (!fields[i].empty()) {
        for (std::string_view f : Split(fields[i], kLegacyStackSep)) frames.push_back(symbols.Intern(f));
      }
      s.key.f[i] = symbols.InternStack(frames);
    } else {
      s.key.f[i] = symbols.Intern(fields[i]);
    }
  }
  s.first_ms = r.I64();
  uint64_t entries = r.Count(2);
  s.entries.resize(entries);
  for (SeriesImage::Entry& e : s.entries) {
    e.bucket = r.I64();
    for (size_t i = 0; i < ValueCount(s.key.table); ++i) e.v[i] = r.I64();
    HyperLogLog h;
    if (!DecodeHll(r, h)) return false;
    s.installs.Merge(h);
    if (s.key.table == Table::kCrashes) e.installs = std::move(h);
  }
  MoveLegacyUsageInstalls(s);
  return r.ok();
}

}  // namespace

void EncodeShardImage(const ShardImage& image, const Symbols& symbols, ByteWriter& w) {
  EncodeCounters(image, w);
  EncodeSeriesSet(image.series, symbols, w);
}

void EncodeSeriesSet(std::span<const SeriesImage> series, const Symbols& symbols, ByteWriter& w) {
  // The set's own dictionary: local indices in order of first use.
  absl::flat_hash_map<Sym, uint64_t> texts;
  absl::flat_hash_map<StackId, uint64_t> stacks;
  std::vector<Sym> text_order;
  std::vector<StackId> stack_order;
  auto text_index = [&](Sym s) {
    auto [it, inserted] = texts.try_emplace(s, text_order.size());
    if (inserted) text_order.push_back(s);
    return it->second;
  };
  for (const SeriesImage& s : series) {
    for (size_t i = 0; i < FieldCount(s.table()); ++i) {
      if (IsStackField(s.table(), i)) {
        auto [it, inserted] = stacks.try_emplace(s.key.f[i], stack_order.size());
        if (inserted) {
          stack_order.push_back(s.key.f[i]);
          for (Sym f : symbols.Frames(s.key.f[i])) text_index(f);
        }
      } else {
        text_index(s.key.f[i]);
      }
    }
  }
  w.U64(text_order.size());
  for (Sym s : text_order) w.Str(symbols.Text(s));
  w.U64(stack_order.size());
  for (StackId id : stack_order) {
    std::span<const Sym> frames = symbols.Frames(id);
    w.U64(frames.size());
    for (Sym f : frames) w.U64(texts.at(f));
  }
  w.U64(series.size());
  for (const SeriesImage& s : series) {
    w.U8(static_cast<uint8_t>(s.table()));
    for (size_t i = 0; i < FieldCount(s.table()); ++i) {
      w.U64(IsStackField(s.table(), i) ? stacks.at(s.key.f[i]) : texts.at(s.key.f[i]));
    }
    w.I64(s.first_ms);
    EncodeHll(s.installs, w);
    w.U64(s.entries.size());
    for (const SeriesImage::Entry& e : s.entries) {
      w.I64(e.bucket);
      for (size_t i = 0; i < ValueCount(s.table()); ++i) w.I64(e.v[i]);
      if (EntryInstalls(s.table(), SeriesSetFormat::kWithUsageEntryInstalls)) EncodeHll(e.installs, w);
    }
  }
}

bool DecodeShardImage(ByteReader& r, uint32_t format, Symbols& symbols, ShardImage& image) {
  DecodeCounters(r, image);
  if (format == 2) {
    uint64_t series = r.Count(3);
    image.series.resize(series);
    for (SeriesImage& s : image.series) {
      if (!DecodeLegacySeries(r, symbols, s)) return false;
    }
    return r.ok();
  }
  return DecodeSeriesSet(
      r, symbols, image.series,
      format <= 3 ? SeriesSetFormat::kCrashEntryInstalls : SeriesSetFormat::kWithUsageEntryInstalls);
}

namespace {
// Room reserved ahead for a count read from the input: a corrupt count (each item is
// bigger in memory than its least encoding) must not allocate ahead of the bytes that
// are really there, so past this the vector grows as items are decoded.
constexpr uint64_t kReserveAhead = 1024;
}  // namespace

bool DecodeSeriesSet(ByteReader& r, Symbols& symbols, std::vector<SeriesImage>& out, SeriesSetFormat format) {
  std::vector<Sym> texts(r.Count(1));
  for (Sym& s : texts) s = symbols.Intern(r.Str());
  std::vector<StackId> stacks(r.Count(1));
  std::vector<Sym> frames;
  for (StackId& id : stacks) {
    frames.resize(r.Count(1));
    for (Sym& f : frames) {
      uint64_t i = r.U64();
      if (!r.ok() || i >= texts.size()) return false;
      f = texts[i];
    }
    id = symbols.InternStack(frames);
  }
  const uint64_t series = r.Count(4);
  out.clear();
  out.reserve(std::min(series, kReserveAhead));
  absl::flat_hash_set<SeriesKey> keys;
  for (uint64_t n = 0; n < series; ++n) {
    SeriesImage& s = out.emplace_back();
    uint8_t table = r.U8();
    if (table >= kTableCount) return false;
    s.key.table = static_cast<Table>(table);
    for (size_t i = 0; i < FieldCount(s.table()); ++i) {
      const std::vector<Sym>& dict = IsStackField(s.table(), i) ? stacks : texts;
      uint64_t index = r.U64();
      if (!r.ok() || index >= dict.size()) return false;
      s.key.f[i] = dict[index];
    }
    if (!keys.insert(s.key).second) return false;  // one series per key: a writer never repeats one
    s.first_ms = r.I64();
    if (!DecodeHll(r, s.installs)) return false;
    // An entry is at least a bucket and its values, one byte each.
    const uint64_t entries = r.Count(1 + ValueCount(s.table()));
    s.entries.reserve(std::min(entries, kReserveAhead));
    for (uint64_t k = 0; k < entries && r.ok(); ++k) {
      SeriesImage::Entry& e = s.entries.emplace_back();
      e.bucket = r.I64();
      for (size_t i = 0; i < ValueCount(s.table()); ++i) e.v[i] = r.I64();
      if (EntryInstalls(s.table(), format) && !DecodeHll(r, e.installs)) return false;
    }
    if (!r.ok()) return false;
    if (format == SeriesSetFormat::kCrashEntryInstalls) MoveLegacyUsageInstalls(s);
  }
  return r.ok();
}

}  // namespace seismo
