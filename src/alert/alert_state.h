// The alert engine's life-cycle state as bytes, for checkpoints (core/bytes.h encoding).
//
//   "SALR" | version | count | count × alert | outbox | Fixed64 Hash64(everything before)
//
//   version 4 (written): version 3's fields, then the outbox (transitions decided but not
//     yet delivered to every sink, ADR 0024 "Alerts"): U64 count, per event an alert as
//     below and U8 the state it left.
//   version 3 (read only; an empty outbox): varints (ByteWriter): U64 version and count; per alert U8 rule,
//     5 Str (channel, os, build, signature, scope), U8 state, I64 first/last/since,
//     I64 true/false streaks, numbers: I64 count_new, count_base, F64 exposure_new,
//     exposure_base, U8 exposure mode, optionals as U8 flag + value (F64 ratio, p_value,
//     p_adjusted, I64 installs), U64 + Str baseline builds, Str version, F64 age_hours,
//     I64 hang_ms_new, hang_ms_base, F64 dispersion. F64 = the IEEE bits as Fixed64.
//   version 2 (read only): the same fields fixed-width little-endian (u32 version,
//     u64 count, u32 string and list lengths, i32 streaks, 8-byte numbers).
//
// Threading: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/alert/engine.h"
#include "seismo/core/status.h"

namespace seismo::alert_detail {

std::string EncodeAlertState(const std::map<AlertKey, Alert>& alerts, const std::vector<AlertEvent>& outbox);
// kCorrupt when the bytes are not a valid state of a known version (`alerts` and `outbox`
// are then unchanged).
[[nodiscard]] Status DecodeAlertState(std::string_view bytes, std::map<AlertKey, Alert>& alerts,
                                      std::vector<AlertEvent>& outbox);

}  // namespace seismo::alert_detail
