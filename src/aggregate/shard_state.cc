#include "seismo/aggregate/shard_state.h"

#include <algorithm>

#include "seismo/aggregate/partition_counts.h"
#include "seismo/aggregate/shard_image.h"

namespace seismo {

namespace {

// Heap cost estimates (glibc: 16-byte granules, 8 bytes of header per chunk).
constexpr size_t HeapChunk(size_t n) { return n == 0 ? 0 : (n + 8 + 15) / 16 * 16; }
// Elements an inlined vector keeps on the heap (none while they fit inside it).
template <typename T, size_t N>
size_t OnHeap(const absl::InlinedVector<T, N>& v) {
  return v.capacity() > N ? v.capacity() : 0;
}
// make_shared puts the object after a 16-byte control block.
constexpr size_t kShared = 16;
// A flat_hash_set slot of T and its control byte.
template <typename T>
constexpr size_t SetSlotBytes() {
  return sizeof(T) + 1;
}
// A remembered crash id.
constexpr size_t kIdBytes = SetSlotBytes<uint64_t>();
// What readers hold per series, in each of the three snapshots alive at a time (the newest
// published, the one whose default answers are being built, and the newest with its default
// answers built, which those are served from: ADR 0025): its pointer in the table's row
// list and in its key-ordered list, and entries of 16 bytes in the text indexes filters read
// (snapshot.h RowsWithTextHash: a hang series' signature, build date, thread and process, a
// crash series' signature and build id); for the series of the
// tables a snapshot's build index lists (snapshot.h Builds: build usage, crashes, usage and
// hangs), a pointer there too.
constexpr size_t kSnapshotsAlive = 3;
constexpr size_t kReaderBytes = kSnapshotsAlive * 2 * sizeof(void*);
constexpr size_t kHangReaderBytes = kReaderBytes + kSnapshotsAlive * 4 * 16;
constexpr size_t kCrashReaderBytes = kReaderBytes + kSnapshotsAlive * 2 * 16;
constexpr size_t kBuildListedBytes = kSnapshotsAlive * sizeof(void*);

// A flat_hash_map slot of (K, V) and its control byte.
template <typename K, typename V>
constexpr size_t SlotBytes() {
  return sizeof(std::pair<K, V>) + 1;
}

}  // namespace

ShardState::ShardState(AggregateOptions options, Symbols* symbols)
    : options_(std::move(options)), symbols_(symbols) {
  if (options_.bucket_ms <= 0) options_.bucket_ms = 60'000;
  state_budget_ = static_cast<size_t>(ShardStateBudget(options_));
}

ShardState::~ShardState() = default;

int64_t ShardState::BucketOf(int64_t ms) const {
  // Floor division; INT64_MIN ("no stream time yet") must not be negated.
  const int64_t b = options_.bucket_ms;
  const int64_t q = ms / b;
  return (ms % b != 0 && ms < 0) ? q - 1 : q;
}

// ------------------------------------------------------------ memory

size_t ShardState::ReaderBytes(Table t) {
  const size_t indexed = t == Table::kHangs     ? kHangReaderBytes
                         : t == Table::kCrashes ? kCrashReaderBytes
                                                : kReaderBytes;
  const bool build_listed =
      t == Table::kHangs || t == Table::kCrashes || t == Table::kUsage || t == Table::kBuildUsage;
  return indexed + (build_listed ? kBuildListedBytes : 0);
}

size_t ShardState::SeriesBytes(const SeriesData& s) {
  return HeapChunk(kShared + sizeof(SeriesData)) + HeapChunk(OnHeap(s.hours) * sizeof(s.hours[0])) +
         (s.keeps_total() ? HeapChunk(sizeof(Values)) : 0) + s.installs.MemoryBytes() +
         ReaderBytes(s.key.table);
}

size_t ShardState::HourBytes(const HourChunk& c) {
  size_t n = HeapChunk(kShared + sizeof(HourChunk)) + HeapChunk(OnHeap(c.buckets) * sizeof(int64_t)) +
             HeapChunk(OnHeap(c.values) * sizeof(Values)) +
             (c.has_spill() ? HeapChunk(sizeof(HourSpill)) : 0) +
             (c.has_sketches() ? HeapChunk(sizeof(HourSketches)) : 0) +
             HeapChunk(c.installs().capacity() * sizeof(HyperLogLog));
  for (const HyperLogLog& h : c.installs()) n += h.MemoryBytes();
  return n + c.hour_installs().MemoryBytes();
}

size_t ShardState::EntryBytes(Table t) const {
  return sizeof(int64_t) + sizeof(Values) + (t == Table::kCrashes ? sizeof(HyperLogLog) : 0);
}

size_t ShardState::TableBytes() const {
  size_t bytes = index_.capacity() * SetSlotBytes<IndexEntry>() +
                 (text_refs_.capacity() + stack_refs_.capacity()) * SlotBytes<InternId, uint32_t>() +
                 members_.capacity() * SlotBytes<int64_t, Members>() +
                 (seen_crash_docs_.capacity() + seen_previous_.capacity()) * kIdBytes;
  for (size_t t = 0; t < kTableCount; ++t) {
    bytes += slots_[t].capacity() * sizeof(slots_[t][0]) + free_slots_[t].capacity() * sizeof(uint32_t) +
             pages_[t].capacity() * sizeof(pages_[t][0]) + page_changed_[t].capacity() / 8 +
             changed_pages_[t].capacity() * sizeof(uint32_t);
  }
  return bytes;
}

size_t ShardState::MemoryBytes() const {
  return static_cast<size_t>(memory_bytes_ + key_text_bytes_) + TableBytes();
}

size_t ShardState::RecountMemoryBytes() const {
  size_t bytes = 0;
  for (const auto& [bucket, m] : members_) bytes += HeapChunk(m.refs.capacity() * sizeof(Ref));
  for (size_t t = 0; t < kTableCount; ++t) {
    for (const auto& s : slots_[t]) {
      if (!s) continue;
      bytes += SeriesBytes(*s);
      for (const auto& c : s->hours) bytes += HourBytes(*c);
    }
  }
  // The texts and stacks the keys use, each once.
  absl::flat_hash_set<InternId> texts, stacks;
  for (size_t t = 0; t < kTableCount; ++t) {
    for (const auto& s : slots_[t]) {
      if (!s) continue;
      for (size_t i = 0; i < FieldCount(s->key.table); ++i) {
        if (!IsStackField(s->key.table, i)) {
          texts.insert(s->key.f[i]);
        } else if (stacks.insert(s->key.f[i]).second) {
          for (Sym frame : symbols_->Frames(s->key.f[i])) texts.insert(frame);
        }
      }
    }
  }
  for (InternId id : texts) bytes += symbols_->text().EntryBytes(id);
  for (InternId id : stacks) bytes += symbols_->stacks().EntryBytes(id);
  return bytes + TableBytes();
}

// ------------------------------------------------------------ series

void ShardState::Touch(Ref r) {
  const size_t t = static_cast<size_t>(r.table);
  const uint32_t page = r.slot / kSeriesPage;
  auto& changed = page_changed_[t];
  if (page >= changed.size()) changed.resize(page + 1, false);
  if (!changed[page]) {
    changed[page] = true;
    changed_pages_[t].push_back(page);
  }
}

bool ShardState::Reference(absl::flat_hash_map<InternId, uint32_t>& refs, InternId id, int delta,
                           const InternTable& table) {
  if (delta > 0) {
    if (refs[id]++ > 0) return false;
    key_text_bytes_ += static_cast<int64_t>(table.EntryBytes(id));
    return true;
  }
  auto it = refs.find(id);
  if (--it->second > 0) return false;
  refs.erase(it);
  key_text_bytes_ -= static_cast<int64_t>(table.EntryBytes(id));
  return true;
}

void ShardState::KeyTexts(const SeriesKey& key, int delta) {
  for (size_t i = 0; i < FieldCount(key.table); ++i) {
    if (!IsStackField(key.table, i)) {
      Reference(text_refs_, key.f[i], delta, symbols_->text());
      continue;
    }
    // A stack's frames are counted with its first key and returned with its last.
    if (!Reference(stack_refs_, key.f[i], delta, symbols_->stacks())) continue;
    for (Sym frame : symbols_->Frames(key.f[i])) Reference(text_refs_, frame, delta, symbols_->text());
  }
}

ShardState::Ref ShardState::SeriesFor(const SeriesKey& key, uint64_t hash) {
  if (auto it = index_.find(IndexKey{&key, hash}); it != index_.end()) return it->ref;
  // A new series (a second probe): its slot and object are made before the index holds a
  // ref to them, so an allocation that throws leaves the index as it was.
  auto s = std::make_shared<SeriesData>();
  s->key = key;
  s->hash = hash;
  s->level = FoldLevel(key, *symbols_);
  auto& table_slots = slots(key.table);
  auto& free = free_slots_[static_cast<size_t>(key.table)];
  const bool reuse = !free.empty();
  const uint32_t slot = reuse ? free.back() : static_cast<uint32_t>(table_slots.size());
  if (!reuse) table_slots.emplace_back();
  const Ref r{key.table, slot};
  index_.insert(IndexEntry{IndexHash(hash), r});  // hashes the entry alone: the slot may be empty
  if (reuse) free.pop_back();
  table_slots[slot] = std::move(s);
  memory_bytes_ += static_cast<int64_t>(SeriesBytes(*table_slots[slot]));
  KeyTexts(key, +1);
  ++live_series_;
  Touch(r);
  return r;
}

SeriesData& ShardState::Mutable(Ref r) {
  std::shared_ptr<SeriesData>& p = slots(r.table)[r.slot];
  if (p.use_count() > 1) {  // a snapshot holds it: copy on write
    const size_t before = SeriesBytes(*p);
    p = std::make_shared<SeriesData>(*p);
    memory_bytes_ += static_cast<int64_t>(SeriesBytes(*p)) - static_cast<int64_t>(before);
  }
  Touch(r);
  return *p;
}

HourChunk& ShardState::MutableHour(SeriesData& s, size_t i) {
  std::shared_ptr<HourChunk>& c = s.hours[i];
  if (c.use_count() > 1) {
    const size_t before = HourBytes(*c);
    c = std::make_shared<HourChunk>(*c);
    memory_bytes_ += static_cast<int64_t>(HourBytes(*c)) - static_cast<int64_t>(before);
  }
  return *c;
}

void ShardState::AddToEntry(Ref r, int64_t b, const Values& v, uint64_t install_hash,
                            const HyperLogLog* installs) {
  SeriesData& s = Mutable(r);
  const int64_t hour = HourOfBucket(b, options_.bucket_ms);
  // The hour: usually the last one.
  size_t hi = s.hours.size();
  while (hi > 0 && s.hours[hi - 1]->hour > hour) --hi;
  if (hi == 0 || s.hours[hi - 1]->hour != hour) {
    const size_t before = SeriesBytes(s);
    auto c = std::make_shared<HourChunk>();
    c->hour = hour;
    memory_bytes_ += static_cast<int64_t>(HourBytes(*c));
    s.hours.insert(s.hours.begin() + static_cast<ptrdiff_t>(hi), std::move(c));
    s.EmptyHourCameOrWent();
    memory_bytes_ += static_cast<int64_t>(SeriesBytes(s)) - static_cast<int64_t>(before);
    ++hi;
    grew_since_check_ += 16;
  }
  HourChunk& c = MutableHour(s, hi - 1);
  const bool crashes = r.table == Table::kCrashes;
  // A build-usage hour's sketch holds the installs whose pings reported sub-process
  // crashes (values 2..4), or what an image's entry of the hour carries.
  const bool reporters = r.table == Table::kBuildUsage && ((install_hash != 0 && v[2] + v[3] + v[4] > 0) ||
                                                           (installs != nullptr && !installs->empty()));
  // The bucket: usually the last one.
  size_t bi = c.buckets.size();
  while (bi > 0 && c.buckets[bi - 1] > b) --bi;
  const size_t hour_before =
      crashes || reporters || bi == 0 || c.buckets[bi - 1] != b ? HourBytes(c) : 0;  // sketches may grow
  if (bi == 0 || c.buckets[bi - 1] != b) {
    c.InsertBucket(bi, b);
    if (crashes) {
      std::vector<HyperLogLog>& installs_of = c.sketches().buckets;
      installs_of.insert(installs_of.begin() + static_cast<ptrdiff_t>(bi), HyperLogLog());
    }
    ++bi;
    Members& m = members_[b];
    const size_t capacity = m.refs.capacity();
    if (m.refs.size() >= 2 * static_cast<size_t>(m.live) + 16) Compact(b, m);
    m.refs.push_back(r);
    ++m.live;
    memory_bytes_ += static_cast<int64_t>(HeapChunk(m.refs.capacity() * sizeof(Ref))) -
                     static_cast<int64_t>(HeapChunk(capacity * sizeof(Ref)));
    ++grew_since_check_;
  }
  c.AddToBucket(bi - 1, v);
  s.AddToTotal(v);
  if (crashes) {
    HourSketches& sketches = c.sketches();
    if (install_hash != 0) {
      sketches.buckets[bi - 1].Add(install_hash);
      sketches.hour.Add(install_hash);
    }
    if (installs != nullptr && !installs->empty()) {
      sketches.buckets[bi - 1].Merge(*installs);
      sketches.hour.Merge(*installs);
    }
  } else if (reporters) {
    HourSketches& sketches = c.sketches();
    if (install_hash != 0 && v[2] + v[3] + v[4] > 0) sketches.hour.Add(install_hash);
    if (installs != nullptr) sketches.hour.Merge(*installs);
  }
  if (hour_before != 0) memory_bytes_ += static_cast<int64_t>(HourBytes(c)) - static_cast<int64_t>(hour_before);
  if (install_hash != 0) {
    const size_t before = s.installs.MemoryBytes();
    s.installs.Add(install_hash);
    memory_bytes_ += static_cast<int64_t>(s.installs.MemoryBytes()) - static_cast<int64_t>(before);
  }
}

void ShardState::Apply(const Delta& d) { Apply(d, EventTime{std::max(stream_time_ms_, d.time.ms)}); }

void ShardState::Apply(const Delta& d, EventTime stream_time) {
  owner_.Check("ShardState::Apply");
  ++counters_.deltas;
  AdvanceTo(stream_time);
  int64_t& table_time = table_time_ms_[static_cast<size_t>(d.table())];
  table_time = std::max(table_time, d.time.ms);
  const int64_t b = BucketOf(d.time.ms);
  const int64_t kept_buckets = options_.retention_ms / options_.bucket_ms;
  if (stream_time.ms != INT64_MIN && b <= BucketOf(stream_time.ms) - kept_buckets) {
    ++counters_.late_dropped;
    return;
  }
  if (d.table() == Table::kCrashes && d.doc_hash != 0 && SeenBefore(d.doc_hash)) {
    ++counters_.duplicates;
    return;
  }
  // Not late against its own chunk, but a later chunk's batch came first and this
  // shard has expired the bucket: by now it would be expired anyway. (Its id is
  // remembered above, so that which copy of a document counts does not depend on it.)
  if (stream_time_ms_ != INT64_MIN && b <= BucketOf(stream_time_ms_) - kept_buckets) return;
  // A key folded earlier comes back as a new, small series; if it stays
  // insignificant it is folded again. Remembering folded keys would cost
  // memory per distinct key, which is exactly what the budget bounds.
  const size_t series_before = live_series_;
  const Ref r = SeriesFor(d.key, d.hash);
  AddToEntry(r, b, d.values, d.install_hash, nullptr);
  SeriesData& s = *slots(r.table)[r.slot];
  s.first_ms = std::min(s.first_ms, d.time.ms);
  if (live_series_ != series_before || grew_since_check_ >= 64) FoldIfOverBudget();
}

bool ShardState::SeenBefore(uint64_t doc_hash) {
  // Two generations of half a retention each: an id is remembered for at least
  // half and at most one and a half retention periods...
  const int64_t half = std::max<int64_t>(1, options_.retention_ms / options_.bucket_ms / 2);
  const int64_t epoch = BucketOf(stream_time_ms_) / half;
  if (epoch != dedup_epoch_) {
    seen_previous_ = std::move(seen_crash_docs_);
    seen_crash_docs_ = {};
    if (epoch != dedup_epoch_ + 1) seen_previous_ = {};  // both generations expired
    dedup_epoch_ = epoch;
  }
  // ... unless the ids outgrow their share of the budget (an eighth): then the
  // older generation goes early.
  const size_t max_ids = std::max<size_t>(1024, state_budget_ / 8 / (2 * kIdBytes));
  if (seen_crash_docs_.size() + seen_previous_.size() >= max_ids) {
    counters_.dedup_forgotten += seen_previous_.size();
    seen_previous_ = std::move(seen_crash_docs_);
    seen_crash_docs_ = {};
  }
  return seen_previous_.contains(doc_hash) || !seen_crash_docs_.insert(doc_hash).second;
}

void ShardState::AdvanceTo(EventTime t) {
  owner_.Check("ShardState::AdvanceTo");
  if (t.ms <= stream_time_ms_) return;
  stream_time_ms_ = t.ms;
  // Retention: buckets at or before this index are dropped.
  const int64_t expired = BucketOf(stream_time_ms_) - options_.retention_ms / options_.bucket_ms;
  if (expired_through_ != INT64_MIN && expired <= expired_through_) return;
  std::vector<int64_t> due;
  if (expired_through_ != INT64_MIN && expired - expired_through_ <= static_cast<int64_t>(members_.size())) {
    for (int64_t b = expired_through_ + 1; b <= expired; ++b) {
      if (members_.contains(b)) due.push_back(b);
    }
  } else {  // the first time, or a jump past more buckets than are held: every held one
    for (const auto& [bucket, m] : members_) {
      if (bucket <= expired) due.push_back(bucket);
    }
    std::sort(due.begin(), due.end());
  }
  expired_through_ = expired;
  for (int64_t b : due) ExpireBucket(b);
}

void ShardState::ExpireBucket(int64_t b) {
  auto it = members_.find(b);
  if (it == members_.end()) return;
  std::vector<Ref> refs = std::move(it->second.refs);
  members_.erase(it);
  memory_bytes_ -= static_cast<int64_t>(HeapChunk(refs.capacity() * sizeof(Ref)));
  const int64_t hour = HourOfBucket(b, options_.bucket_ms);
  for (Ref r : refs) {
    const auto& p = slots(r.table)[r.slot];
    // The slot may have lost this bucket (folded, released, reused) since.
    if (!p || p->hours.empty() || p->hours.front()->hour != hour) continue;
    const HourChunk& front = *p->hours.front();
    if (front.buckets.empty() || front.buckets.front() != b) continue;
    SeriesData& s = Mutable(r);
    HourChunk& c = MutableHour(s, 0);
    const size_t before = HourBytes(c);
    s.SubtractFromTotal(c.values.front());
    c.EraseFirstBucket();
    memory_bytes_ += static_cast<int64_t>(HourBytes(c)) - static_cast<int64_t>(before);
    if (c.buckets.empty()) {
      memory_bytes_ -= static_cast<int64_t>(HourBytes(c));
      const size_t series_before = SeriesBytes(s);
      s.hours.erase(s.hours.begin());
      s.EmptyHourCameOrWent();
      memory_bytes_ += static_cast<int64_t>(SeriesBytes(s)) - static_cast<int64_t>(series_before);
    }
    if (!s.hours.empty()) {
      s.first_ms = std::max(s.first_ms, s.hours.front()->buckets.front() * options_.bucket_ms);
    }
    ReleaseIfEmpty(r);
  }
}

bool ShardState::HasBucket(Ref r, int64_t b) const {
  const auto& p = slots_[static_cast<size_t>(r.table)][r.slot];
  if (!p) return false;
  const int64_t hour = HourOfBucket(b, options_.bucket_ms);
  auto h = std::lower_bound(p->hours.begin(), p->hours.end(), hour,
                            [](const std::shared_ptr<HourChunk>& c, int64_t x) { return c->hour < x; });
  return h != p->hours.end() && (*h)->hour == hour &&
         std::binary_search((*h)->buckets.begin(), (*h)->buckets.end(), b);
}

void ShardState::Compact(int64_t b, Members& m) {
  auto same = [](Ref x, Ref y) { return x.table == y.table && x.slot == y.slot; };
  auto less = [](Ref x, Ref y) { return x.table != y.table ? x.table < y.table : x.slot < y.slot; };
  std::sort(m.refs.begin(), m.refs.end(), less);
  m.refs.erase(std::unique(m.refs.begin(), m.refs.end(), same), m.refs.end());
  m.refs.erase(std::remove_if(m.refs.begin(), m.refs.end(), [&](Ref x) { return !HasBucket(x, b); }),
               m.refs.end());
  m.live = static_cast<uint32_t>(m.refs.size());
}

void ShardState::Release(Ref r) {
  std::shared_ptr<SeriesData>& p = slots(r.table)[r.slot];
  // Its buckets lose a live series (their lists drop the stale ref when compacted).
  for (const auto& c : p->hours) {
    for (int64_t b : c->buckets) {
      if (auto it = members_.find(b); it != members_.end() && it->second.live > 0) --it->second.live;
    }
  }
  index_.erase(IndexEntry{IndexHash(p->hash), r});
  KeyTexts(p->key, -1);
  memory_bytes_ -= static_cast<int64_t>(SeriesBytes(*p));
  for (const auto& c : p->hours) memory_bytes_ -= static_cast<int64_t>(HourBytes(*c));
  p.reset();
  free_slots_[static_cast<size_t>(r.table)].push_back(r.slot);
  --live_series_;
  Touch(r);
}

void ShardState::ReleaseIfEmpty(Ref r) {
  const auto& p = slots(r.table)[r.slot];
  if (p && p->hours.empty()) Release(r);
}

void ShardState::Fold(Ref r) {
  std::shared_ptr<SeriesData> x = slots(r.table)[r.slot];  // kept alive through the moves below
  if (x->level >= FoldLevels(x->key.table)) return;
  const SeriesKey okey = FoldKey(x->key, x->level + 1, *symbols_);
  const Ref o = SeriesFor(okey, KeyContentHash(okey, *symbols_));
  for (const auto& c : x->hours) {
    for (size_t i = 0; i < c->buckets.size(); ++i) {
      AddToEntry(o, c->buckets[i], c->values[i], 0, BucketImageInstalls(*c, i));
    }
  }
  SeriesData& os = Mutable(o);
  if (!x->installs.empty()) {
    const size_t before = os.installs.MemoryBytes();
    os.installs.Merge(x->installs);
    memory_bytes_ += static_cast<int64_t>(os.installs.MemoryBytes()) - static_cast<int64_t>(before);
  }
  os.first_ms = std::min(os.first_ms, x->first_ms);
  ++counters_.folded;
  Release(r);
}

void ShardState::FoldIfOverBudget() {
  grew_since_check_ = 0;
  if (live_series_ > options_.max_series) {
    FoldOnce(options_.max_series * 9 / 10);
  } else if (MemoryBytes() > state_budget_) {
    FoldOnce(live_series_ * 7 / 10);
  }
}

void ShardState::FoldDownTo(size_t series) {
  owner_.Check("ShardState::FoldDownTo");
  if (live_series_ > series) FoldOnce(series);
}

void ShardState::FoldOnce(size_t target) {
  // Least significant first: the smallest share of its own table's total (so hang
  // microseconds, crash counts and usage milliseconds compete fairly), usage
  // series weighted ten times (folding usage takes rates away from whole groups).
  // A series that folds into an "(other)" series that does not exist yet only
  // moves up (a distinct thread becomes a distinct "(other)"): passes repeat until
  // the count is under the target. Terminal series never fold, and there are at
  // most a few of them, so this ends.
  for (int pass = 0; pass < 8 && live_series_ > target; ++pass) {
    struct Candidate {
      double share;
      Ref ref;
    };
    std::array<double, kTableCount> totals{};
    std::vector<Candidate> candidates;
    candidates.reserve(live_series_);
    for (size_t t = 0; t < kTableCount; ++t) {
      for (uint32_t slot = 0; slot < slots_[t].size(); ++slot) {
        const auto& s = slots_[t][slot];
        if (!s || s->level >= FoldLevels(s->key.table)) continue;
        totals[t] += static_cast<double>(std::max<int64_t>(s->total()[0], 0));
        candidates.push_back({0, Ref{static_cast<Table>(t), slot}});
      }
    }
    for (Candidate& c : candidates) {
      const SeriesData& s = *slots(c.ref.table)[c.ref.slot];
      const double total = totals[static_cast<size_t>(c.ref.table)];
      const double weight = c.ref.table == Table::kUsage || c.ref.table == Table::kBuildUsage ? 10 : 1;
      c.share = total > 0 ? weight * static_cast<double>(std::max<int64_t>(s.total()[0], 0)) / total : 0;
    }
    const size_t to_fold = std::min(live_series_ - target, candidates.size());
    if (to_fold == 0) return;
    auto less = [&](const Candidate& a, const Candidate& b) {
      if (a.share != b.share) return a.share < b.share;
      const SeriesData& x = *slots(a.ref.table)[a.ref.slot];
      const SeriesData& y = *slots(b.ref.table)[b.ref.slot];
      if (x.level != y.level) return x.level < y.level;
      return KeyLess(x.key, y.key, *symbols_);
    };
    std::nth_element(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(to_fold - 1),
                     candidates.end(), less);
    for (size_t i = 0; i < to_fold; ++i) {
      if (slots(candidates[i].ref.table)[candidates[i].ref.slot]) Fold(candidates[i].ref);
    }
  }
  // The index and bucket lists keep their peak capacity unless asked: give it back,
  // or the tables alone could keep the state over its budget.
  index_.rehash(0);
  members_.rehash(0);
}

// ------------------------------------------------------------ readers

std::shared_ptr<const ShardSnapshot> ShardState::Snapshot() {
  owner_.Check("ShardState::Snapshot");
  auto snap = std::make_shared<ShardSnapshot>();
  snap->stream_time_ms = stream_time_ms_;
  snap->table_time_ms = table_time_ms_;
  snap->counters = counters_;
  snap->memory_bytes = MemoryBytes();
  snap->text_pin = symbols_->text().Pin();
  snap->stack_pin = symbols_->stacks().Pin();
  for (size_t t = 0; t < kTableCount; ++t) {
    const auto& table_slots = slots_[t];
    auto& pages = pages_[t];
    pages.resize((table_slots.size() + kSeriesPage - 1) / kSeriesPage);
    for (uint32_t p : changed_pages_[t]) {
      if (p >= pages.size()) continue;
      auto page = std::make_shared<SeriesPage>();
      bool any = false;
      for (size_t i = 0; i < kSeriesPage; ++i) {
        const size_t slot = p * kSeriesPage + i;
        if (slot >= table_slots.size()) break;
        page->series[i] = table_slots[slot];
        any = any || table_slots[slot] != nullptr;
      }
      pages[p] = any ? std::move(page) : nullptr;
      page_changed_[t][p] = false;
    }
    changed_pages_[t].clear();
    snap->pages[t].reserve(pages.size());
    snap->page_numbers[t].reserve(pages.size());
    for (size_t p = 0; p < pages.size(); ++p) {
      if (!pages[p]) continue;
      snap->pages[t].push_back(pages[p]);
      snap->page_numbers[t].push_back(static_cast<uint32_t>(p));
    }
  }
  return snap;
}

void ShardState::MarkIds(std::vector<uint64_t>& text, std::vector<uint64_t>& stacks) const {
  owner_.Check("ShardState::MarkIds");
  for (size_t t = 0; t < kTableCount; ++t) {
    for (const auto& s : slots_[t]) {
      if (s) MarkKeyIds(s->key, text, stacks);
    }
  }
}

// ------------------------------------------------------------ checkpoints

ShardImage ShardState::Image() const {
  owner_.Check("ShardState::Image");
  ShardImage image;
  image.stream_time_ms = stream_time_ms_;
  image.counters = counters_;
  image.dedup_epoch = dedup_epoch_;
  image.seen_docs.assign(seen_crash_docs_.begin(), seen_crash_docs_.end());
  image.seen_previous.assign(seen_previous_.begin(), seen_previous_.end());
  std::sort(image.seen_docs.begin(), image.seen_docs.end());
  std::sort(image.seen_previous.begin(), image.seen_previous.end());
  for (size_t t = 0; t < kTableCount; ++t) {
    for (const auto& s : slots_[t]) {
      if (s) image.series.push_back(ImageOf(*s));
    }
  }
  return image;
}

void ShardState::RestoreBegin(const ShardImage& image, bool with_dedup, bool with_counters) {
  owner_.Check("ShardState::RestoreBegin");
  if (image.stream_time_ms != INT64_MIN) AdvanceTo(EventTime{image.stream_time_ms});
  if (with_counters) AddCounts(counters_, image.counters);
  // Several images may restore into one state (another shard count; a partition's shards):
  // their generations line up by epoch, as SeenBefore moves them when time advances. An image
  // that never remembered an id (INT64_MIN) holds none and changes nothing.
  if (with_dedup && image.dedup_epoch != INT64_MIN) {
    if (dedup_epoch_ != INT64_MIN && image.dedup_epoch > dedup_epoch_) {
      // The image is newer: what this state holds ages to its epoch first.
      if (image.dedup_epoch == dedup_epoch_ + 1) {
        seen_previous_ = std::move(seen_crash_docs_);
      } else {
        seen_previous_ = {};
      }
      seen_crash_docs_ = {};
      dedup_epoch_ = image.dedup_epoch;
    }
    if (dedup_epoch_ == INT64_MIN || image.dedup_epoch == dedup_epoch_) {
      dedup_epoch_ = image.dedup_epoch;
      seen_crash_docs_.insert(image.seen_docs.begin(), image.seen_docs.end());
      seen_previous_.insert(image.seen_previous.begin(), image.seen_previous.end());
    } else if (image.dedup_epoch + 1 == dedup_epoch_) {
      // The image is one epoch older: its current generation is this state's previous one,
      // its previous one has expired.
      seen_previous_.insert(image.seen_docs.begin(), image.seen_docs.end());
    }
  }
}

void ShardState::RestoreSeries(const SeriesImage& in) {
  owner_.Check("ShardState::RestoreSeries");
  const Ref r = SeriesFor(in.key, KeyContentHash(in.key, *symbols_));
  const int64_t expired = BucketOf(stream_time_ms_) - options_.retention_ms / options_.bucket_ms;
  for (const SeriesImage::Entry& e : in.entries) {
    if (stream_time_ms_ != INT64_MIN && e.bucket <= expired) continue;  // retention shrank since
    AddToEntry(r, e.bucket, e.v, 0, e.installs.empty() ? nullptr : &e.installs);
  }
  SeriesData& s = Mutable(r);
  s.first_ms = std::min(s.first_ms, in.first_ms);
  if (!in.installs.empty()) {
    const size_t before = s.installs.MemoryBytes();
    s.installs.Merge(in.installs);
    memory_bytes_ += static_cast<int64_t>(s.installs.MemoryBytes()) - static_cast<int64_t>(before);
  }
  ReleaseIfEmpty(r);
}

}  // namespace seismo
