// libFuzzer target: arbitrary bytes -> crash-data JSON (any of the three
// shapes) -> SignatureGenerator::Generate. Checks that nothing crashes, hangs
// or leaks, and the output invariants of the clean-up rules: a signature is at
// most 255 characters of printable ASCII without leading/trailing or double
// spaces.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "seismo/parse/crash_parser.h"
#include "seismo/signature/generator.h"

namespace {

const seismo::SignatureGenerator& Generator() {
  static std::unique_ptr<seismo::SignatureGenerator> gen =
      std::move(seismo::SignatureGenerator::LoadDefault()).value();
  return *gen;
}

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  seismo::ParseResult<seismo::CrashData> crash = seismo::CrashDataFromAnyJson(json);
  if (!crash.ok()) return 0;
  seismo::SignatureResult r = Generator().Generate(crash.value());
  const std::string& s = r.signature;
  Check(s.size() <= 255);
  for (size_t i = 0; i < s.size(); ++i) {
    Check(s[i] >= 0x20 && s[i] <= 0x7E);
    Check(!(s[i] == ' ' && (i == 0 || i + 1 == s.size() || s[i + 1] == ' ')));
  }
  // The document-level parser must agree on what it can parse.
  (void)seismo::ParseCrashDocument(json, seismo::CrashFormat::kProcessed, Generator());
  (void)seismo::ParseCrashDocument(json, seismo::CrashFormat::kTelemetryPing, Generator());
  return 0;
}
