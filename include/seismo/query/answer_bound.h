// Bounds of one API answer (SPEC §7 "query answers and concurrent requests are inside the
// limit", issue 19, ADR 0025): at most `max_bytes` of body and, for a flame graph, at most
// `max_nodes` nodes. Past a bound an answer says so instead of growing: a flame graph folds
// its smallest subtrees into "(other)" nodes (totals stay exact) and marks its root
// `"truncated": true`; a list stops adding rows and says `"truncated": true` with the
// number of rows left out; a stack stops adding frames and says `"frames_omitted"`.
//
//   AnswerLimits limits{.max_nodes = 10'000, .max_bytes = 2 << 20};
//   ByteBound bound(w, limits.max_bytes);
//   if (!bound.Fits(JsonTextBound(frame))) { ... stop, note it ... }
//
// Threading: plain values and pure functions.
#pragma once

#include <cstddef>
#include <string_view>

#include "seismo/core/json_writer.h"

namespace seismo {

struct AnswerLimits {
  size_t max_nodes = 10'000;    // [http] max_answer_nodes
  size_t max_bytes = 2u << 20;  // [http] max_answer_bytes
};

// The most bytes JsonWriter::String can write for `s`: the quotes, ASCII that needs no
// escape as itself, anything else as a six-byte escape at most.
size_t JsonTextBound(std::string_view s);

// What an answer still holds when one more piece of `more` bytes is written into `w`:
// the piece, and room to close the answer and write its note (kTail bytes).
class ByteBound {
 public:
  static constexpr size_t kTail = 256;

  ByteBound(const JsonWriter& w, size_t max_bytes) : w_(w), max_bytes_(max_bytes) {}
  bool Fits(size_t more) const { return w_.str().size() + more + kTail <= max_bytes_; }

 private:
  const JsonWriter& w_;
  size_t max_bytes_;
};

}  // namespace seismo
