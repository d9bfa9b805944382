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

// Rows [0, count) into the array open in `w`, each written by write_row(i, JsonWriter&) into
// a writer of its own and appended while it fits the bound: the first that does not ends the
// list (a list of rows whose size is not known before they are written: /builds, Top
// Crashers, a signature's lists). Returns the rows appended; WriteOmitted then says what was
// left out.
template <typename WriteRow>
size_t AppendRowsWithin(JsonWriter& w, size_t max_bytes, size_t count, WriteRow&& write_row) {
  const ByteBound bound(w, max_bytes);
  for (size_t i = 0; i < count; ++i) {
    JsonWriter row;
    write_row(i, row);
    if (!bound.Fits(row.str().size() + 1)) return i;  // and its comma
    w.Raw(row.str());
  }
  return count;
}

// After a list of which `written` of `count` rows were written: nothing when all were, else
// `"truncated": true` (once per answer: `truncated` says whether it was written already) and
// `"<name>": count - written`.
inline void WriteOmitted(JsonWriter& w, std::string_view name, size_t written, size_t count,
                         bool& truncated) {
  if (written == count) return;
  if (!truncated) w.Key("truncated").Bool(true);
  truncated = true;
  w.Key(name).Uint(count - written);
}

}  // namespace seismo
