#include "support/keys.h"

#include <vector>

namespace seismo::test {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  if (s.empty()) return out;
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

void Add(TextTotal& into, const SeriesData& s) {
  for (size_t i = 0; i < kMaxValues; ++i) into.total[i] += s.total()[i];
  into.installs.Merge(s.installs);
  into.first_ms = std::min(into.first_ms, s.first_ms);
}

}  // namespace

SeriesKey Key(Symbols& symbols, Table table, std::initializer_list<std::string_view> fields) {
  return Key(symbols, table, std::span<const std::string_view>(fields.begin(), fields.size()));
}

SeriesKey Key(Symbols& symbols, Table table, const std::vector<std::string>& fields) {
  const std::vector<std::string_view> views(fields.begin(), fields.end());
  return Key(symbols, table, std::span<const std::string_view>(views));
}

SeriesKey Key(Symbols& symbols, Table table, std::span<const std::string_view> fields) {
  SeriesKey key;
  key.table = table;
  size_t i = 0;
  for (std::string_view f : fields) {
    if (IsStackField(table, i)) {
      std::vector<Sym> frames;
      for (std::string_view frame : Split(f, '\x1e')) frames.push_back(symbols.Intern(frame));
      key.f[i] = symbols.InternStack(frames);
    } else {
      key.f[i] = symbols.Intern(f);
    }
    ++i;
  }
  return key;
}

Delta MakeDelta(Symbols& symbols, Table table, std::initializer_list<std::string_view> fields, int64_t t_ms,
                Values values) {
  Delta d;
  d.key = Key(symbols, table, fields);
  d.hash = KeyContentHash(d.key, symbols);
  d.route_hash = d.hash;
  d.time = EventTime{t_ms};
  d.values = values;
  return d;
}

std::string KeyText(const SeriesKey& key, const Symbols& symbols) {
  std::string out;
  for (size_t i = 0; i < FieldCount(key.table); ++i) {
    if (i > 0) out += '\x1f';
    out += FieldText(key, i, symbols, "\x1e");
  }
  return out;
}

std::map<std::string, TextTotal> Totals(const ShardState& state, Table t, const Symbols& symbols) {
  std::map<std::string, TextTotal> out;
  state.ForEach(t, [&](const SeriesData& s) { Add(out[KeyText(s.key, symbols)], s); });
  return out;
}

std::map<std::string, TextTotal> Totals(const Snapshot& snapshot, Table t) {
  std::map<std::string, TextTotal> out;
  for (const SeriesData* s : snapshot.table(t)) Add(out[KeyText(s->key, *snapshot.symbols)], *s);
  return out;
}

}  // namespace seismo::test

#include "seismo/aggregate/shard_image.h"

namespace seismo::test {

std::shared_ptr<const Snapshot> Combine(const std::vector<std::shared_ptr<const Snapshot>>& parts,
                                        const AggregateOptions& options) {
  auto symbols = std::make_shared<Symbols>();
  ShardState state(options, symbols.get());
  for (const auto& part : parts) {
    ShardImage image;
    image.stream_time_ms = part->stream_time_ms;
    image.counters = part->counters;
    state.RestoreBegin(image, false, true);
    for (size_t t = 0; t < kTableCount; ++t) {
      for (const SeriesData* s : part->table(static_cast<Table>(t))) {
        // The series' image, its key re-interned into the combined Symbols.
        SeriesImage out = ImageOf(*s);
        out.key = SeriesKey{};
        out.key.table = s->key.table;
        for (size_t i = 0; i < FieldCount(s->key.table); ++i) {
          if (IsStackField(s->key.table, i)) {
            std::vector<Sym> frames;
            for (Sym f : part->symbols->Frames(s->key[i])) frames.push_back(symbols->Intern(part->symbols->Text(f)));
            out.key.f[i] = symbols->InternStack(frames);
          } else {
            out.key.f[i] = symbols->Intern(part->symbols->Text(s->key[i]));
          }
        }
        state.RestoreSeries(out);
      }
    }
  }
  return MergeSnapshots({state.Snapshot()}, *symbols, options.bucket_ms, options.windows_ms, options.retention_ms,
                        true, symbols);
}

}  // namespace seismo::test
