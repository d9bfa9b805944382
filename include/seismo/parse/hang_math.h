// The exact hang arithmetic of SPEC §3.2, as pure functions (unit-tested with
// hand-computed numbers in tests/unit/parse/hang_math_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/parse/document.h"
#include "seismo/parse/options.h"

namespace seismo {

struct HangTotals {
  int64_t hang_us = 0;      // hang milliseconds x 1000
  uint64_t hang_count = 0;
};

// One legacy TimeHistogram bucket: `upper_ms` is the key K (the inclusive upper
// bound of the bucket), `count` its value.
struct HistogramBucket {
  uint64_t upper_ms = 0;
  uint64_t count = 0;
};

// Sums the buckets with min_ms <= K < max_ms: count = sum(count), ms = sum(w(K) * count)
// where w is K (upper), (K+1)/2 (lower) or 0.75 K (mid). nullopt when the count or the
// weighted sum (in 1/1000 ms) would not fit an int64: the document is then rejected as
// hang_overflow (SPEC §7), never counted with a wrapped-around value.
std::optional<HangTotals> LegacyHangTotals(const std::vector<HistogramBucket>& buckets, const HangOptions& o);

// Weight of one bucket key in 1/1000 ms.
int64_t BucketWeightUs(uint64_t upper_ms, HangWeighting w);

// Renders a bhr native frame [moduleIndex, "hexOffset"] as "<debugName>+0x<offset>"
// (offset lower-case, no leading zeros), or "0x<offset>" when the index is outside
// `module_names` (or names a module whose entry was unusable, stored as ""), into `out`.
// nullopt when `offset_hex` is not hexadecimal.
std::optional<std::string_view> RenderNativeFrame(int64_t module_index, std::string_view offset_hex,
                                                  const std::vector<std::string_view>& module_names,
                                                  TextArena& out);

// Milliseconds, as the text of a non-negative JSON number ("295.063584", "1.5e2"), in
// 1/1000 ms, rounded half to even on the decimal digits themselves (exact: a binary
// double cannot tell 200.0005 from its neighbours). nullopt when the text is not such a
// number or the result would not fit. ADR 0017.
std::optional<int64_t> DecimalMsToUs(std::string_view number);

// The signature (top frame) of a hang stack, root first: which frame it is, nullopt for
// a stack without a non-empty element (whose signature is "(empty stack)"). `native[i]` says
// whether stack[i] was a native frame. Empty elements are always passed over; in
// kInnermostLabel mode "(markers)" and native frames are too, and if nothing is left the
// innermost non-empty element is used.
std::optional<size_t> HangSignatureFrame(std::span<const std::string_view> stack,
                                         const std::vector<bool>& native, HangSignatureMode mode);
// Its text: one of the frames, or kEmptyStackSignature.
std::string_view HangSignature(std::span<const std::string_view> stack, const std::vector<bool>& native,
                               HangSignatureMode mode);

inline constexpr std::string_view kEmptyStackSignature = "(empty stack)";

}  // namespace seismo
