// ByteWriter / ByteReader: a compact, versionable binary encoding for
// checkpoints. Integers are LEB128 varints (signed ones zig-zag encoded),
// strings are length-prefixed. The reader checks every bound: corrupt input
// makes it fail (ok() == false), never read out of range.
//
// PutFixed / GetFixed: little-endian fixed-width integers, for the file and record
// headers around such payloads (checkpoint.cc, cluster/record.cc).
//
// Threading: plain values, one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace seismo {

// Appends the low `bytes` bytes of `v`, least significant first.
inline void PutFixed(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
// The `bytes`-byte little-endian integer at `pos`; the caller checked that it is in `in`.
inline uint64_t GetFixed(std::string_view in, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in[pos + i])) << (8 * i);
  return v;
}

class ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U64(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void I64(int64_t v) { U64((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s);
  }
  void Fixed32(uint32_t v) { PutFixed(out_, v, 4); }
  void Fixed64(uint64_t v) { PutFixed(out_, v, 8); }

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  uint8_t U8() {
    if (pos_ >= in_.size()) return Fail();
    return static_cast<uint8_t>(in_[pos_++]);
  }
  uint64_t U64() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) return Fail();
      auto b = static_cast<uint8_t>(in_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return Fail();
  }
  int64_t I64() {
    uint64_t u = U64();
    return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  }
  std::string_view Str() {
    uint64_t n = U64();
    if (!ok_ || n > in_.size() - pos_) {
      Fail();
      return {};
    }
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  uint64_t Fixed64() {
    if (in_.size() - pos_ < 8) return Fail();
    const uint64_t v = GetFixed(in_, pos_, 8);
    pos_ += 8;
    return v;
  }
  // A count of items that each take at least `min_bytes`: fails when the
  // remaining input cannot hold that many (guards allocations on corrupt data).
  uint64_t Count(size_t min_bytes = 1) {
    uint64_t n = U64();
    if (ok_ && n > (in_.size() - pos_) / (min_bytes == 0 ? 1 : min_bytes)) return Fail();
    return n;
  }

  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  uint64_t Fail() {
    ok_ = false;
    pos_ = in_.size();
    return 0;
  }

  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace seismo
