#include "seismo/aggregate/delta.h"

#include "seismo/core/hash.h"

namespace seismo {

size_t ValueCount(Table t) {
  switch (t) {
    case Table::kUsage:
      return 2;
    case Table::kBuildUsage:
      return 5;
    case Table::kHangs:
      return 2;
    case Table::kCrashes:
      return 2;
  }
  return 0;
}

std::string JoinKey(std::initializer_list<std::string_view> fields) {
  size_t n = 0;
  for (std::string_view f : fields) n += f.size() + 1;
  std::string key;
  key.reserve(n);
  bool first = true;
  for (std::string_view f : fields) {
    if (!first) key += kKeySep;
    first = false;
    key.append(f);
  }
  return key;
}

static std::vector<std::string_view> Split(std::string_view s, char sep) {
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

std::vector<std::string_view> SplitKey(std::string_view key) { return Split(key, kKeySep); }

std::vector<std::string_view> SplitStack(std::string_view stack) {
  if (stack.empty()) return {};
  if (stack == kOneEmptyFrame) return {std::string_view()};
  return Split(stack, kStackSep);
}

std::string JoinStack(const std::vector<std::string>& frames) {
  if (frames.size() == 1 && frames[0].empty()) return std::string(kOneEmptyFrame);
  std::string out;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i > 0) out += kStackSep;
    out += frames[i];
  }
  return out;
}

uint64_t InstallHash(std::string_view install_id) {
  return install_id.empty() ? 0 : Hash64(install_id, 0x1a57a11);
}

void DocumentToDeltas(const ParsedDocument& doc, EventTime t,
                      const std::function<void(Delta&&)>& emit) {
  const Dimensions& d = doc.dims;
  auto make = [&](Table table, std::string key) {
    Delta delta;
    delta.table = table;
    delta.route_hash = Hash64(key);
    delta.key = std::move(key);
    delta.time = t;
    return delta;
  };
  if (doc.kind == DocKind::kMain || doc.kind == DocKind::kBhr) {
    std::string_view source = doc.kind == DocKind::kMain ? "main" : "bhr";
    Delta usage = make(Table::kUsage, JoinKey({source, d.channel, d.os, d.build_date}));
    usage.values[0] = doc.usage_ms;
    usage.values[1] = 1;
    emit(std::move(usage));
    if (doc.kind == DocKind::kMain) {
      Delta build = make(Table::kBuildUsage, JoinKey({d.channel, d.product, d.version, d.build_id, d.os}));
      build.values = {doc.usage_ms, 1, static_cast<int64_t>(doc.subprocess_crashes.gpu),
                      static_cast<int64_t>(doc.subprocess_crashes.plugin),
                      static_cast<int64_t>(doc.subprocess_crashes.gmplugin)};
      // Installs that reported a sub-process crash (not every install that sent usage:
      // a sketch per usage bucket would cost far more than the rules need).
      if (build.values[2] + build.values[3] + build.values[4] > 0) {
        build.install_hash = InstallHash(doc.install_id);
      }
      emit(std::move(build));
    }
    for (const HangRecord& h : doc.hangs) {
      Delta hang = make(Table::kHangs, JoinKey({source, d.channel, d.os, d.build_date, h.process, h.thread,
                                                h.signature, JoinStack(h.stack)}));
      hang.values[0] = h.hang_us;
      hang.values[1] = static_cast<int64_t>(h.hang_count);
      hang.install_hash = InstallHash(doc.install_id);
      emit(std::move(hang));
    }
  }
  if (doc.crash) {
    const CrashRecord& c = *doc.crash;
    Delta crash = make(Table::kCrashes, JoinKey({d.channel, d.product, d.version, d.build_id, d.os, c.process,
                                                 CrashClassName(c.crash_class), c.signature}));
    crash.values[0] = 1;
    crash.values[1] = c.startup ? 1 : 0;
    crash.install_hash = InstallHash(c.install_id);
    if (!doc.doc_id.empty()) {
      // Every copy of a document must meet the same shard's memory of ids, whatever
      // its signature or dimensions: such deltas are routed by the id, not the key.
      // A crash series may then live in several shards; snapshots and merges add them.
      crash.doc_hash = Hash64(doc.doc_id, 0xd0c1d) | 1;
      crash.route_hash = crash.doc_hash;
    }
    emit(std::move(crash));
  }
}

}  // namespace seismo
