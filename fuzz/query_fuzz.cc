// libFuzzer target: any bytes as requests to the HTTP API's answers over a small generated
// world. The body is shared with the corpus regression test (fuzz_targets.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string problem = seismo::fuzz::QueryTarget({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "fuzz_query: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
