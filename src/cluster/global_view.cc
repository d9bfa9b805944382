#include "seismo/cluster/global_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "seismo/cluster/partials.h"

namespace seismo {

GlobalView::GlobalView(AggregateOptions options, Symbols* symbols, bool keep_crash_ids)
    : options_(std::move(options)), symbols_(symbols), keep_crash_ids_(keep_crash_ids) {}

GlobalView::~GlobalView() = default;

int64_t GlobalView::StreamTimeOf(const Partition& p) {
  // Of the records held now: one replaced (a publisher's bad clock, since corrected) no
  // longer moves the partition's time, and so expires nothing.
  int64_t t = INT64_MIN;
  for (const auto& [bucket, b] : p.buckets) {
    for (const auto& [part, partial] : b.by_part) t = std::max(t, partial.stream_time_ms);
  }
  return t;
}

GlobalView::Partition& GlobalView::PartitionOf(const PartitionBucket& where) {
  Partition& p = partitions_[{where.topic, where.partition}];
  p.status.topic = where.topic;
  p.status.partition = where.partition;
  return p;
}

namespace {

// Takes one part of a bucket out of a partition's view (the bucket goes with its last part).
template <typename Buckets>
void ErasePart(Buckets& buckets, int64_t bucket, uint32_t part) {
  auto b = buckets.find(bucket);
  if (b == buckets.end()) return;
  b->second.by_part.erase(part);
  if (b->second.by_part.empty()) buckets.erase(b);
}

// Takes one crash-ids chunk out (the epoch goes with its last chunk).
template <typename CrashIdChunks>
void EraseChunk(CrashIdChunks& chunks, int64_t epoch, uint32_t chunk) {
  auto e = chunks.find(epoch);
  if (e == chunks.end()) return;
  e->second.erase(chunk);
  if (e->second.empty()) chunks.erase(e);
}

}  // namespace

void GlobalView::Reject(RecordReject reason, std::string_view key) {
  ++rejected_[static_cast<size_t>(reason)];
  // A key that names a bucket part: its previous partial leaves the view.
  // A counts key: the partition's counts leave the view until a valid record comes.
  const std::optional<RecordKey> k = DecodeRecordKey(key);
  if (!k || k->kind == RecordKind::kAlertState) return;
  Partition& p = PartitionOf(k->where);
  ++p.status.rejected;
  // A held record of the same key is older than this one: it never counts.
  std::erase_if(p.held, [&](const Held& h) { return h.key == key; });
  if (k->kind == RecordKind::kCounts) {
    TakeHeld(p);  // the publish it closes is whole but for its counts
    p.bad_counts = true;
    p.counts.reset();
  } else if (k->kind == RecordKind::kCrashIds) {
    p.bad_crash_ids.insert({k->where.bucket, k->where.part});
    EraseChunk(p.crash_ids, k->where.bucket, k->where.part);
    return;  // the view does not change
  } else {
    p.bad.insert({k->where.bucket, k->where.part});
    ErasePart(p.buckets, k->where.bucket, k->where.part);
  }
  p.dirty = true;
}

namespace {

// The source partition a partition-scoped record (not an alert state) is of.
PartitionBucket WhereOf(const AggregatesRecord& record) {
  if (const auto* partial = std::get_if<PartialRecord>(&record)) return partial->where;
  if (const auto* tombstone = std::get_if<Tombstone>(&record)) return tombstone->where;
  if (const auto* ids = std::get_if<CrashIdsRecord>(&record)) return {ids->topic, ids->partition, 0, 0};
  const auto& counts = std::get<CountsRecord>(record);
  return {counts.topic, counts.partition, 0, 0};
}

}  // namespace

std::optional<std::string> GlobalView::Apply(std::string_view key, std::optional<std::string_view> value,
                                             int64_t record_time_ms) {
  RecordResult r = DecodeRecord(key, value, *symbols_);
  if (!r.ok()) {
    Reject(r.reason(), key);
    return fmt::format("{}: {}: {}", key, RecordRejectName(r.reason()), r.detail());
  }
  if (auto* alerts = std::get_if<AlertStateRecord>(&r.value())) {
    alert_state_ = std::move(*alerts);
    return std::nullopt;
  }
  if (const auto* partial = std::get_if<PartialRecord>(&r.value());
      partial && partial->bucket_ms != options_.bucket_ms) {
    const int64_t width = partial->bucket_ms;
    Reject(RecordReject::kKeyMismatch, key);
    return fmt::format("{}: {}: a bucket of {} ms, this view's are {} ms", key,
                       RecordRejectName(RecordReject::kKeyMismatch), width, options_.bucket_ms);
  }
  Partition& p = PartitionOf(WhereOf(r.value()));
  if (auto* counts = std::get_if<CountsRecord>(&r.value())) {
    // The record that closes a publish: what the publish sent before it is now whole.
    TakeHeld(p);
    p.bad_counts = false;
    p.status.owner = counts->owner;
    p.status.source_offset = std::max(p.status.source_offset, counts->source_offset);
    p.status.latest_record_ms = std::max(p.status.latest_record_ms, record_time_ms);
    p.counts = std::move(counts->counts);
    p.dirty = true;
    return std::nullopt;
  }
  p.held.push_back({std::string(key), std::move(r.value()), record_time_ms});
  return std::nullopt;
}

void GlobalView::TakeHeld(Partition& p) {
  for (Held& h : p.held) Take(p, std::move(h.record), h.record_time_ms);
  p.held.clear();
}

void GlobalView::Take(Partition& p, AggregatesRecord&& record, int64_t record_time_ms) {
  if (auto* ids = std::get_if<CrashIdsRecord>(&record)) {
    p.bad_crash_ids.erase({ids->epoch, ids->chunk});
    if (keep_crash_ids_) p.crash_ids[ids->epoch].insert_or_assign(ids->chunk, std::move(ids->ids));
    return;
  }
  if (auto* tombstone = std::get_if<Tombstone>(&record)) {
    const PartitionBucket& where = tombstone->where;
    if (tombstone->kind == RecordKind::kCrashIds) {
      p.bad_crash_ids.erase({where.bucket, where.part});
      EraseChunk(p.crash_ids, where.bucket, where.part);
      return;
    }
    p.bad.erase({where.bucket, where.part});
    ErasePart(p.buckets, where.bucket, where.part);
    p.dirty = true;
    return;
  }
  PartialRecord& partial = std::get<PartialRecord>(record);
  p.bad.erase({partial.where.bucket, partial.where.part});
  PartitionStatus& s = p.status;
  s.owner = partial.owner;
  s.source_offset = std::max(s.source_offset, partial.source_offset);
  s.latest_record_ms = std::max(s.latest_record_ms, record_time_ms);
  Bucket& b = p.buckets[partial.where.bucket];
  if (b.parts != partial.parts) {
    b.by_part.clear();  // parts of another count: an older publish of the bucket
    b.parts = partial.parts;
  }
  const uint32_t part = partial.where.part;
  b.by_part.insert_or_assign(part, std::move(partial));
  p.dirty = true;
}

std::shared_ptr<const Snapshot> GlobalView::Build() {
  std::vector<std::shared_ptr<const ShardSnapshot>> parts;
  for (auto& [id, p] : partitions_) {
    if (p.dirty) {
      p.state = std::make_unique<ShardState>(options_, symbols_);
      const int64_t stream_time = StreamTimeOf(p);
      if (stream_time != INT64_MIN) p.state->AdvanceTo(EventTime{stream_time});
      for (const auto& [bucket, b] : p.buckets) {
        for (const auto& [part, partial] : b.by_part) MergePartial(partial, *p.state);
      }
      if (p.counts) {
        ShardImage counters;
        counters.counters = p.counts->shards;
        p.state->RestoreBegin(counters, /*with_dedup=*/false, /*with_counters=*/true);
      }
      p.snapshot = p.state->Snapshot();
      p.dirty = false;
    }
    parts.push_back(p.snapshot);
  }
  return MergeSnapshots(parts, *symbols_, options_.bucket_ms, options_.windows_ms, options_.retention_ms,
                        /*routed_by_key=*/false);
}

void GlobalView::MarkIds(std::vector<uint64_t>& text, std::vector<uint64_t>& stacks) const {
  // A partition's state is its partials merged (rebuilt when they change: dirty), so the
  // partials' keys are the states' too.
  for (const auto& [id, p] : partitions_) {
    for (const auto& [bucket, b] : p.buckets) {
      for (const auto& [part, partial] : b.by_part) {
        for (const SeriesImage& s : partial.series) MarkKeyIds(s.key, text, stacks);
      }
    }
    for (const Held& h : p.held) {
      if (const auto* partial = std::get_if<PartialRecord>(&h.record)) {
        for (const SeriesImage& s : partial->series) MarkKeyIds(s.key, text, stacks);
      }
    }
  }
}

RecordCounts GlobalView::counts() const {
  RecordCounts out;
  for (const auto& [id, p] : partitions_) {
    if (p.counts) AddCounts(out, p.counts->records);
  }
  return out;
}

GlobalView::PartitionStatus GlobalView::StatusOf(const Partition& p) {
  PartitionStatus s = p.status;
  s.stream_time_ms = StreamTimeOf(p);
  s.buckets = p.buckets.size();
  s.bad_keys = p.bad.size() + (p.bad_counts ? 1 : 0) + p.bad_crash_ids.size();
  return s;
}

std::vector<GlobalView::PartitionStatus> GlobalView::Partitions() const {
  std::vector<PartitionStatus> out;
  for (const auto& [id, p] : partitions_) out.push_back(StatusOf(p));
  return out;
}

std::map<std::pair<std::string, int32_t>, std::vector<std::string>> GlobalView::BadKeys() const {
  std::map<std::pair<std::string, int32_t>, std::vector<std::string>> out;
  for (const auto& [id, p] : partitions_) {
    for (const auto& [bucket, part] : p.bad)
      out[id].push_back(PartialKey({id.first, id.second, bucket, part}));
    if (p.bad_counts) out[id].push_back(CountsKey(id.first, id.second));
    for (const auto& [epoch, chunk] : p.bad_crash_ids)
      out[id].push_back(CrashIdsKey(id.first, id.second, epoch, chunk));
  }
  return out;
}

std::optional<GlobalView::PartitionState> GlobalView::StateOf(const std::string& topic,
                                                              int32_t partition) const {
  auto it = partitions_.find({topic, partition});
  if (it == partitions_.end()) return std::nullopt;
  PartitionState out;
  out.status = StatusOf(it->second);
  out.counts = it->second.counts;
  out.crash_id_chunks = it->second.crash_ids;
  for (const auto& [epoch, chunks] : out.crash_id_chunks) {
    std::vector<uint64_t>& ids = out.crash_ids[epoch];
    for (const auto& [chunk, list] : chunks) ids.insert(ids.end(), list.begin(), list.end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  for (const auto& [bucket, b] : it->second.buckets) {
    for (const auto& [part, partial] : b.by_part) {
      out.series.insert(out.series.end(), partial.series.begin(), partial.series.end());
    }
  }
  return out;
}

}  // namespace seismo
