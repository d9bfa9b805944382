#include "seismo/core/intern.h"

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#include "seismo/core/hash.h"

namespace seismo {

struct InternTable::Entry {
  uint64_t hash;
  uint32_t size;
  bool permanent;
  bool retired;   // swept, waiting for older pins (written by the sweeper only)
  // `size` bytes (allocated with the entry), aligned so that the stack table's
  // entries read as uint32_t arrays.
  alignas(8) char bytes[1];

  std::string_view view() const { return {bytes, size}; }
  static Entry* Make(std::string_view b, uint64_t hash, bool permanent) {
    void* mem = ::operator new(offsetof(Entry, bytes) + std::max<size_t>(b.size(), 1));
    auto* e = static_cast<Entry*>(mem);
    e->hash = hash;
    e->size = static_cast<uint32_t>(b.size());
    e->permanent = permanent;
    e->retired = false;
    if (!b.empty()) std::memcpy(e->bytes, b.data(), b.size());
    return e;
  }
  static void Free(Entry* e) { ::operator delete(e); }
  // The entry's allocation (malloc rounds it up to 16) and its share of the index: a
  // stripe's set slot (the id and a control byte, at a load between 7/16 and 7/8) and its
  // page slot.
  size_t Footprint() const {
    return ((offsetof(Entry, bytes) + std::max<size_t>(size, 1) + 15) & ~size_t{15}) + 16;
  }
};

namespace {

struct Key {
  std::string_view bytes;
  uint64_t hash;
};

// A stripe's hash of a string. The stripe was picked by the hash's low bits, so they are
// dropped: the set's 7-bit tags come from the bits above them.
constexpr size_t StripeHash(uint64_t hash) { return static_cast<size_t>(hash >> 6); }

}  // namespace

// A stripe's set holds ids alone (5 bytes a slot where a (view, hash, id) slot took 33);
// hashing and comparing an id reads its entry, which is live while the id is in a set
// (Sweep takes it out before the entry is retired).
struct InternTable::IdHash {
  using is_transparent = void;
  const InternTable* table;
  size_t operator()(InternId id) const { return StripeHash(table->EntryOf(id)->hash); }
  size_t operator()(const Key& k) const { return StripeHash(k.hash); }
};
struct InternTable::IdEq {
  using is_transparent = void;
  const InternTable* table;
  bool operator()(InternId a, InternId b) const { return a == b; }
  bool operator()(InternId id, const Key& k) const {
    const Entry* e = table->EntryOf(id);
    return e->hash == k.hash && e->view() == k.bytes;
  }
  bool operator()(const Key& k, InternId id) const { return (*this)(id, k); }
};

struct InternTable::Stripe {
  mutable Mutex mutex;
  absl::flat_hash_set<InternId, IdHash, IdEq> ids GUARDED_BY(mutex);
};

InternTable::InternTable() : stripes_(std::make_unique<Stripe[]>(kStripes)) {
  for (size_t i = 0; i < kStripes; ++i) {
    MutexLock lock(stripes_[i].mutex);
    stripes_[i].ids = absl::flat_hash_set<InternId, IdHash, IdEq>(0, IdHash{this}, IdEq{this});
  }
}

InternTable::~InternTable() {
  // Retired entries are still in their slots until reclaimed: one pass frees all.
  for (auto& p : pages_) {
    std::atomic<Entry*>* page = p.load(std::memory_order_relaxed);
    if (page == nullptr) continue;
    for (size_t i = 0; i < kPageSize; ++i) {
      if (Entry* e = page[i].load(std::memory_order_relaxed)) Entry::Free(e);
    }
    delete[] page;
  }
}

std::string_view InternTable::Bytes(InternId id) const {
  const Entry* e = EntryOf(id);
  return e == nullptr ? std::string_view() : e->view();
}

size_t InternTable::EntryBytes(InternId id) const {
  const Entry* e = EntryOf(id);
  return e == nullptr ? 0 : e->Footprint();
}

uint64_t InternTable::Hash(InternId id) const {
  const Entry* e = EntryOf(id);
  return e == nullptr ? 0 : e->hash;
}

bool InternTable::Equals(InternId id, std::string_view bytes) const {
  const Entry* e = EntryOf(id);
  return e != nullptr && e->view() == bytes;
}

void InternTable::Reserve(size_t ids) {
  // Stripes get a hash's share each, give or take: an eighth more than the mean.
  const size_t per_stripe = ids / kStripes + ids / kStripes / 8 + 1;
  for (size_t i = 0; i < kStripes; ++i) {
    MutexLock lock(stripes_[i].mutex);
    stripes_[i].ids.reserve(per_stripe);
  }
}

bool InternTable::EntryEquals(const Entry* e, std::string_view bytes) { return e->view() == bytes; }

InternId InternTable::AllocateId() {
  if (free_count_.load(std::memory_order_relaxed) > 0) {
    MutexLock lock(free_mutex_);
    if (!free_ids_.empty()) {
      InternId id = free_ids_.back();
      free_ids_.pop_back();
      free_count_.store(free_ids_.size(), std::memory_order_relaxed);
      return id;
    }
  }
  // relaxed is enough for the counter itself; IdBound() readers acquire it after
  // the entry is published (see Insert).
  InternId id = next_id_.fetch_add(1, std::memory_order_relaxed);
  if (id == 0) id = next_id_.fetch_add(1, std::memory_order_relaxed);  // wrapped: 2^32 ids in use
  const size_t p = id >> kPageBits;
  if (pages_[p].load(std::memory_order_acquire) == nullptr) {
    MutexLock lock(page_mutex_);
    if (pages_[p].load(std::memory_order_relaxed) == nullptr) {
      auto* page = new std::atomic<Entry*>[kPageSize];
      for (size_t i = 0; i < kPageSize; ++i) page[i].store(nullptr, std::memory_order_relaxed);
      pages_[p].store(page, std::memory_order_release);  // pairs with EntryOf's acquire
    }
  }
  return id;
}

std::pair<InternId, const InternTable::Entry*> InternTable::Insert(std::string_view bytes, uint64_t hash,
                                                                   bool permanent) {
  Stripe& stripe = stripes_[hash % kStripes];
  MutexLock lock(stripe.mutex);
  const Entry* made = nullptr;
  // One probe whether the bytes are there or not.
  auto it = stripe.ids.lazy_emplace(Key{bytes, hash}, [&](const auto& construct) {
    const InternId id = AllocateId();
    Entry* e = Entry::Make(bytes, hash, permanent);
    std::atomic<Entry*>* page = pages_[id >> kPageBits].load(std::memory_order_acquire);
    page[id & (kPageSize - 1)].store(e, std::memory_order_release);  // pairs with EntryOf
    construct(id);
    made = e;
  });
  if (made != nullptr) {
    live_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(made->Footprint(), std::memory_order_relaxed);
    return {*it, made};
  }
  Entry* e = EntryOf(*it);
  if (permanent) e->permanent = true;
  return {*it, e};
}

InternId InternTable::Intern(std::string_view bytes, uint64_t hash) {
  return Insert(bytes, hash, false).first;
}
InternId InternTable::Intern(std::string_view bytes) { return Insert(bytes, Hash64(bytes), false).first; }
InternId InternTable::InternPermanent(std::string_view bytes) {
  return Insert(bytes, Hash64(bytes), true).first;
}
InternId InternTable::InternPermanent(std::string_view bytes, uint64_t hash) {
  return Insert(bytes, hash, true).first;
}

std::optional<InternId> InternTable::Find(std::string_view bytes) const {
  const uint64_t hash = Hash64(bytes);
  const Stripe& stripe = stripes_[hash % kStripes];
  MutexLock lock(stripe.mutex);
  auto it = stripe.ids.find(Key{bytes, hash});
  if (it == stripe.ids.end()) return std::nullopt;
  return *it;
}

std::shared_ptr<const InternPin> InternTable::Pin() {
  MutexLock lock(pin_mutex_);
  if (pins_.empty() || pins_.back().first != epoch_) pins_.emplace_back(epoch_, 0);
  ++pins_.back().second;
  return std::make_shared<const InternPin>(this, epoch_);
}

InternPin::~InternPin() { table_->ReleasePin(epoch_); }

void InternTable::ReleasePin(uint64_t epoch) {
  MutexLock lock(pin_mutex_);
  auto it = std::find_if(pins_.begin(), pins_.end(), [&](const auto& p) { return p.first == epoch; });
  if (it != pins_.end() && --it->second == 0) pins_.erase(it);
  ReclaimLocked();
}

void InternTable::ReclaimLocked() {
  // A batch retired at epoch e may be read by pins of epochs <= e only.
  const uint64_t oldest_pin = pins_.empty() ? UINT64_MAX : pins_.front().first;
  size_t freed = 0;
  std::vector<InternId> ids;
  while (!retired_.empty() && retired_.front().epoch < oldest_pin) {
    for (auto& [id, e] : retired_.front().entries) {
      std::atomic<Entry*>* page = pages_[id >> kPageBits].load(std::memory_order_relaxed);
      page[id & (kPageSize - 1)].store(nullptr, std::memory_order_relaxed);
      freed += e->Footprint();
      Entry::Free(e);
      ids.push_back(id);
    }
    retired_.erase(retired_.begin());
  }
  if (ids.empty()) return;
  bytes_.fetch_sub(freed, std::memory_order_relaxed);
  MutexLock lock(free_mutex_);
  free_ids_.insert(free_ids_.end(), ids.begin(), ids.end());
  free_count_.store(free_ids_.size(), std::memory_order_relaxed);
}

size_t InternTable::Sweep(const std::vector<uint64_t>& live) {
  Retired batch;
  const InternId bound = next_id_.load(std::memory_order_acquire);
  for (InternId id = 1; id < bound; ++id) {
    const size_t word = id / 64;
    if (word < live.size() && (live[word] >> (id % 64) & 1) != 0) continue;
    Entry* e = EntryOf(id);
    if (e == nullptr || e->permanent || e->retired) continue;
    e->retired = true;
    Stripe& stripe = stripes_[e->hash % kStripes];
    {
      MutexLock lock(stripe.mutex);
      stripe.ids.erase(id);
    }
    batch.entries.emplace_back(id, e);
  }
  const size_t dropped = batch.entries.size();
  live_.fetch_sub(dropped, std::memory_order_relaxed);
  MutexLock lock(pin_mutex_);
  batch.epoch = epoch_++;
  if (dropped > 0) retired_.push_back(std::move(batch));
  // release: pairs with the caches' acquire in Revalidate().
  generation_.fetch_add(1, std::memory_order_release);
  ReclaimLocked();
  return dropped;
}

// ---------------------------------------------------------------- InternCache

InternCache::InternCache(InternTable* table, size_t slots)
    : table_(table), slots_(std::bit_ceil(std::max<size_t>(slots, 16))), generation_(table->generation()) {}

bool InternCache::Revalidate() {
  const uint64_t g = table_->generation();
  if (g == generation_) return false;
  std::fill(slots_.begin(), slots_.end(), Slot{});
  generation_ = g;
  return true;
}

InternId InternCache::Intern(std::string_view bytes, uint64_t hash) {
  Slot& slot = slots_[hash & (slots_.size() - 1)];
  if (slot.hash == hash && slot.id != kNoId && InternTable::EntryEquals(slot.entry, bytes)) return slot.id;
  const auto [id, entry] = table_->Insert(bytes, hash, false);
  slot = Slot{hash, id, entry};
  return id;
}

InternId InternCache::Intern(std::string_view bytes) { return Intern(bytes, Hash64(bytes)); }

}  // namespace seismo
