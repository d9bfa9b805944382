// Hash maps keyed by a few text ids (a row's grouping fields), as the answers and rules build them
// once per selected series. std::array's == compares through memcmp, a call per probe that
// was 7 % of a warm-up round at 10^6 series; SymsEq compares the ids one by one, inline.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>

#include <array>
#include <cstddef>

#include "seismo/core/symbols.h"

namespace seismo {

template <size_t N>
using Syms = std::array<Sym, N>;

template <size_t N>
struct SymsEq {
  bool operator()(const Syms<N>& a, const Syms<N>& b) const {
    for (size_t i = 0; i < N; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
};

template <size_t N, typename V>
using SymsMap = absl::flat_hash_map<Syms<N>, V, absl::Hash<Syms<N>>, SymsEq<N>>;

}  // namespace seismo
