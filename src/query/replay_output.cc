#include "seismo/query/replay_output.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "seismo/core/json_writer.h"
#include "seismo/core/ordered_parts.h"
#include "seismo/core/reject.h"

namespace seismo {

double UsageHours(int64_t usage_ms) { return static_cast<double>(usage_ms) / 3'600'000.0; }

std::optional<double> PerUsageHour(int64_t amount_thousandths, int64_t usage_ms) {
  if (usage_ms <= 0) return std::nullopt;
  // (amount / 1000) / (usage_ms / 3.6e6) = amount * 3600 / usage_ms
  return static_cast<double>(amount_thousandths) * 3600.0 / static_cast<double>(usage_ms);
}

namespace {

// A JsonWriter whose text goes to the sink whenever a row leaves a piece's worth; without
// a sink, the writer keeps the whole text (ReplayOutputJson: no copy through a sink).
class PieceWriter {
 public:
  PieceWriter(int indent, OutputSink* sink) : w_(indent), sink_(sink) {}
  JsonWriter& w() { return w_; }
  void RowDone() {
    if (sink_ != nullptr && w_.text().size() >= kOutputPiece) Flush();
  }
  // Hands the text made so far to the sink whole (ThreadedFileSink keeps it: no copy) and
  // goes on in the buffer it gives back.
  void Flush() {
    if (sink_ == nullptr || w_.text().empty()) return;
    w_.HandText([this](std::string text) { return sink_->Hand(std::move(text)); });
  }
  // Text a JsonWriter::ContinuingAfter(w()) writer made: after what w() holds, as it is.
  // Handed to the sink whole; `text` is left with the buffer it gives back.
  void Continued(std::string& text) {
    if (sink_ == nullptr) {
      w_.AppendContinued(text);
      return;
    }
    Flush();
    text = sink_->Hand(std::move(text));
  }

 private:
  JsonWriter w_;
  OutputSink* sink_;
};

// Asks memory ahead for what writing row i + ahead will read. Rows go out in key order,
// which visits their series, hours, stacks, frames and texts in no order the hardware
// foresees: without it, the output spent 40 % of its time waiting on those reads (ADR 0020).
// Each step reads only what an earlier step (more rows ahead) asked for.
class RowPrefetcher {
 public:
  RowPrefetcher(const std::vector<const SeriesData*>& rows, const Symbols& symbols)
      : rows_(rows), symbols_(symbols) {}

  void Ahead(size_t i) const {
    if (const SeriesData* s = At(i + 20)) {  // the series
      __builtin_prefetch(s);
      __builtin_prefetch(reinterpret_cast<const char*>(s) + 64);
    }
    if (const SeriesData* s = At(i + 14)) {  // its total; its texts' and stack's slots
      if (s->keeps_total()) {
        __builtin_prefetch(&s->total());
      } else if (!s->hours.empty()) {
        __builtin_prefetch(s->hours.front().get());
        __builtin_prefetch(reinterpret_cast<const char*>(s->hours.front().get()) + 64);
      }
      ForFields(*s, [&](InternId id, bool stack) { TableOf(stack).PrefetchSlot(id); });
    }
    if (const SeriesData* s = At(i + 9)) {  // its texts and its stack
      ForFields(*s, [&](InternId id, bool stack) { TableOf(stack).PrefetchEntry(id); });
    }
    if (const SeriesData* s = At(i + 5); s != nullptr && s->table() == Table::kHangs) {  // frames' slots
      for (Sym f : symbols_.Frames(s->key[hang_field::kStack])) symbols_.text().PrefetchSlot(f);
    }
    if (const SeriesData* s = At(i + 2); s != nullptr && s->table() == Table::kHangs) {  // frames
      for (Sym f : symbols_.Frames(s->key[hang_field::kStack])) symbols_.text().PrefetchEntry(f);
    }
  }

 private:
  const SeriesData* At(size_t i) const { return i < rows_.size() ? rows_[i] : nullptr; }
  template <class F>
  static void ForFields(const SeriesData& s, F&& f) {
    for (size_t k = 0; k < FieldCount(s.table()); ++k) f(s.key[k], IsStackField(s.table(), k));
  }

  const InternTable& TableOf(bool stack) const { return stack ? symbols_.stacks() : symbols_.text(); }

