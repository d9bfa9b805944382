// libFuzzer target: arbitrary bytes -> crash-data JSON (any of the three
// shapes) -> SignatureGenerator::Generate, then the document-level crash
// parser. Checks that nothing crashes, hangs or leaks, and the output
// invariants of the clean-up rules. The body is shared with the corpus
// regression test (fuzz_targets.h).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string problem = seismo::fuzz::SignatureTarget({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "fuzz_signature: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
