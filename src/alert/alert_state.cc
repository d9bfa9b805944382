#include "alert_state.h"

#include <bit>
#include <cstring>

#include "seismo/core/bytes.h"
#include "seismo/core/hash.h"

namespace seismo::alert_detail {
namespace {

constexpr char kMagic[4] = {'S', 'A', 'L', 'R'};
constexpr uint64_t kVersion = 4;          // 4: the outbox after the alerts
constexpr uint64_t kNoOutboxVersion = 3;  // 3: core/bytes.h varints
constexpr uint64_t kFixedVersion = 2;  // 2: fixed-width fields, numbers end with the dispersion
constexpr size_t kChecksumBytes = 8;

void EncodeAlert(const Alert& alert, ByteWriter& out) {
  const AlertKey& key = alert.key;
  out.U8(static_cast<uint8_t>(key.rule));
  for (const std::string* text : {&key.channel, &key.os, &key.build, &key.signature, &key.scope})
    out.Str(*text);
  out.U8(static_cast<uint8_t>(alert.state));
  out.I64(alert.first_seen_ms);
  out.I64(alert.last_seen_ms);
  out.I64(alert.since_ms);
  out.I64(alert.true_streak);
  out.I64(alert.false_streak);
  const AlertNumbers& numbers = alert.numbers;
  auto float64 = [&out](double value) { out.Fixed64(std::bit_cast<uint64_t>(value)); };
  out.I64(numbers.count_new);
  out.I64(numbers.count_base);
  float64(numbers.exposure_new);
  float64(numbers.exposure_base);
  out.U8(static_cast<uint8_t>(numbers.exposure));
  for (const std::optional<double>* value : {&numbers.ratio, &numbers.p_value, &numbers.p_adjusted}) {
    out.U8(value->has_value());
    if (*value) float64(**value);
  }
  out.U8(numbers.installs.has_value());
  if (numbers.installs) out.I64(*numbers.installs);
  out.U64(numbers.baseline_builds.size());
  for (const std::string& build : numbers.baseline_builds) out.Str(build);
  out.Str(numbers.version);
  float64(numbers.age_hours);
  out.I64(numbers.hang_ms_new);
  out.I64(numbers.hang_ms_base);
  float64(numbers.dispersion);
}

// Field decoders of the two versions over one ByteReader; a failed read leaves the reader
// failed (ok() false), and every later read returns zeros.
class CompactFields {
 public:
  explicit CompactFields(ByteReader& in) : in_(in) {}
  bool ok() const { return in_.ok(); }
  uint8_t U8() { return in_.U8(); }
  uint64_t Count() { return in_.Count(); }
  int64_t I64() { return in_.I64(); }
  int64_t I32() { return in_.I64(); }
  double F64() { return std::bit_cast<double>(in_.Fixed64()); }
  std::string Str() { return std::string(in_.Str()); }

 private:
  ByteReader& in_;
};

class FixedFields {
 public:
  explicit FixedFields(ByteReader& in) : in_(in) {}
  bool ok() const { return in_.ok(); }
  uint8_t U8() { return in_.U8(); }
  uint64_t Count() { return Fixed32(); }
  int64_t I64() { return static_cast<int64_t>(in_.Fixed64()); }
  int64_t I32() { return static_cast<int32_t>(Fixed32()); }
  double F64() { return std::bit_cast<double>(in_.Fixed64()); }
  std::string Str() {
    const uint32_t size = Fixed32();
    std::string text;
    for (uint32_t at = 0; at < size && in_.ok(); ++at) text.push_back(static_cast<char>(in_.U8()));
    return text;
  }
  uint32_t Fixed32() {
    uint32_t value = 0;
    for (int byte = 0; byte < 4; ++byte) value |= static_cast<uint32_t>(in_.U8()) << (8 * byte);
    return value;
  }

