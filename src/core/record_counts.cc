#include "seismo/core/record_counts.h"

namespace seismo {

void EncodeRecordCounts(const RecordCounts& c, ByteWriter& w) {
  for (uint64_t v : c.by_kind) w.U64(v);
  w.U64(kRejectReasonCount);
  for (uint64_t v : c.rejected) w.U64(v);
  w.U64(c.documents);
  w.U64(c.bytes);
}

void DecodeRecordCounts(ByteReader& r, RecordCounts& c) {
  for (uint64_t& v : c.by_kind) v = r.U64();
  const uint64_t reasons = r.U64();
  for (uint64_t i = 0; i < reasons && r.ok(); ++i) {
    const uint64_t v = r.U64();
    if (i < kRejectReasonCount) c.rejected[i] = v;
  }
  c.documents = r.U64();
  c.bytes = r.U64();
}

}  // namespace seismo
