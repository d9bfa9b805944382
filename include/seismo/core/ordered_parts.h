// MakeInOrder: texts made on several threads, handed on in order on the caller's — the
// replay output's rows written by --threads threads and still the same bytes (ADR 0020).
//
//   part 0, 1, 2, …  ──make(i, text), any thread──>  slots (at most `window` ahead)
//                    ──take(text), the caller, in order──>  the sink
//
// Threading: `make` runs on up to `threads` threads at once (the caller among them), each
// call with its own part and text; `take` runs only on the caller, in part order, once the
// part and every one before it are made. Memory: at most `window` made parts wait.
// Errors: an exception from `make` or `take` stops the parts not yet begun, and is rethrown
// on the caller once every thread has finished.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace seismo {

void MakeInOrder(size_t parts, int threads, size_t window,
                 const std::function<void(size_t, std::string&)>& make,
                 const std::function<void(std::string&)>& take);

}  // namespace seismo
