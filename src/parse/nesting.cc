#include "seismo/parse/nesting.h"

#include <cstdint>
#if defined(__AVX2__) || defined(__PCLMUL__)
#include <immintrin.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace seismo {

namespace {

// Depth-scan state carried from one byte (or 64-byte block) to the next.
struct NestState {
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;  // the previous byte was a backslash inside a string
};

// Byte at a time: a backslash inside a string escapes the next byte; outside
// strings only brackets and quotes matter. True once depth passes max_depth.
bool ScanBytes(const char* p, const char* end, size_t max_depth, NestState& st) {
  for (; p < end; ++p) {
    const char c = *p;
    if (st.in_string) {
      if (st.escaped) {
        st.escaped = false;
      } else if (c == '\\') {
        st.escaped = true;
      } else if (c == '"') {
        st.in_string = false;
      }
    } else if (c == '"') {
      st.in_string = true;
    } else if (c == '{' || c == '[') {
      if (++st.depth > max_depth) return true;
    } else if ((c == '}' || c == ']') && st.depth > 0) {
      --st.depth;
    }
  }
  return false;
}

#if defined(__SSE2__)  // AVX2 implies it
#define SEISMO_SIMD_DEPTH 1
// 64 bytes in vector registers: two of 32 bytes (the parse stage is built for
// x86-64-v3, ADR 0001), else four of 16.
#if defined(__AVX2__)
struct Block64 {
  __m256i v[2];
};
Block64 Load64(const char* p) {
  return {{_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32))}};
}
uint64_t Bits(__m256i lo, __m256i hi) {
  return static_cast<uint32_t>(_mm256_movemask_epi8(lo)) |
         (static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(hi))) << 32);
}
// Bit i set where byte i == c.
uint64_t Mask64(const Block64& b, char c) {
  const __m256i k = _mm256_set1_epi8(c);
  return Bits(_mm256_cmpeq_epi8(b.v[0], k), _mm256_cmpeq_epi8(b.v[1], k));
}
// Bit i set where (byte i | 0x20) == c: '[' and '{' (0x5b, 0x7b) in one compare, and
// ']' and '}' (0x5d, 0x7d); no other byte ORs to either.
uint64_t MaskCaseless64(const Block64& b, char c) {
  const __m256i k = _mm256_set1_epi8(c);
  const __m256i bit = _mm256_set1_epi8(0x20);
  return Bits(_mm256_cmpeq_epi8(_mm256_or_si256(b.v[0], bit), k),
              _mm256_cmpeq_epi8(_mm256_or_si256(b.v[1], bit), k));
}
#else
struct Block64 {
  __m128i v[4];
};
Block64 Load64(const char* p) {
  Block64 b;
  for (int i = 0; i < 4; ++i) b.v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
  return b;
}
uint64_t Mask64(const Block64& b, char c) {
  const __m128i k = _mm_set1_epi8(c);
  uint64_t m = 0;
  for (int i = 0; i < 4; ++i) {
    m |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(b.v[i], k))))
         << (16 * i);
  }
  return m;
}
uint64_t MaskCaseless64(const Block64& b, char c) {
  const __m128i k = _mm_set1_epi8(c);
  const __m128i bit = _mm_set1_epi8(0x20);
  uint64_t m = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i eq = _mm_cmpeq_epi8(_mm_or_si128(b.v[i], bit), k);
    m |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << (16 * i);
  }
  return m;
}
#endif

// Bit i = XOR of bits 0..i: set inside a string (opening quote included). A carry-less
// multiply by all ones where the parse stage has one (-mpclmul), else six shifts.
uint64_t PrefixXor(uint64_t x) {
#if defined(__PCLMUL__) && defined(__x86_64__)
  const __m128i product =
      _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(x)), _mm_set1_epi8(-1), 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
#else
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
#endif
}
#endif

}  // namespace

// 64 bytes at a time: quote, backslash and bracket masks; a block without a
// backslash (the common case) finds its strings by a prefix XOR of the quotes
// and walks only the brackets outside them. A block with a backslash (or after
// an escape) goes byte by byte, so escapes are handled by ScanBytes alone.
// A block that cannot change the answer (see the gate below) is not walked at all.
// Equivalent to ScanBytes over the whole document (bench/ has the numbers:
// docs/benchmarks.md).
bool NestsDeeperThan(std::string_view json, size_t max_depth) {
  if (json.size() <= max_depth) return false;  // fewer brackets than it takes
  NestState st;
  const char* p = json.data();
  const char* end = p + json.size();
#if defined(SEISMO_SIMD_DEPTH)
  for (; end - p >= 64; p += 64) {
    const Block64 v = Load64(p);
    const uint64_t backslash = Mask64(v, '\\');
    if (backslash != 0 || st.escaped) {
      if (ScanBytes(p, p + 64, max_depth, st)) return true;
      continue;
    }
    const uint64_t quotes = Mask64(v, '"');
    const uint64_t inside = PrefixXor(quotes) ^ (st.in_string ? ~uint64_t{0} : 0);
    // Last byte inside a string (or opening one) means the string goes on.
    st.in_string = (inside >> 63) != 0;
    const uint64_t opens = MaskCaseless64(v, '{') & ~inside;
    const uint64_t closes = MaskCaseless64(v, '}') & ~inside;
    // The gate: a block whose opens cannot pass max_depth even before any close, and
    // whose closes cannot reach below zero (where a close is ignored), moves the depth by
    // the counts alone; only the others are walked bracket by bracket.
    const auto n_opens = static_cast<size_t>(__builtin_popcountll(opens));
    const auto n_closes = static_cast<size_t>(__builtin_popcountll(closes));
    if (st.depth + n_opens <= max_depth && st.depth >= n_closes) {
      st.depth = st.depth + n_opens - n_closes;
      continue;
    }
    for (uint64_t m = opens | closes; m != 0; m &= m - 1) {
      const uint64_t bit = m & (~m + 1);
      if (opens & bit) {
        if (++st.depth > max_depth) return true;
      } else if (st.depth > 0) {
        --st.depth;
      }
    }
  }
#endif
  return ScanBytes(p, end, max_depth, st);
}

std::string_view DepthScanKernel() {
#if !defined(SEISMO_SIMD_DEPTH)
  return "bytes";
#elif defined(__AVX2__) && defined(__PCLMUL__) && defined(__x86_64__)
  return "avx2+pclmul";
#elif defined(__AVX2__)
  return "avx2+shifts";
#elif defined(__PCLMUL__) && defined(__x86_64__)
  return "sse2+pclmul";
#else
  return "sse2+shifts";
#endif
}

}  // namespace seismo
