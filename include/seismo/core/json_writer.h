// A small streaming JSON writer producing compact, deterministic text.
// Numbers: integers exactly; doubles in the shortest form that round-trips
// (so equal inputs give byte-identical output); non-finite doubles as null.
// Strings are escaped per RFC 8259; invalid UTF-8 is replaced with U+FFFD.
//
// Usage: JsonWriter w; w.BeginObject(); w.Key("a"); w.Int(1); w.EndObject();
// The writer inserts commas; the caller keeps begin/end balanced.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seismo {

class JsonWriter {
 public:
  // indent > 0 pretty-prints with that many spaces per level.
  explicit JsonWriter(int indent = 0) : indent_(indent) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Double(double v);
  JsonWriter& OptDouble(std::optional<double> v);  // null when empty or non-finite
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  JsonWriter& Raw(std::string_view json);  // already-valid JSON text

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }
  // The text written so far, and dropping it while keeping the nesting state and the
  // buffer (streaming: hand each part to a sink, then go on writing).
  std::string_view text() const { return out_; }
  void Clear() { out_.clear(); }
  // Hands the text written so far, whole, to `hand` (a std::string -> std::string) and goes
  // on in the buffer it gives back, emptied, with the nesting state kept (streaming without
  // a copy: the taker gives back a buffer with room, one it has done with).
  template <class Hand>
  void HandText(Hand&& hand) {
    std::string next = hand(std::move(out_));
    next.clear();
    out_ = std::move(next);
  }

  // A writer that goes on inside `w`'s open containers as if each already held an element:
  // what it writes is what `w` would write next there after at least one element (a part of
  // a long array made elsewhere, handed on in order after `w`'s text; SPEC's byte-identical
  // replay output made by several threads).
  static JsonWriter ContinuingAfter(const JsonWriter& w);
  // Appends `text`, made by a ContinuingAfter(*this) writer, as it is (the innermost open
  // container must already hold an element).
  void AppendContinued(std::string_view text) { out_ += text; }

 private:
  void Separate();
  void Newline();

  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
  int indent_ = 0;
};

// Appends `s` JSON-escaped (without quotes) to `out`.
void AppendJsonEscaped(std::string& out, std::string_view s);

// Shortest round-trip text of a finite double ("0.5", "1021", "208.33333333333334").
std::string FormatDouble(double v);

}  // namespace seismo
