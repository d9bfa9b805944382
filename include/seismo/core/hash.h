// Hashing for routing and sketches: xxHash3 64-bit, stable across runs and
// machines (checkpoints and routing depend on it).
#pragma once

#include <cstdint>
#include <string_view>

namespace seismo {

uint64_t Hash64(std::string_view bytes, uint64_t seed = 0);

// Order-dependent combination of two hashes.
constexpr uint64_t HashCombine(uint64_t a, uint64_t b) {
  return a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
}

}  // namespace seismo
