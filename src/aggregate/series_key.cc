#include "seismo/aggregate/series_key.h"

#include <algorithm>

#include "seismo/core/hash.h"

namespace seismo {

KeyBuilder& KeyBuilder::Add(uint32_t id, uint64_t content_hash) {
  key_.f[n_++] = id;
  hash_ = HashCombine(hash_, content_hash);
  return *this;
}

uint64_t KeyContentHash(const SeriesKey& key, const Symbols& symbols) {
  KeyBuilder b(key.table);
  for (size_t i = 0; i < FieldCount(key.table); ++i) {
    b.Add(key.f[i], IsStackField(key.table, i) ? symbols.StackHash(key.f[i]) : symbols.text().Hash(key.f[i]));
  }
  return b.hash();
}

std::string FieldText(const SeriesKey& key, size_t i, const Symbols& symbols, std::string_view stack_sep) {
  if (IsStackField(key.table, i)) return symbols.StackText(key.f[i], stack_sep);
  return std::string(symbols.Text(key.f[i]));
}

namespace {

int Compare(std::string_view a, std::string_view b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

int CompareFields(const SeriesKey& a, const SeriesKey& b, size_t i, const Symbols& symbols) {
  if (a.f[i] == b.f[i]) return 0;
  if (!IsStackField(a.table, i)) return Compare(symbols.Text(a.f[i]), symbols.Text(b.f[i]));
  return CompareStacks(a.f[i], b.f[i], symbols);
}

int CompareStacks(StackId a, StackId b, const Symbols& symbols) {
  if (a == b) return 0;
  std::span<const Sym> x = symbols.Frames(a);
  std::span<const Sym> y = symbols.Frames(b);
  const size_t n = std::min(x.size(), y.size());
  for (size_t k = 0; k < n; ++k) {
    if (x[k] == y[k]) continue;
    return Compare(symbols.Text(x[k]), symbols.Text(y[k]));
  }
  return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
}

bool KeyLess(const SeriesKey& a, const SeriesKey& b, const Symbols& symbols) {
  if (a.table != b.table) return a.table < b.table;
  for (size_t i = 0; i < FieldCount(a.table); ++i) {
    if (int c = CompareFields(a, b, i, symbols)) return c < 0;
  }
  return false;
}

void FieldRanks::Add(const SeriesKey& key) {
  for (size_t i = 0; i < FieldCount(key.table); ++i) {
    if (IsStackField(key.table, i)) continue;
    if (rank_.try_emplace(key.f[i], 0).second) texts_.push_back(key.f[i]);
  }
}

void FieldRanks::Rank() {
  std::sort(texts_.begin(), texts_.end(), [&](Sym a, Sym b) { return symbols_.Text(a) < symbols_.Text(b); });
  for (size_t r = 0; r < texts_.size(); ++r) rank_[texts_[r]] = static_cast<uint32_t>(r + 1);
}

void MarkKeyIds(const SeriesKey& key, std::vector<uint64_t>& text, std::vector<uint64_t>& stacks) {
  for (size_t i = 0; i < FieldCount(key.table); ++i) {
    std::vector<uint64_t>& bits = IsStackField(key.table, i) ? stacks : text;
    const size_t word = key.f[i] / 64;
    if (word >= bits.size()) bits.resize(word + 1, 0);
    bits[word] |= uint64_t{1} << (key.f[i] % 64);
  }
}

}  // namespace seismo
