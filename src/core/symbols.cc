#include "seismo/core/symbols.h"

#include "seismo/core/hash.h"

namespace seismo {

Symbols::Symbols() {
  unknown_ = text_.InternPermanent("unknown");
  other_ = text_.InternPermanent("(other)");
  empty_ = text_.InternPermanent("");
  const Sym other_frame[] = {other_};
  const uint64_t other_hash[] = {text_.Hash(other_)};
  other_stack_ = stacks_.InternPermanent(StackBytes(other_frame), StackContentHash(other_hash));
  empty_stack_ = stacks_.InternPermanent(StackBytes({}), StackContentHash({}));
}

void Symbols::Sweep(std::vector<uint64_t>& text, const std::vector<uint64_t>& stacks) {
  for (size_t w = 0; w < stacks.size(); ++w) {
    for (uint64_t bits = stacks[w]; bits != 0; bits &= bits - 1) {
      const auto id = static_cast<StackId>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
      for (Sym f : Frames(id)) {
        if (f / 64 >= text.size()) text.resize(f / 64 + 1, 0);
        text[f / 64] |= uint64_t{1} << (f % 64);
      }
    }
  }
  stacks_.Sweep(stacks);
  text_.Sweep(text);
}

std::span<const Sym> Symbols::Frames(StackId id) const {
  std::string_view b = stacks_.Bytes(id);
  return {reinterpret_cast<const Sym*>(b.data()), b.size() / sizeof(Sym)};
}

std::string Symbols::StackText(StackId id, std::string_view sep) const {
  std::string out;
  bool first = true;
  for (Sym f : Frames(id)) {
    if (!first) out += sep;
    first = false;
    out += Text(f);
  }
  return out;
}

StackId Symbols::InternStack(std::span<const Sym> frames) {
  std::vector<uint64_t> hashes;
  hashes.reserve(frames.size());
  for (Sym f : frames) hashes.push_back(text_.Hash(f));
  return stacks_.Intern(StackBytes(frames), StackContentHash(hashes));
}

StackId Symbols::InternStack(const std::vector<std::string>& frames) {
  std::vector<Sym> ids;
  ids.reserve(frames.size());
  for (const std::string& f : frames) ids.push_back(text_.Intern(f));
  return InternStack(ids);
}

uint64_t StackContentHash(std::span<const uint64_t> frame_hashes) {
  return Hash64(std::string_view(reinterpret_cast<const char*>(frame_hashes.data()),
                                 frame_hashes.size() * sizeof(uint64_t)),
                0x57ac4);
}

}  // namespace seismo