 private:
  ByteReader& in_;
};

// One alert; false when a read failed or a field is out of range. An event's alert may be
// kInactive (a pending key forgotten); a kept alert never is.
template <typename Fields>
bool DecodeAlert(Fields& in, Alert& alert, AlertState highest = AlertState::kResolved) {
  const uint8_t rule = in.U8();
  for (std::string* text :
       {&alert.key.channel, &alert.key.os, &alert.key.build, &alert.key.signature, &alert.key.scope}) {
    *text = in.Str();
  }
  const uint8_t state = in.U8();
  alert.first_seen_ms = in.I64();
  alert.last_seen_ms = in.I64();
  alert.since_ms = in.I64();
  alert.true_streak = static_cast<int>(in.I32());
  alert.false_streak = static_cast<int>(in.I32());
  AlertNumbers& numbers = alert.numbers;
  numbers.count_new = in.I64();
  numbers.count_base = in.I64();
  numbers.exposure_new = in.F64();
  numbers.exposure_base = in.F64();
  const uint8_t mode = in.U8();
  bool flags_ok = true;
  for (std::optional<double>* value : {&numbers.ratio, &numbers.p_value, &numbers.p_adjusted}) {
    const uint8_t has = in.U8();
    flags_ok = flags_ok && has <= 1;
    if (has == 1) *value = in.F64();
  }
  const uint8_t has_installs = in.U8();
  flags_ok = flags_ok && has_installs <= 1;
  if (has_installs == 1) numbers.installs = in.I64();
  const uint64_t builds = in.Count();
  for (uint64_t build = 0; build < builds && in.ok(); ++build) numbers.baseline_builds.push_back(in.Str());
  numbers.version = in.Str();
  numbers.age_hours = in.F64();
  numbers.hang_ms_new = in.I64();
  numbers.hang_ms_base = in.I64();
  numbers.dispersion = in.F64();
  if (!in.ok() || !flags_ok || rule >= kAlertRuleCount || state > static_cast<uint8_t>(highest) || mode > 1) {
    return false;
  }
  alert.key.rule = static_cast<AlertRule>(rule);
  alert.state = static_cast<AlertState>(state);
  numbers.exposure = static_cast<ExposureMode>(mode);
  return true;
}

Status Corrupt(const char* what) { return Status::Corrupt(std::string("alert state: ") + what); }

// `count` alerts, then (version 4) the outbox's events, then the end of `reader`; `alerts`
// and `outbox` are set only when everything decoded.
template <typename Fields>
Status DecodeAlerts(ByteReader& reader, Fields& in, uint64_t count, bool with_outbox,
                    std::map<AlertKey, Alert>& alerts, std::vector<AlertEvent>& outbox) {
  if (!reader.ok()) return Corrupt("truncated");
  std::map<AlertKey, Alert> restored;
  for (uint64_t at = 0; at < count; ++at) {
    Alert alert;
    if (!DecodeAlert(in, alert)) return Corrupt("truncated or malformed alert");
    AlertKey key = alert.key;
    restored[std::move(key)] = std::move(alert);
  }
  std::vector<AlertEvent> events;
  const uint64_t pending = with_outbox ? reader.Count() : 0;
  for (uint64_t at = 0; at < pending && reader.ok(); ++at) {
    AlertEvent event;
    if (!DecodeAlert(in, event.alert, AlertState::kInactive))
      return Corrupt("truncated or malformed outbox event");
    const uint8_t from = in.U8();
    if (from > static_cast<uint8_t>(AlertState::kInactive)) return Corrupt("malformed outbox event");
    event.from = static_cast<AlertState>(from);
    events.push_back(std::move(event));
  }
  if (!reader.ok()) return Corrupt("truncated");
  if (!reader.at_end()) return Corrupt("trailing bytes");
  alerts = std::move(restored);
  outbox = std::move(events);
  return Status::Ok();
}

}  // namespace

std::string EncodeAlertState(const std::map<AlertKey, Alert>& alerts, const std::vector<AlertEvent>& outbox) {
  ByteWriter out;
  for (char magic : kMagic) out.U8(static_cast<uint8_t>(magic));
  out.U64(kVersion);
  out.U64(alerts.size());
  for (const auto& [key, alert] : alerts) EncodeAlert(alert, out);
  out.U64(outbox.size());
  for (const AlertEvent& event : outbox) {
    EncodeAlert(event.alert, out);
    out.U8(static_cast<uint8_t>(event.from));
  }
  out.Fixed64(Hash64(out.bytes()));
  return out.Take();
}

Status DecodeAlertState(std::string_view bytes, std::map<AlertKey, Alert>& alerts,
                        std::vector<AlertEvent>& outbox) {
  if (bytes.size() < sizeof kMagic + 2 + kChecksumBytes ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return Corrupt("not an alert state");
  }
  const std::string_view body = bytes.substr(0, bytes.size() - kChecksumBytes);
  ByteReader checksum(bytes.substr(body.size()));
  if (Hash64(body) != checksum.Fixed64()) return Corrupt("checksum mismatch");
  ByteReader reader(body.substr(sizeof kMagic));
  // Versions 3 and 4 wrote a varint (3, 4), version 2 a fixed u32 (2, 0, 0, 0): their first
  // bytes differ.
  const uint64_t version = reader.U8();
  if (version == kVersion || version == kNoOutboxVersion) {
    CompactFields fields(reader);
    const uint64_t count = reader.Count();
    return DecodeAlerts(reader, fields, count, version == kVersion, alerts, outbox);
  }
  if (version == kFixedVersion) {
    FixedFields fields(reader);
    for (int byte = 1; byte < 4; ++byte) {
      if (reader.U8() != 0) return Corrupt("unsupported format version");
    }
    const uint64_t count = reader.Fixed64();
    return DecodeAlerts(reader, fields, count, false, alerts, outbox);
  }
  return Corrupt("unsupported format version");
}

}  // namespace seismo::alert_detail
