// libFuzzer target: any bytes through the document parser (main, bhr and
// crash documents, with and without a topic kind), then into deltas. The
// parser must never crash, and what it accepts must satisfy its contract.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "seismo/aggregate/delta.h"
#include "seismo/parse/parser.h"
#include "seismo/signature/generator.h"

namespace {

const seismo::SignatureGenerator& Signatures() {
  static auto gen = seismo::SignatureGenerator::LoadDefault();
  if (!gen) std::abort();
  return **gen;
}

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckAccepted(const seismo::ParsedDocument& d) {
  Check(d.usage_ms >= 0 && d.usage_ms <= seismo::kMaxBhrUsageMs);
  Check(d.dims.build_date == "unknown" || d.dims.build_date.size() == 8);
  for (const seismo::HangRecord& h : d.hangs) {
    Check(h.hang_count > 0 && h.hang_us >= 0);
    Check(!h.signature.empty());
    Check(h.stack.empty() ? h.signature == "(empty stack)" : true);
  }
  if (d.crash) Check(d.crash->signature.size() <= 255);
  size_t deltas = 0;
  seismo::DocumentToDeltas(d, seismo::EventTime{0}, [&](seismo::Delta&& delta) {
    Check(!delta.key.empty());
    ++deltas;
  });
  Check(deltas >= 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static seismo::Parser parser({}, &Signatures());
  std::string_view doc(reinterpret_cast<const char*>(data), size);
  for (std::optional<seismo::DocKind> kind :
       {std::optional<seismo::DocKind>(), std::optional<seismo::DocKind>(seismo::DocKind::kMain),
        std::optional<seismo::DocKind>(seismo::DocKind::kBhr), std::optional<seismo::DocKind>(seismo::DocKind::kCrash)}) {
    auto result = parser.Parse(doc, seismo::DocHints{kind});
    if (result.ok()) CheckAccepted(result.value());
  }
  return 0;
}
