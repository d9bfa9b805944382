#include "seismo/parse/hang_math.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace seismo {

int64_t BucketWeightUs(uint64_t upper_ms, HangWeighting w) {
  auto k = static_cast<int64_t>(upper_ms);
  switch (w) {
    case HangWeighting::kUpper: return k * 1000;
    case HangWeighting::kLower: return (k + 1) * 500;
    case HangWeighting::kMid: return k * 750;
  }
  return k * 1000;
}

std::optional<HangTotals> LegacyHangTotals(const std::vector<HistogramBucket>& buckets,
                                           const HangOptions& o) {
  HangTotals t;
  for (const HistogramBucket& b : buckets) {
    if (b.count == 0) continue;
    // A key above max_ms (any uint64) is out of range before it is converted.
    if (b.upper_ms >= static_cast<uint64_t>(o.max_ms) || static_cast<int64_t>(b.upper_ms) < o.min_ms)
      continue;
    // The weight of an in-range key is below max_ms x 1000 (≤ 10^12): it cannot overflow.
    int64_t weighted = 0;
    if (b.count > static_cast<uint64_t>(INT64_MAX) ||
        __builtin_mul_overflow(BucketWeightUs(b.upper_ms, o.weighting), static_cast<int64_t>(b.count),
                               &weighted) ||
        __builtin_add_overflow(t.hang_us, weighted, &t.hang_us) ||
        __builtin_add_overflow(t.hang_count, b.count, &t.hang_count) || t.hang_count > INT64_MAX) {
      return std::nullopt;
    }
  }
  return t;
}

namespace {
// A hex digit's lower-case form; 0 for any other byte.
constexpr std::array<char, 256> kHexLower = [] {
  std::array<char, 256> t{};
  for (char c = '0'; c <= '9'; ++c) t[static_cast<unsigned char>(c)] = c;
  for (char c = 'a'; c <= 'f'; ++c) t[static_cast<unsigned char>(c)] = c;
  for (char c = 'A'; c <= 'F'; ++c) t[static_cast<unsigned char>(c)] = static_cast<char>(c - 'A' + 'a');
  return t;
}();
}  // namespace

std::optional<std::string_view> RenderNativeFrame(int64_t module_index, std::string_view offset_hex,
                                                  const std::vector<std::string_view>& module_names,
                                                  TextArena& out) {
  std::string_view hex = offset_hex;
  if (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
  if (hex.empty()) return std::nullopt;
  size_t nz = 0;
  while (nz < hex.size() && hex[nz] == '0') ++nz;
  const std::string_view digits = nz == hex.size() ? std::string_view("0") : hex.substr(nz);
  std::string_view module;
  if (module_index >= 0 && static_cast<uint64_t>(module_index) < module_names.size()) {
    module = module_names[static_cast<size_t>(module_index)];
  }
  // Checked and lower-cased in one pass, as they are written: an offset that is not hex
  // leaves its few bytes unused in the document's arena (it is rejected whole).
  const size_t head = module.empty() ? 2 : module.size() + 3;  // "<module>+0x" or "0x"
  char* p = out.Allocate(head + digits.size());
  for (size_t k = 0; k < digits.size(); ++k) {
    const char lower = kHexLower[static_cast<unsigned char>(digits[k])];
    if (lower == 0) return std::nullopt;
    p[head + k] = lower;
  }
  if (!module.empty()) {
    std::memcpy(p, module.data(), module.size());
    p[module.size()] = '+';
  }
  p[head - 2] = '0';
  p[head - 1] = 'x';
  return std::string_view(p, head + digits.size());
}

std::optional<int64_t> DecimalMsToUs(std::string_view text) {
  // text = int [. frac] [e|E [+|-] exp]; value = digits x 10^(exponent - fraction digits).
  size_t i = 0;
  std::string digits;
  int64_t shift = 3;  // x 1000: milliseconds to thousandths
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') digits += text[i++];
  if (digits.empty()) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    const size_t start = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') digits += text[i++];
    if (i == start) return std::nullopt;
    shift -= static_cast<int64_t>(i - start);
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    const bool negative = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const size_t start = i;
    int64_t exponent = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      exponent = std::min<int64_t>(exponent * 10 + (text[i++] - '0'), 1'000'000);
    }
    if (i == start) return std::nullopt;
    shift += negative ? -exponent : exponent;
  }
  if (i != text.size()) return std::nullopt;
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 0;
  digits.erase(0, first);
  // Kept digits: all but the last -shift; the dropped ones decide the rounding.
  const int64_t dropped = std::max<int64_t>(0, -shift);
  const int64_t kept = static_cast<int64_t>(digits.size()) - dropped;
  if (kept + std::max<int64_t>(shift, 0) > 18) return std::nullopt;  // beyond int64
  int64_t out = 0;
  for (int64_t k = 0; k < kept; ++k) out = out * 10 + (digits[static_cast<size_t>(k)] - '0');
  for (int64_t k = 0; k < shift; ++k) out *= 10;
  if (dropped > 0) {
    // The dropped part against one half: compare its first digit with 5, then the rest with 0.
    const int first_dropped = kept >= 0 ? digits[static_cast<size_t>(kept)] - '0' : 0;
    const bool rest_zero =
        kept < 0 || digits.find_first_not_of('0', static_cast<size_t>(kept) + 1) == std::string::npos;
    if (first_dropped > 5 || (first_dropped == 5 && (!rest_zero || out % 2 == 1))) ++out;
  }
  return out;
}

std::optional<size_t> HangSignatureFrame(std::span<const std::string_view> stack,
                                         const std::vector<bool>& native, HangSignatureMode mode) {
  if (stack.empty()) return std::nullopt;
  if (mode == HangSignatureMode::kInnermostLabel) {
    for (size_t i = stack.size(); i-- > 0;) {
      const std::string_view f = stack[i];
      bool is_native = i < native.size() && native[i];
      bool is_marker = f.size() >= 2 && f.front() == '(' && f.back() == ')';
      if (!is_native && !is_marker && !f.empty()) return i;
    }
  }
  // An empty element names nothing: the innermost one that is not empty, in either mode.
  for (size_t i = stack.size(); i-- > 0;) {
    if (!stack[i].empty()) return i;
  }
  return std::nullopt;
}

std::string_view HangSignature(std::span<const std::string_view> stack, const std::vector<bool>& native,
                               HangSignatureMode mode) {
  const std::optional<size_t> i = HangSignatureFrame(stack, native, mode);
  return i ? stack[*i] : kEmptyStackSignature;
}

}  // namespace seismo
