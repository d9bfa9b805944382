#include "seismo/core/json_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace seismo {

namespace {

// True when one of the 8 bytes of `v` must be escaped or checked: below 0x20, 0x80 or above,
// '"' or '\\' (bit tricks on the word: a byte of x is zero where x - 0x01.. borrows into it).
bool WordNeedsCare(uint64_t v) {
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  const uint64_t below_space = (v - 0x20 * kOnes) & ~v & kHighs;
  return ((v & kHighs) | below_space | has_zero(v ^ ('"' * kOnes)) | has_zero(v ^ ('\\' * kOnes))) != 0;
}

}  // namespace

void AppendJsonEscaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t i = 0;
  while (i < s.size()) {
    // A run of bytes written as they are (the common case: all of a frame) is appended whole,
    // found eight bytes at a time.
    size_t run = i;
    for (uint64_t v; run + 8 <= s.size(); run += 8) {
      std::memcpy(&v, s.data() + run, 8);
      if (WordNeedsCare(v)) break;
    }
    while (run < s.size()) {
      const auto b = static_cast<unsigned char>(s[run]);
      if (b < 0x20 || b >= 0x80 || b == '"' || b == '\\') break;
      ++run;
    }
    if (run > i) {
      out.append(s.data() + i, run - i);
      i = run;
      continue;
    }
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20) {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // Validate one UTF-8 sequence; replace invalid bytes with U+FFFD.
    size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    bool valid = len != 0 && c < 0xf5 && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k) {
      valid = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    }
    if (valid && len == 3) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      valid = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
    } else if (valid && len == 4) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      valid = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (valid) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
}

std::string FormatDouble(double v) { return fmt::format("{}", v); }

JsonWriter JsonWriter::ContinuingAfter(const JsonWriter& w) {
  JsonWriter next(w.indent_);
  next.first_.assign(w.first_.size(), false);
  return next;
}

void JsonWriter::Newline() {
  if (indent_ <= 0) return;
  out_ += '\n';
  out_.append(first_.size() * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    Newline();
  }
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) Newline();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  Separate();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) Newline();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  Separate();
  out_ += '"';
  AppendJsonEscaped(out_, key);
  out_ += indent_ > 0 ? "\": " : "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  Separate();
  out_ += '"';
  AppendJsonEscaped(out_, s);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  Separate();
  const fmt::format_int text(v);
  out_.append(text.data(), text.size());
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  Separate();
  const fmt::format_int text(v);
  out_.append(text.data(), text.size());
  return *this;
}

JsonWriter& JsonWriter::Double(double v) {
  if (!std::isfinite(v)) return Null();
  Separate();
  char buf[32];  // the shortest round-trip form of a double takes at most 24 characters
  const auto end = fmt::format_to_n(buf, sizeof buf, "{}", v).out;
  out_.append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::OptDouble(std::optional<double> v) {
  return v ? Double(*v) : Null();
}

JsonWriter& JsonWriter::Bool(bool v) {
  Separate();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  Separate();
  out_ += json;
  return *this;
}

}  // namespace seismo
