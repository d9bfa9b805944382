// Documents that make N live hang series: bhr pings whose hangs each have a stack (and so
// a signature) no other hang has, all at one build and one time. `seismo_bench api` loads
// them before its load runs; `seismo_micro`'s BM_WarmDefaultAnswers aggregates them.
//
// Threading: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace seismo::bench {

constexpr size_t kHangsPerSeriesDoc = 500;

// One bhr ping (document id `id`) created at `when`, one hang of 200 ms per leaf, each hang's
// stack a shared caller and its leaf.
std::string BhrPing(size_t id, std::string_view when, const std::vector<std::string_view>& leaves);

// bhr pings of `series` hangs in all (kHangsPerSeriesDoc each), created at `when` (RFC 3339).
std::vector<std::string> SeriesDocs(size_t series, std::string_view when);

}  // namespace seismo::bench
