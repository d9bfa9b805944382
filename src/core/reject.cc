#include "seismo/core/reject.h"

namespace seismo {

std::optional<RejectReason> RejectReasonFromName(std::string_view name) {
  for (size_t i = 0; i < kRejectReasonCount; ++i) {
    auto r = static_cast<RejectReason>(i);
    if (RejectReasonName(r) == name) return r;
  }
  return std::nullopt;
}

}  // namespace seismo