  const std::vector<const SeriesData*>& rows_;
  const Symbols& symbols_;
};

// Writes a row's texts: the JSON string of each, quoted and escaped the first time a row
// writes it and copied from then on. Texts recur from row to row: a padded replay writes
// 490 000 frames of a few thousand texts and a dense one 910 000 of 250 000, and every row
// repeats its channel and OS; escaping each every time was a quarter of the output's making.
// A cache is one writer's, the caller's, for every table it writes; the parts other threads
// write escape each text as it comes. The same bytes either way. The ids below kMaxIds are
// cached, up to kMaxBytes of strings, each text of at
// most kMaxBytes / 8 bytes (escaped, at most 6 bytes a byte).
class RowTexts {
 public:
  static constexpr size_t kMaxIds = size_t{1} << 22;  // 32 MiB of spans
  static constexpr size_t kMaxBytes = size_t{32} << 20;

  RowTexts(const Snapshot& snap, bool cached)
      : snap_(snap),
        spans_(cached && snap.symbols != nullptr ? std::min<size_t>(snap.symbols->text().IdBound(), kMaxIds)
                                                 : 0) {}

  // `"name": text` for each (name, field) of `key`, in that order.
  void Fields(JsonWriter& w, const SeriesKey& key,
              std::initializer_list<std::pair<std::string_view, size_t>> fields) {
    for (const auto& [name, field] : fields) Write(w.Key(name), key[field]);
  }

  void Write(JsonWriter& w, Sym s) {
    if (s < spans_.size() && spans_[s].size != 0) {
      w.Raw(std::string_view(quoted_).substr(spans_[s].begin, spans_[s].size));
      return;
    }
    const std::string_view text = snap_.Text(s);
    if (s >= spans_.size() || quoted_.size() >= kMaxBytes || text.size() > kMaxBytes / 8) {
      w.String(text);
      return;
    }
    const size_t begin = quoted_.size();
    quoted_ += '"';
    AppendJsonEscaped(quoted_, text);
    quoted_ += '"';
    spans_[s] = {static_cast<uint32_t>(begin), static_cast<uint32_t>(quoted_.size() - begin)};
    w.Raw(std::string_view(quoted_).substr(begin));
  }

