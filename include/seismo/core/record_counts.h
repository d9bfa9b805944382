// RecordCounts: how many documents a pipeline has seen, accepted (by kind) and
// rejected (by reason) — a plain copy of its live counters, for outputs,
// checkpoints and status answers.
#pragma once

#include <array>
#include <cstdint>

#include "seismo/core/bytes.h"
#include "seismo/core/reject.h"

namespace seismo {

struct RecordCounts {
  std::array<uint64_t, 3> by_kind{};  // main, bhr, crash (DocKind order)
  std::array<uint64_t, kRejectReasonCount> rejected{};
  uint64_t documents = 0;
  uint64_t bytes = 0;
};

// Its encoding in checkpoints and aggregates records: by kind (3), the number of reject
// reasons and a count per reason, documents, bytes (varints). A decoder keeps the reasons
// it knows (a reader of an older build ignores a newer writer's extra reasons).
void EncodeRecordCounts(const RecordCounts& c, ByteWriter& w);
void DecodeRecordCounts(ByteReader& r, RecordCounts& c);

}  // namespace seismo
