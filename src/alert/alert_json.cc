// The text forms of alerts: rule and state names, the alert JSON every sink and the API
// carry, and the dashboard path of an alert.
#include <cctype>

#include "seismo/alert/engine.h"
#include "seismo/core/json_writer.h"
#include "seismo/core/time.h"

namespace seismo {

std::string_view AlertRuleName(AlertRule rule) {
  switch (rule) {
    case AlertRule::kCrashSignatureSpike:
      return "crash_signature_spike";
    case AlertRule::kNewCrashSignature:
      return "new_crash_signature";
    case AlertRule::kCrashRateRegression:
      return "crash_rate_regression";
    case AlertRule::kHangSpike:
      return "hang_spike";
    case AlertRule::kBurst:
      return "burst";
  }
  return "unknown";
}

std::string_view AlertStateName(AlertState state) {
  switch (state) {
    case AlertState::kPending:
      return "pending";
    case AlertState::kFiring:
      return "firing";
    case AlertState::kResolved:
      return "resolved";
    case AlertState::kInactive:
      return "inactive";
  }
  return "unknown";
}

namespace {

void AppendQuery(std::string& out, std::string_view name, std::string_view value) {
  if (value.empty()) return;
  out += out.find('?') == std::string::npos ? '?' : '&';
  out += name;
  out += '=';
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char ch : value) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
}

}  // namespace

// Where the evidence is: a new build's alert opens the release comparison, the build beside
// its baseline builds at equal age (its signature's, class's or hang's lines; ADR 0029);
// a burst, which is no build's, the signature's page.
std::string DashboardPath(const AlertKey& key) {
  std::string path;
  const std::string_view os = key.os == kAllOs ? "" : std::string_view(key.os);
  switch (key.rule) {
    case AlertRule::kCrashSignatureSpike:
    case AlertRule::kNewCrashSignature:
      path = "/#/releases";
      AppendQuery(path, "channel", key.channel);
      AppendQuery(path, "build_id", key.build);
      AppendQuery(path, "signature", key.signature);
      return path;
    case AlertRule::kCrashRateRegression:
      path = "/#/releases";
      AppendQuery(path, "channel", key.channel);
      AppendQuery(path, "build_id", key.build);
      AppendQuery(path, "class", key.scope);
      return path;
    case AlertRule::kHangSpike:
      path = "/#/releases";
      AppendQuery(path, "channel", key.channel);
      AppendQuery(path, "build_date", key.build);
      AppendQuery(path, "signature", key.signature);
      AppendQuery(path, "source", key.scope);
      AppendQuery(path, "focus", "hangs");
      return path;
    case AlertRule::kBurst:
      path = "/#/crashes/signature";
      AppendQuery(path, "signature", key.signature);
      break;
  }
  AppendQuery(path, "channel", key.channel);
  AppendQuery(path, "os", os);
  return path;
}

std::string AlertJson(const Alert& alert) {
  const AlertKey& key = alert.key;
  const AlertNumbers& numbers = alert.numbers;
  const bool hang = key.rule == AlertRule::kHangSpike;
  JsonWriter json;
  json.BeginObject();
  json.Key("state").String(AlertStateName(alert.state));
  json.Key("rule").String(AlertRuleName(key.rule));
  json.Key("channel").String(key.channel);
  json.Key("os").String(key.os);
  json.Key("build");
  key.build.empty() ? json.Null() : json.String(key.build);
  if (!key.build.empty()) json.Key(hang ? "build_date" : "build_id").String(key.build);
  json.Key("version");
  numbers.version.empty() ? json.Null() : json.String(numbers.version);
  json.Key("signature");
  key.signature.empty() ? json.Null() : json.String(key.signature);
  if (!key.scope.empty()) json.Key(hang ? "source" : "process").String(key.scope);
  json.Key("count_new").Int(numbers.count_new);
  json.Key("count_base").Int(numbers.count_base);
  json.Key("exposure_kind").String(ExposureModeName(numbers.exposure));
  json.Key("exposure_new").Double(numbers.exposure_new);
  json.Key("exposure_base").Double(numbers.exposure_base);
  // Rates: per 1000 usage hours (crashes), per usage hour (hang ms), share (crash_share).
  auto rate = [&](double amount, double exposure) -> std::optional<double> {
    if (!(exposure > 0)) return std::nullopt;
    if (numbers.exposure == ExposureMode::kCrashShare) return amount / exposure;
    return hang ? amount / exposure : amount * 1000 / exposure;
  };
  json.Key("rate_new")
      .OptDouble(
          rate(hang ? static_cast<double>(numbers.hang_ms_new) : numbers.count_new, numbers.exposure_new));
  json.Key("rate_base")
      .OptDouble(
          rate(hang ? static_cast<double>(numbers.hang_ms_base) : numbers.count_base, numbers.exposure_base));
  if (hang) {
    json.Key("hang_ms_new").Int(numbers.hang_ms_new);
    json.Key("hang_ms_base").Int(numbers.hang_ms_base);
  }
  json.Key("ratio").OptDouble(numbers.ratio);
  json.Key("p_value").OptDouble(numbers.p_value);
  json.Key("p_adjusted").OptDouble(numbers.p_adjusted);
  json.Key("dispersion").Double(numbers.dispersion);
  json.Key("installs");
  numbers.installs ? json.Int(*numbers.installs) : json.Null();
  if (!numbers.installs) json.Key("note").String(kInstallsUnknownNote);
  json.Key("baseline_builds").BeginArray();
  for (const std::string& build : numbers.baseline_builds) json.String(build);
  json.EndArray();
  json.Key("age_hours").Double(numbers.age_hours);
  json.Key("first_seen").String(FormatTimestamp(EventTime{alert.first_seen_ms}));
  json.Key("last_seen").String(FormatTimestamp(EventTime{alert.last_seen_ms}));
  json.Key("since").String(FormatTimestamp(EventTime{alert.since_ms}));
  json.Key("dashboard_path").String(DashboardPath(key));
  json.EndObject();
  return json.Take();
}

}  // namespace seismo
