// libFuzzer target: any bytes through the document parser (main, bhr and
// crash documents, with and without a topic kind), then into deltas. The
// body is shared with the corpus regression test (fuzz_targets.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string problem = seismo::fuzz::ParseTarget({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "fuzz_parse: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
