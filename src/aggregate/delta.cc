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

uint64_t InstallHash(std::string_view install_id) {
  return install_id.empty() ? 0 : Hash64(install_id, 0x1a57a11);
}

DeltaEncoder::DeltaEncoder(Symbols* symbols)
    : symbols_(symbols), text_(&symbols->text()), stacks_(&symbols->stacks(), size_t{1} << 13) {}

void DeltaEncoder::Revalidate() {
  // After a sweep (either cache cleared) the memo's ids may be gone too.
  const bool text_swept = text_.Revalidate();
  if (stacks_.Revalidate() || text_swept) memo_.Clear();
}

DeltaEncoder::Field DeltaEncoder::Text(std::string_view text) {
  const uint64_t hash = Hash64(text);
  return {text_.Intern(text, hash), hash};
}

DeltaEncoder::Field DeltaEncoder::Stack(std::span<const std::string_view> frames) {
  frame_hashes_.clear();
  for (std::string_view f : frames) frame_hashes_.push_back(Hash64(f));
  const uint64_t hash = StackContentHash(frame_hashes_);
  if (const StackId kept = memo_.Find(hash, frames); kept != kNoId) return {kept, hash};
  // Interned frame by frame: each frame's lookup is two reads far away in memory (its cache
  // slot, then the entry the slot names), asked for a few frames ahead of it.
  constexpr size_t kAhead = 4;
  for (uint64_t h : frame_hashes_) text_.PrefetchSlot(h);
  frame_ids_.clear();
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i + kAhead < frames.size()) text_.PrefetchEntry(frame_hashes_[i + kAhead]);
    frame_ids_.push_back(text_.Intern(frames[i], frame_hashes_[i]));
  }
  const StackId id = stacks_.Intern(StackBytes(frame_ids_), hash);
  memo_.Offer(hash, frames, id);
  return {id, hash};
}

void DeltaEncoder::Encode(const ParsedDocument& doc, EventTime t, std::vector<Delta>& out) {
  const Dimensions& d = doc.dims;
  auto push = [&](const KeyBuilder& b) -> Delta& {
    Delta& delta = out.emplace_back();
    delta.key = b.key();
    delta.hash = b.hash();
    delta.route_hash = b.hash();
    delta.time = t;
    return delta;
  };
  const Field channel = Text(d.channel), os = Text(d.os);
  if (doc.kind == DocKind::kMain || doc.kind == DocKind::kBhr) {
    const Field source = Text(doc.kind == DocKind::kMain ? "main" : "bhr");
    const Field build_date = Text(d.build_date);
    KeyBuilder usage(Table::kUsage);
    usage.Add(source.id, source.hash).Add(channel.id, channel.hash).Add(os.id, os.hash).Add(build_date.id, build_date.hash);
    {
      Delta& u = push(usage);
      u.values[0] = doc.usage_ms;
      u.values[1] = 1;
    }
    if (doc.kind == DocKind::kMain) {
      const Field product = Text(d.product), version = Text(d.version), build_id = Text(d.build_id);
      KeyBuilder build(Table::kBuildUsage);
      build.Add(channel.id, channel.hash).Add(product.id, product.hash).Add(version.id, version.hash)
          .Add(build_id.id, build_id.hash).Add(os.id, os.hash);
      Delta& b = push(build);
      b.values = {doc.usage_ms, 1, static_cast<int64_t>(doc.subprocess_crashes.gpu),
                  static_cast<int64_t>(doc.subprocess_crashes.plugin),
                  static_cast<int64_t>(doc.subprocess_crashes.gmplugin)};
      // Every install that sent usage: the series' sketch counts the build's active
      // installs, and its hours' sketches those that reported a sub-process crash (the
      // values say which, series_data.h).
      b.install_hash = InstallHash(doc.install_id);
    }
    const uint64_t install = InstallHash(doc.install_id);
    for (const HangRecord& h : doc.hangs) {
      const Field process = Text(h.process), thread = Text(h.thread), signature = Text(h.signature);
      const Field stack = Stack(doc.Stack(h));
      KeyBuilder hang(Table::kHangs);
      hang.Add(source.id, source.hash).Add(channel.id, channel.hash).Add(os.id, os.hash)
          .Add(build_date.id, build_date.hash).Add(process.id, process.hash).Add(thread.id, thread.hash)
          .Add(signature.id, signature.hash).Add(stack.id, stack.hash);
      Delta& x = push(hang);
      x.values[0] = h.hang_us;
      x.values[1] = static_cast<int64_t>(h.hang_count);
      x.install_hash = install;
    }
  }
  if (doc.crash) {
    const CrashRecord& c = *doc.crash;
    const Field product = Text(d.product), version = Text(d.version), build_id = Text(d.build_id);
    const Field process = Text(c.process), cls = Text(CrashClassName(c.crash_class)), signature = Text(c.signature);
    KeyBuilder crash(Table::kCrashes);
    crash.Add(channel.id, channel.hash).Add(product.id, product.hash).Add(version.id, version.hash)
        .Add(build_id.id, build_id.hash).Add(os.id, os.hash).Add(process.id, process.hash)
        .Add(cls.id, cls.hash).Add(signature.id, signature.hash);
    Delta& x = push(crash);
    x.values[0] = 1;
    x.values[1] = c.startup ? 1 : 0;
    x.install_hash = InstallHash(c.install_id);
    if (!doc.doc_id.empty()) {
      // Every copy of a document must meet the same shard's memory of ids, whatever
      // its signature or dimensions: such deltas are routed by the id, not the key.
      // A crash series may then live in several shards; snapshots and merges add them.
      x.doc_hash = Hash64(doc.doc_id, 0xd0c1d) | 1;
      x.route_hash = x.doc_hash;
    }
  }
}

}  // namespace seismo
