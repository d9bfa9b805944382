// UTF-8 validation (simdjson's, vectorized) for stages that handle document bytes
// without parsing them (the dead-letter sink decides between text and base64).
#pragma once

#include <string_view>

namespace seismo {

// True when `bytes` is well-formed UTF-8.
bool IsValidUtf8(std::string_view bytes);

}  // namespace seismo
