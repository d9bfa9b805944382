// Symbols: the process's two intern tables and their fixed vocabulary (ADR 0021).
//
//   text    every string a series key holds: dimension values, process and thread
//           names, frames, signatures, crash classes, sources
//   stacks  a stack is the bytes of its frames' text ids, root first, 4 bytes each
//
// A Sym is a text id, a StackId a stack id. Equal strings have equal ids, so keys of
// ids compare (==) like keys of strings; order and output go through the text.
//
// Ownership: one Symbols per process (or per test), outliving every key, snapshot
// and cache that holds its ids. Threading: as InternTable.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/core/intern.h"

namespace seismo {

using Sym = InternId;
using StackId = InternId;

class Symbols {
 public:
  Symbols();

  InternTable& text() { return text_; }
  InternTable& stacks() { return stacks_; }
  const InternTable& text() const { return text_; }
  const InternTable& stacks() const { return stacks_; }

  std::string_view Text(Sym s) const { return text_.Bytes(s); }
  // The frames of a stack (a view into the table; valid as long as the id is).
  std::span<const Sym> Frames(StackId id) const;
  // Frames joined with `sep` (output and API; tests).
  std::string StackText(StackId id, std::string_view sep) const;
  // Content hash of a stack: a function of its frames' texts only.
  uint64_t StackHash(StackId id) const { return stacks_.Hash(id); }

  // Room ahead for about `texts` texts and `stacks` stacks (InternTable::Reserve).
  void Reserve(size_t texts, size_t stacks) {
    text_.Reserve(texts);
    stacks_.Reserve(stacks);
  }

  // Interning without a cache (start-up, restore, tests). Frames of a stack must be live.
  Sym Intern(std::string_view text) { return text_.Intern(text); }
  StackId InternStack(std::span<const Sym> frames);
  StackId InternStack(const std::vector<std::string>& frames);

  // Quiescent point only (InternTable's reclamation): sweeps both tables, keeping the ids
  // marked in `text` and `stacks` and every frame of a marked stack (a live stack holds
  // its frames).
  void Sweep(std::vector<uint64_t>& text, const std::vector<uint64_t>& stacks);

  // Fixed vocabulary: permanent ids, never swept.
  Sym unknown() const { return unknown_; }        // "unknown"
  Sym other() const { return other_; }            // "(other)"
  Sym empty() const { return empty_; }            // ""
  StackId other_stack() const { return other_stack_; }  // the stack ["(other)"]
  StackId empty_stack() const { return empty_stack_; }  // []

 private:
  InternTable text_;
  InternTable stacks_;
  Sym unknown_, other_, empty_;
  StackId other_stack_, empty_stack_;
};

// The content hash of a stack from its frames' content hashes (what StackHash
// returns for it): the stacks table is keyed by frame ids, but routing and order
// need a hash of the texts.
uint64_t StackContentHash(std::span<const uint64_t> frame_hashes);

// The stack table's bytes for a frame list.
inline std::string_view StackBytes(std::span<const Sym> frames) {
  return {reinterpret_cast<const char*>(frames.data()), frames.size() * sizeof(Sym)};
}

}  // namespace seismo
