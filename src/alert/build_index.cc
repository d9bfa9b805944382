#include "build_index.h"

namespace seismo::alert_detail {

bool IsNew(const Snapshot& snap, const AlertOptions& options, int64_t first_ms) {
  // Before any document was accepted there is no stream time, and nothing is new.
  if (first_ms == INT64_MAX || snap.stream_time_ms == INT64_MIN) return false;
  return snap.stream_time_ms - first_ms < options.new_build_days * 24 * kHourMs;
}

}  // namespace seismo::alert_detail