 private:
  struct Span {
    uint32_t begin = 0;
    uint32_t size = 0;  // 0: not made yet (a made one holds its quotes)
  };
  const Snapshot& snap_;
  std::vector<Span> spans_;  // by text id; none without a cache
  std::string quoted_;
};

// Rows per part when several threads write a table: a part is 100-600 KB of text.
constexpr size_t kRowsPerPart = 512;

// Writes row(w, series, texts) for every series of table `t` in key order into `out`'s open
// array, asking memory ahead for the rows to come (RowPrefetcher). The rows `out` writes
// itself take their texts from `texts` (the caller's cache). With several threads and more
// than a part of rows, the first part is written by `out` and the others by writers
// continuing after it, on `threads` threads, handed on in order (MakeInOrder): the same
// bytes. `row` must only read the snapshot.
template <class Row>
void WriteRows(PieceWriter& out, RowTexts& texts, const Snapshot& snap, Table t, int threads,
               const Row& row) {
  const auto& rows = snap.sorted(t);
  const RowPrefetcher prefetch(rows, *snap.symbols);
  auto write = [&](JsonWriter& w, size_t begin, size_t end, PieceWriter* piece, RowTexts& with) {
    for (size_t i = begin; i < end; ++i) {
      prefetch.Ahead(i);
      row(w, rows[i], with);
      if (piece != nullptr) piece->RowDone();
    }
  };
  if (threads <= 1 || rows.size() <= kRowsPerPart) {
    write(out.w(), 0, rows.size(), &out, texts);
    return;
  }
  write(out.w(), 0, kRowsPerPart, &out, texts);
  const JsonWriter continuing = JsonWriter::ContinuingAfter(out.w());
  const size_t parts = (rows.size() - 1) / kRowsPerPart;  // after the first
  MakeInOrder(
      parts, threads, 4 * static_cast<size_t>(threads),
      [&](size_t part, std::string& text) {
        JsonWriter w = continuing;
        RowTexts uncached(snap, /*cached=*/false);  // this thread's
        const size_t begin = (part + 1) * kRowsPerPart;
        write(w, begin, std::min(rows.size(), begin + kRowsPerPart), nullptr, uncached);
        text = w.Take();
      },
      [&](std::string& text) { out.Continued(text); });
}

// The usage (ms, the first value) of every series of `t`, by key: the denominators of
// the hang and crash rows.
absl::flat_hash_map<SeriesKey, int64_t> UsageByKey(const Snapshot& snap, Table t) {
  absl::flat_hash_map<SeriesKey, int64_t> out;
  out.reserve(snap.table(t).size());
  for (const SeriesData* s : snap.table(t)) out.emplace(s->key, s->total()[0]);
  return out;
}

// The key of table `t` made of the first FieldCount(t) fields of `from`.
SeriesKey Prefix(const SeriesKey& from, Table t) {
  SeriesKey k;
  k.table = t;
  for (size_t i = 0; i < FieldCount(t); ++i) k.f[i] = from.f[i];
  return k;
}

int64_t Find(const absl::flat_hash_map<SeriesKey, int64_t>& usage, const SeriesKey& key) {
  auto it = usage.find(key);
  return it == usage.end() ? 0 : it->second;
}

void WriteRecords(JsonWriter& w, const Snapshot& snap, const RecordCounts& c) {
  w.Key("records").BeginObject();
  w.Key("main").Uint(c.by_kind[0]);
  w.Key("bhr").Uint(c.by_kind[1]);
  w.Key("crash").Uint(c.by_kind[2]);
  uint64_t rejected_total = 0;
  w.Key("rejected").BeginObject();
  for (size_t i = 0; i < kRejectReasonCount; ++i) {
    auto r = static_cast<RejectReason>(i);
    if (r == RejectReason::kFiltered || c.rejected[i] == 0) continue;
    rejected_total += c.rejected[i];
    w.Key(RejectReasonName(r)).Uint(c.rejected[i]);
  }
  w.EndObject();
  w.Key("rejected_total").Uint(rejected_total);
  w.Key("filtered").Uint(c.rejected[static_cast<size_t>(RejectReason::kFiltered)]);
  w.Key("duplicates").Uint(snap.counters.duplicates);
  w.Key("late_dropped").Uint(snap.counters.late_dropped);
  w.Key("folded_series").Uint(snap.counters.folded);
  w.EndObject();
}

void WriteUsage(PieceWriter& out, RowTexts& texts, const Snapshot& snap, int threads) {
  JsonWriter& doc = out.w();
  doc.Key("usage").BeginArray();
  WriteRows(out, texts, snap, Table::kUsage, threads,
            [&](JsonWriter& w, const SeriesData* s, RowTexts& text) {
              const SeriesKey& k = s->key;
              w.BeginObject();
              text.Fields(w, k,
                          {{"source", usage_field::kSource},
                           {"channel", usage_field::kChannel},
                           {"os", usage_field::kOs},
                           {"build_date", usage_field::kBuildDate}});
              w.Key("usage_hours").Double(UsageHours(s->total()[0]));
              w.Key("pings").Int(s->total()[1]);
              w.EndObject();
            });
  doc.EndArray();
}

void WriteBuilds(PieceWriter& out, RowTexts& texts, const Snapshot& snap, int threads) {
  JsonWriter& doc = out.w();
  doc.Key("builds").BeginArray();
  WriteRows(out, texts, snap, Table::kBuildUsage, threads,
            [&](JsonWriter& w, const SeriesData* s, RowTexts& text) {
              const SeriesKey& k = s->key;
              const Values& v = s->total();
              w.BeginObject();
              text.Fields(w, k,
                          {{"channel", build_field::kChannel},
                           {"product", build_field::kProduct},
                           {"version", build_field::kVersion},
                           {"build_id", build_field::kBuildId},
                           {"os", build_field::kOs}});
              w.Key("usage_hours").Double(UsageHours(v[0]));
              w.Key("pings").Int(v[1]);
              w.Key("subprocess_crashes").BeginObject();
              w.Key("gpu").Int(v[2]);
              w.Key("plugin").Int(v[3]);
              w.Key("gmplugin").Int(v[4]);
              w.EndObject();
              w.EndObject();
            });
  doc.EndArray();
}

void WriteHangs(PieceWriter& out, RowTexts& texts, const Snapshot& snap, int threads) {
  // A hang's (source, channel, os, build_date) is its usage key (selection.h).
  const auto usage = UsageByKey(snap, Table::kUsage);
  JsonWriter& doc = out.w();
  doc.Key("hangs").BeginArray();
  WriteRows(out, texts, snap, Table::kHangs, threads,
            [&](JsonWriter& w, const SeriesData* s, RowTexts& text) {
              const SeriesKey& k = s->key;
              const Values& v = s->total();
              const int64_t usage_ms = Find(usage, Prefix(k, Table::kUsage));
              w.BeginObject();
              text.Fields(w, k,
                          {{"source", hang_field::kSource},
                           {"channel", hang_field::kChannel},
                           {"os", hang_field::kOs},
                           {"build_date", hang_field::kBuildDate},
                           {"process", hang_field::kProcess},
                           {"thread", hang_field::kThread},
                           {"signature", hang_field::kSignature}});
              w.Key("stack").BeginArray();
              for (Sym frame : snap.symbols->Frames(k[hang_field::kStack])) text.Write(w, frame);
              w.EndArray();
              w.Key("hang_ms").Double(static_cast<double>(v[0]) / 1000.0);
              w.Key("hang_count").Int(v[1]);
              w.Key("hang_ms_per_hour").OptDouble(PerUsageHour(v[0], usage_ms));
              w.Key("hang_count_per_hour").OptDouble(PerUsageHour(v[1] * 1000, usage_ms));
              w.EndObject();
            });
  doc.EndArray();
}

void WriteCrashes(PieceWriter& out, RowTexts& texts, const Snapshot& snap, int threads) {
  // A crash's (channel, product, version, build_id, os) is its build usage key (selection.h).
  const auto builds = UsageByKey(snap, Table::kBuildUsage);
  JsonWriter& doc = out.w();
  doc.Key("crashes").BeginArray();
  WriteRows(out, texts, snap, Table::kCrashes, threads,
            [&](JsonWriter& w, const SeriesData* s, RowTexts& text) {
              const SeriesKey& k = s->key;
              const Values& v = s->total();
              const int64_t usage_ms = Find(builds, Prefix(k, Table::kBuildUsage));
              w.BeginObject();
              text.Fields(w, k,
                          {{"channel", crash_field::kChannel},
                           {"product", crash_field::kProduct},
                           {"version", crash_field::kVersion},
                           {"build_id", crash_field::kBuildId},
                           {"os", crash_field::kOs},
                           {"process", crash_field::kProcess},
                           {"class", crash_field::kClass},
                           {"signature", crash_field::kSignature}});
              w.Key("count").Int(v[0]);
              w.Key("startup_count").Int(v[1]);
              w.Key("installs").Int(static_cast<int64_t>(std::llround(s->installs.Estimate())));
              // crashes per 1000 usage hours = count / (hours / 1000)
              w.Key("rate_per_1000h").OptDouble(PerUsageHour(v[0] * 1000 * 1000, usage_ms));
              w.EndObject();
            });
  doc.EndArray();
}

void WriteDocument(PieceWriter& out, const Snapshot& snap, const RecordCounts& counts,
                   std::string_view alerts_json, int threads) {
  JsonWriter& w = out.w();
  RowTexts texts(snap, /*cached=*/true);  // the texts of the rows this thread writes
  w.BeginObject();
  WriteRecords(w, snap, counts);
  WriteUsage(out, texts, snap, threads);
  WriteBuilds(out, texts, snap, threads);
  WriteHangs(out, texts, snap, threads);
  WriteCrashes(out, texts, snap, threads);
  w.Key("alerts").Raw(alerts_json);
  w.EndObject();
}

}  // namespace

void WriteReplayOutput(const Snapshot& snap, const RecordCounts& counts, std::string_view alerts_json,
                       int indent, OutputSink& sink, int threads) {
  PieceWriter out(indent, &sink);
  WriteDocument(out, snap, counts, alerts_json, threads);
  out.Flush();
}

std::string ReplayOutputJson(const Snapshot& snap, const RecordCounts& counts, const std::string& alerts_json,
                             int indent, int threads) {
  PieceWriter out(indent, nullptr);
  WriteDocument(out, snap, counts, alerts_json, threads);
  return out.w().Take();
}

}  // namespace seismo
