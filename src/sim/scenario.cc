#include "seismo/sim/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "seismo/aggregate/shard_state.h"
#include "seismo/sim/synth.h"
#include "seismo/core/json_writer.h"
#include "seismo/core/time.h"

namespace seismo {
namespace {

struct OsShare {
  const char* name;
  double share;
};
constexpr OsShare kOs[] = {{"Windows_NT", 0.72}, {"Darwin", 0.18}, {"Linux", 0.10}};

struct Build {
  std::string version, build_id, build_date;
  int64_t release_ms = 0;
  bool is_new = false;
  bool early = false;  // the one-hour-old build of kPlantEarlyBuild
};

std::string BuildIdAt(int64_t ms) {
  std::string ts = FormatTimestamp(EventTime{ms});  // 2026-11-18T09:00:00.000Z
  std::string digits;
  for (char c : ts) {
    if (c >= '0' && c <= '9') digits += c;
  }
  return digits.substr(0, 14);
}

int64_t Poisson(Rng& r, double mean) {
  int64_t total = 0;
  while (mean > 30) {  // split large means so exp(-mean) never underflows
    total += Poisson(r, 30);
    mean -= 30;
  }
  if (mean <= 0) return total;
  const double limit = std::exp(-mean);
  double product = r.Uniform();
  while (product > limit) {
    ++total;
    product *= r.Uniform();
  }
  return total;
}

// Zipf weights 1/(i+1)^1.1, normalised to 1.
std::vector<double> ZipfShares(int n) {
  std::vector<double> w(static_cast<size_t>(n));
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += w[static_cast<size_t>(i)] = 1.0 / std::pow(i + 1.0, 1.1);
  for (double& x : w) x /= sum;
  return w;
}

// Every crash signature has a fixed process class.
CrashClass ClassOf(int signature) {
  switch (signature % 10) {
    case 0: case 1: case 2: case 3: case 4: return CrashClass::kParent;
    case 5: case 6: case 7: return CrashClass::kContent;
    case 8: return CrashClass::kContentShutdown;
    default: return CrashClass::kGpu;
  }
}

std::string ProcessOf(CrashClass c) {
  switch (c) {
    case CrashClass::kContent:
    case CrashClass::kContentShutdown: return "content";
    case CrashClass::kGpu: return "gpu";
    default: return "parent";
  }
}

}  // namespace

const std::vector<ScenarioPlantName>& ScenarioPlantNames() {
  static const std::vector<ScenarioPlantName> kNames = {
      {"crash_spike", kPlantSignatureSpike, "one crash signature's rate x3 on the new build"},
      {"new_signature", kPlantNewSignature, "a crash signature no earlier build has, on the new build"},
      {"rate_regression", kPlantBuildRegression, "every crash rate x3 on the new build"},
      {"hang_spike", kPlantHangSpike, "one bhr hang stack's rate x2.25 on the new build"},
      {"burst", kPlantOsBurst, "one signature x15 on Linux in the last hour, every build"},
      {"install_storm", kPlantInstallStorm, "a new crash signature, 200 crashes from one install"},
      {"early_build", kPlantEarlyBuild, "a build one hour old with two crashes of a new signature"},
      {"hang_storm", kPlantHangStorm, "a new hang stack, 200 hangs from one install's pings"},
      {"gpu_regression", kPlantGpuRegression, "main pings' gpu sub-process crashes x3 on the new build"},
  };
  return kNames;
}

std::optional<ScenarioPlant> ScenarioPlantByName(std::string_view name) {
  for (const ScenarioPlantName& p : ScenarioPlantNames()) {
    if (p.name == name) return p.plant;
  }
  return std::nullopt;
}

std::string Scenario::CrashSignature(int i) { return fmt::format("mozilla::scenario::Crash{:02}", i); }
std::string Scenario::HangSignature(int i) { return fmt::format("scenario::Hang{:02}", i); }

Scenario::Scenario(ScenarioOptions options) : options_(std::move(options)) { Generate(); }

namespace {

constexpr int kSpikeSignature = 5;  // a content-process crash signature
constexpr int kBurstSignature = 2;
constexpr int kHangSpikeSignature = 3;
constexpr double kUsagePerPing = 20;  // usage hours one ping reports at most

std::string ClientId(uint64_t install) { return fmt::format("5ce0a11d-0000-4000-8000-{:012x}", install); }

int64_t FloorHour(int64_t ms) { return FloorDiv(ms, kHourMs) * kHourMs; }

// Part `p` of `total` split over `parts`: equal shares, the remainder on part 0.
int64_t ShareOf(int64_t total, size_t parts, size_t p) {
  return total / static_cast<int64_t>(parts) + (p == 0 ? total % static_cast<int64_t>(parts) : 0);
}

// The mean of the last (up to) three entries of `factors[0, n)`: the baseline builds a
// rule compares the new build with at its defaults.
double RecentMean(const std::vector<std::vector<double>>& factors, size_t n, size_t signature) {
  double sum = 0;
  size_t k = 0;
  for (size_t b = n; b > 0 && k < 3; --b, ++k) sum += factors[b - 1][signature];
  return k == 0 ? 1.0 : sum / static_cast<double>(k);
}

// The builds and the hours the documents fall in.
struct Timeline {
  std::vector<Build> builds;  // B1.., then N, then the early build when it is planted
  size_t new_index = 0;       // N
  int64_t start_ms = 0;       // the first hour
  int64_t last_hour_ms = 0;   // the start of the last hour, N's hour new_build_age_hours - 1
  int64_t end_ms = 0;         // the last millisecond of the last hour

  const Build& new_build() const { return builds[new_index]; }
};

Build MakeBuild(int64_t release_ms, std::string build_id, int major) {
  Build b;
  b.release_ms = release_ms;
  b.build_id = std::move(build_id);
  b.build_date = b.build_id.substr(0, 8);
  b.version = fmt::format("{}.0", major);
  return b;
}

// The baseline builds every build_spacing_hours from 09:00 of the first day, N after them,
// and kPlantEarlyBuild's build released at the start of the last hour.
Timeline MakeTimeline(const ScenarioOptions& o) {
  Timeline t;
  t.start_ms = o.start_ms - o.start_ms % kHourMs;
  for (int i = 0; i <= o.baseline_builds; ++i) {
    const int64_t release_ms = t.start_ms + (i * o.build_spacing_hours + 9) * kHourMs;
    Build b = MakeBuild(release_ms, BuildIdAt(release_ms), 140 + i);
    b.is_new = i == o.baseline_builds;
    t.builds.push_back(b);
  }
  t.new_index = static_cast<size_t>(o.baseline_builds);
  t.last_hour_ms = t.builds.back().release_ms + (o.new_build_age_hours - 1) * kHourMs;
  t.end_ms = t.last_hour_ms + kHourMs - 1;
  if (o.plants & kPlantEarlyBuild) {
    Build e = MakeBuild(t.last_hour_ms, BuildIdAt(t.last_hour_ms + 60'000), 141 + o.baseline_builds);
    e.early = true;
    t.builds.push_back(e);
  }
  return t;
}

// The alerts the plants should fire (the guard plants none), sorted, each once.
std::vector<ScenarioExpectedAlert> ExpectedAlerts(const ScenarioOptions& o, const ScenarioTruth& t) {
  std::vector<ScenarioExpectedAlert> alerts;
  auto expect = [&](std::string rule, std::string build, std::string signature, std::string os,
                    std::string scope) {
    alerts.push_back(
        {std::move(rule), std::move(build), std::move(signature), std::move(os), std::move(scope)});
  };
  if (o.plants & kPlantSignatureSpike) {
    expect("crash_signature_spike", t.new_build_id, t.spike_signature, "all", "");
  }
  if (o.plants & kPlantNewSignature)
    expect("new_crash_signature", t.new_build_id, t.new_signature, "all", "");
  if (o.plants & kPlantBuildRegression) {
    for (const char* cls : {"parent", "content", "content_shutdown", "gpu", "startup"}) {
      expect("crash_rate_regression", t.new_build_id, "", "all", cls);
    }
  }
  if (o.plants & kPlantGpuRegression) expect("crash_rate_regression", t.new_build_id, "", "all", "gpu");
  if (o.plants & kPlantHangSpike) expect("hang_spike", t.new_build_date, t.hang_signature, "all", "bhr");
  if (o.plants & kPlantOsBurst) expect("burst", "", t.burst_signature, t.burst_os, "");
  std::sort(alerts.begin(), alerts.end());
  alerts.erase(std::unique(alerts.begin(), alerts.end()), alerts.end());
  return alerts;
}

// N and the baseline builds, the signatures each plant uses, and the alerts they should fire.
ScenarioTruth MakeTruth(const ScenarioOptions& o, const Timeline& timeline) {
  ScenarioTruth t;
  const Build& n = timeline.new_build();
  t.channel = o.channel;
  t.new_build_id = n.build_id;
  t.new_build_date = n.build_date;
  t.new_version = n.version;
  for (size_t i = 0; i < timeline.new_index; ++i) t.baseline_build_ids.push_back(timeline.builds[i].build_id);
  if (o.plants & kPlantSignatureSpike) t.spike_signature = Scenario::CrashSignature(kSpikeSignature);
  if (o.plants & kPlantNewSignature) t.new_signature = "mozilla::scenario::NewInThisBuild";
  if (o.plants & kPlantHangSpike) t.hang_signature = Scenario::HangSignature(kHangSpikeSignature);
  if (o.plants & kPlantOsBurst) {
    t.burst_signature = Scenario::CrashSignature(kBurstSignature);
    t.burst_os = "Linux";
  }
  if (o.plants & kPlantInstallStorm) t.storm_signature = "mozilla::scenario::OneMachineStorm";
  if (o.plants & kPlantHangStorm) t.hang_storm_signature = "scenario::OneMachineHangStorm";
  if (o.plants & kPlantEarlyBuild) {
    t.early_build_id = timeline.builds.back().build_id;
    t.early_signature = "mozilla::scenario::EarlyBuildCrash";
  }
  t.expected_alerts = ExpectedAlerts(o, t);
  return t;
}

// Per-build, per-signature rate factors: builds are never exactly alike.
struct RateFactors {
  std::vector<std::vector<double>> crash, hang;  // [build][signature]
  size_t gpu_column = 0;  // the column of `crash` that is the main pings' gpu sub-process crash rate
};

RateFactors DrawRateFactors(const ScenarioOptions& o, size_t builds, Rng& r) {
  RateFactors f;
  f.gpu_column = static_cast<size_t>(o.crash_signatures);
  for (size_t b = 0; b < builds; ++b) {
    f.crash.emplace_back();
    f.hang.emplace_back();
    for (int s = 0; s <= o.crash_signatures; ++s) f.crash[b].push_back(r.LogNormal(0, o.build_noise));
    for (int s = 0; s < o.hang_signatures; ++s) f.hang[b].push_back(r.LogNormal(0, o.build_noise));
  }
  return f;
}

// The rate plants: relative to the builds N is compared with (N's own factor replaced).
void PlantRateFactors(const ScenarioOptions& o, size_t new_index, RateFactors& f) {
  if (o.plants & kPlantSignatureSpike) {
    const auto s = static_cast<size_t>(kSpikeSignature);
    f.crash[new_index][s] = o.spike_factor * RecentMean(f.crash, new_index, s);
  }
  if (o.plants & kPlantHangSpike) {
    const auto s = static_cast<size_t>(kHangSpikeSignature);
    f.hang[new_index][s] = o.hang_factor * RecentMean(f.hang, new_index, s);
  }
  if (o.plants & kPlantGpuRegression) {
    f.crash[new_index][f.gpu_column] = o.regression_factor * RecentMean(f.crash, new_index, f.gpu_column);
  }
}

// kPlantInstallStorm's crashes and kPlantHangStorm's hangs in each of N's hours.
int64_t StormPerHour(const ScenarioOptions& o) {
  return std::max<int64_t>(1, o.storm_crashes / std::max<int64_t>(1, o.new_build_age_hours));
}

// One build's users on one OS for one hour.
struct Cell {
  size_t build;  // index into the timeline's builds
  const char* os;
  int64_t hour;  // its start
  double usage;  // usage hours
  size_t pings;  // main pings that carry the usage, and as many bhr pings
  double early;  // the early adopters' rate factor (1 after early_hours)
};

// The documents, hour by hour: every build's users send main and bhr pings from each OS and
// crash at their signatures' rates; the plants add theirs. Draws from `r` in a fixed order:
// the same seed gives the same records.
class RecordGenerator {
 public:
  RecordGenerator(const ScenarioOptions& o, const Timeline& timeline, const ScenarioTruth& truth,
                  const RateFactors& factors, Rng& r, std::vector<ScenarioRecord>& records)
      : o_(o),
        timeline_(timeline),
        truth_(truth),
        factors_(factors),
        r_(r),
        records_(records),
        crash_share_(ZipfShares(o.crash_signatures)),
        hang_share_(ZipfShares(o.hang_signatures)),
        storm_per_hour_(StormPerHour(o)) {}

  void Run() {
    const int64_t last_hour = FloorHour(timeline_.end_ms);
    for (int64_t hour = FloorHour(timeline_.start_ms); hour <= last_hour; hour += kHourMs) Hour(hour);
  }

 private:
  // Every record of this hour has its time in it: sorting the hour's records keeps the
  // whole list in time order.
  void Hour(int64_t hour) {
    const size_t hour_begin = records_.size();
    for (size_t bi = 0; bi < timeline_.builds.size(); ++bi) {
      if (timeline_.builds[bi].release_ms <= hour) BuildHour(bi, hour);
    }
    std::stable_sort(records_.begin() + static_cast<ptrdiff_t>(hour_begin), records_.end(),
                     [](const ScenarioRecord& a, const ScenarioRecord& b) { return a.time < b.time; });
  }

  void BuildHour(size_t bi, int64_t hour) {
    const Build& b = timeline_.builds[bi];
    const double age_h = static_cast<double>(hour - b.release_ms) / kHourMs;
    const double early = age_h < static_cast<double>(o_.early_hours) ? o_.early_adopter_factor : 1.0;
    for (const OsShare& os : kOs) {
      const double usage = o_.usage_per_hour * (b.early ? 0.05 : 1.0) * os.share * (0.9 + 0.2 * r_.Uniform());
      const auto pings = static_cast<size_t>(std::max(1.0, std::ceil(usage / kUsagePerPing)));
      const Cell cell{bi, os.name, hour, usage, pings, early};
      MainPings(cell);
      BhrPings(cell);
      if (b.early) continue;
      Crashes(cell);
      if (b.is_new && (o_.plants & kPlantNewSignature)) NewSignatureCrashes(cell);
    }
    if (b.is_new && (o_.plants & kPlantInstallStorm)) InstallStorm(b, hour);
    if (b.is_new && (o_.plants & kPlantHangStorm)) HangStorm(b, hour);
    if (b.early && hour == timeline_.last_hour_ms) EarlyBuildCrashes(b, hour);
  }

  // Main pings: usage (whole seconds, as subsessionLength carries it) and the main pings'
  // gpu sub-process crash counts.
  void MainPings(const Cell& c) {
    const Build& b = timeline_.builds[c.build];
    const auto seconds = static_cast<int64_t>(std::llround(c.usage * 3600));
    std::vector<ScenarioRecord> main;
    for (size_t p = 0; p < c.pings; ++p) {
      main.push_back(Ping(DocKind::kMain, b, c.os, c.hour, ShareOf(seconds, c.pings, p) * 1000, Client()));
    }
    const double subprocess_gpu = o_.subprocess_gpu_per_usage_hour;
    if (subprocess_gpu > 0 && !b.early) {
      const double rate = subprocess_gpu * factors_.crash[c.build][factors_.gpu_column] * c.early *
                          (b.is_new && (o_.plants & kPlantBuildRegression) ? o_.regression_factor : 1.0);
      for (int64_t k = Poisson(r_, c.usage * rate); k > 0; --k) {
        ++main[r_.Below(c.pings)].doc.subprocess_crashes.gpu;
      }
    }
    for (ScenarioRecord& m : main) records_.push_back(std::move(m));
  }

  // bhr pings: bhr usage, and the hour's hangs spread over them.
  void BhrPings(const Cell& c) {
    const Build& b = timeline_.builds[c.build];
    const auto ms = static_cast<int64_t>(std::llround(c.usage * kHourMs));
    std::vector<ScenarioRecord> bhr;
    for (size_t p = 0; p < c.pings; ++p) {
      bhr.push_back(Ping(DocKind::kBhr, b, c.os, c.hour, ShareOf(ms, c.pings, p), Client()));
    }
    if (!b.early) {
      for (int s = 0; s < o_.hang_signatures; ++s) {
        const double rate = o_.hangs_per_usage_hour * hang_share_[static_cast<size_t>(s)] *
                            factors_.hang[c.build][static_cast<size_t>(s)] * c.early;
        const std::string signature = Scenario::HangSignature(s);
        for (int64_t k = Poisson(r_, c.usage * rate); k > 0; --k) {
          const int64_t us = HangUs();  // drawn before the ping it goes to, as it always was
          AddHang(bhr[r_.Below(c.pings)], signature, us);
        }
      }
    }
    for (ScenarioRecord& h : bhr) records_.push_back(std::move(h));
  }

  // Crash reports of every signature; kPlantBuildRegression and kPlantOsBurst raise rates.
  void Crashes(const Cell& c) {
    const Build& b = timeline_.builds[c.build];
    const bool final_hour = c.hour == timeline_.last_hour_ms;
    for (int s = 0; s < o_.crash_signatures; ++s) {
      double rate = o_.crashes_per_usage_hour * crash_share_[static_cast<size_t>(s)] *
                    factors_.crash[c.build][static_cast<size_t>(s)] * c.early;
      if (b.is_new && (o_.plants & kPlantBuildRegression)) rate *= o_.regression_factor;
      if (final_hour && s == kBurstSignature && (o_.plants & kPlantOsBurst) &&
          std::string_view(c.os) == "Linux") {
        rate *= o_.burst_factor;
      }
      const int64_t count = Poisson(r_, c.usage * rate);
      for (int64_t k = 0; k < count; ++k) {
        AddCrash(b, c.os, c.hour, Scenario::CrashSignature(s), ClassOf(s),
                 fmt::format("{}", 1'700'000'000 + c.build * 1'000'000 + r_.Below(200'000)));
      }
    }
  }

  // kPlantNewSignature: about 60 crashes of a signature no other build has, over N's life.
  void NewSignatureCrashes(const Cell& c) {
    const Build& b = timeline_.builds[c.build];
    const double rate = 60.0 / (o_.usage_per_hour * static_cast<double>(o_.new_build_age_hours));
    for (int64_t k = Poisson(r_, c.usage * rate); k > 0; --k) {
      AddCrash(b, c.os, c.hour, truth_.new_signature, CrashClass::kParent,
               fmt::format("{}", 1'800'000'000 + r_.Below(200'000)));
    }
  }

  // kPlantInstallStorm: storm_crashes crashes over N's life, all from one install.
  void InstallStorm(const Build& b, int64_t hour) {
    for (int64_t k = 0; k < storm_per_hour_; ++k) {
      AddCrash(b, "Linux", hour, truth_.storm_signature, CrashClass::kParent, "1799999999");
    }
  }

  // kPlantHangStorm: one install's bhr ping each hour (an hour of usage), full of one
  // stack's hangs.
  void HangStorm(const Build& b, int64_t hour) {
    ScenarioRecord storm = Ping(DocKind::kBhr, b, "Linux", hour, kHourMs, ClientId(0xffffffffffULL));
    for (int64_t k = 0; k < storm_per_hour_; ++k) AddHang(storm, truth_.hang_storm_signature, HangUs());
    records_.push_back(std::move(storm));
  }

  // kPlantEarlyBuild: two crashes of a new signature in the early build's only hour.
  void EarlyBuildCrashes(const Build& b, int64_t hour) {
    AddCrash(b, "Windows_NT", hour, truth_.early_signature, CrashClass::kParent, "1811111111");
    AddCrash(b, "Windows_NT", hour, truth_.early_signature, CrashClass::kParent, "1822222222");
  }

  Dimensions DimsOf(const Build& b, const char* os) const {
    Dimensions d;
    d.channel = o_.channel;
    d.product = "Firefox";
    d.version = b.version;
    d.build_id = b.build_id;
    d.build_date = b.build_date;
    d.os = os;
    return d;
  }

  EventTime At(int64_t hour_start) { return EventTime{hour_start + static_cast<int64_t>(r_.Below(kHourMs))}; }
  std::string Client() {
    return ClientId(r_.Below(static_cast<uint64_t>(std::max<int64_t>(1, o_.installs))));
  }
  int64_t HangUs() { return (1500 + static_cast<int64_t>(r_.Below(5000))) * 100; }  // 150.0 .. 649.9 ms

  ScenarioRecord Ping(DocKind kind, const Build& b, const char* os, int64_t hour_start, int64_t usage_ms,
                      std::string install) {
    ScenarioRecord rec;
    rec.time = At(hour_start);
    rec.doc.kind = kind;
    rec.doc.dims = DimsOf(b, os);
    rec.doc.usage_ms = usage_ms;
    if (kind == DocKind::kMain || o_.bhr_client_ids) rec.doc.install_id = std::move(install);
    return rec;
  }

  static void AddHang(ScenarioRecord& rec, const std::string& signature, int64_t us) {
    std::vector<HangRecord>& hangs = rec.doc.hangs;
    if (hangs.empty() || hangs.back().signature != signature) {
      rec.doc.AddHang("parent", "Gecko", {"Startup::XRE_Main", "Events::ProcessGeckoEvents", signature},
                      signature, 0, 0);
    }
    hangs.back().hang_us += us;
    ++hangs.back().hang_count;
    rec.hang_durations_us.push_back(us);
  }

  void AddCrash(const Build& b, const char* os, int64_t hour_start, std::string signature, CrashClass cls,
                std::string install) {
    ScenarioRecord rec;
    rec.time = At(hour_start);
    rec.doc.kind = DocKind::kCrash;
    rec.doc.dims = DimsOf(b, os);
    rec.doc.doc_id = fmt::format("scenario-{}-{}", o_.seed, doc_counter_++);
    CrashRecord c;
    c.crash_class = cls;
    c.process = ProcessOf(cls);
    c.startup = r_.Chance(0.05);
    c.signature = std::move(signature);
    if (o_.crash_install_ids) c.install_id = std::move(install);
    rec.doc.crash = std::move(c);
    records_.push_back(std::move(rec));
  }

  const ScenarioOptions& o_;
  const Timeline& timeline_;
  const ScenarioTruth& truth_;
  const RateFactors& factors_;
  Rng& r_;
  std::vector<ScenarioRecord>& records_;
  const std::vector<double> crash_share_, hang_share_;  // Zipf
  const int64_t storm_per_hour_;  // kPlantInstallStorm's crashes, kPlantHangStorm's hangs
  uint64_t doc_counter_ = 0;
};

}  // namespace

// The steps draw from one generator in this order; a change of order changes every record.
void Scenario::Generate() {
  Rng r(options_.seed * 0x9e3779b97f4a7c15ULL + 17);
  const Timeline timeline = MakeTimeline(options_);
  end_ms_ = timeline.end_ms;
  truth_ = MakeTruth(options_, timeline);
  RateFactors factors = DrawRateFactors(options_, timeline.builds.size(), r);
  PlantRateFactors(options_, timeline.new_index, factors);
  RecordGenerator(options_, timeline, truth_, factors, r, records_).Run();
}

void Scenario::ForEachDelta(Symbols& symbols, const std::function<void(Delta&&)>& emit) const {
  DeltaEncoder encoder(&symbols);
  std::vector<Delta> deltas;
  for (const ScenarioRecord& rec : records_) {
    deltas.clear();
    encoder.Encode(rec.doc, rec.time, deltas);
    for (Delta& d : deltas) emit(std::move(d));
  }
}

namespace {

void WriteDims(JsonWriter& w, const Dimensions& d) {
  w.Key("application").BeginObject();
  w.Key("buildId").String(d.build_id);
  w.Key("channel").String(d.channel);
  w.Key("name").String(d.product);
  w.Key("version").String(d.version);
  w.Key("displayVersion").String(d.version);
  w.EndObject();
  w.Key("environment").BeginObject().Key("system").BeginObject().Key("os").BeginObject();
  w.Key("name").String(d.os);
  w.EndObject().EndObject().EndObject();
}

}  // namespace

void Scenario::ForEachDocument(const std::function<void(std::string&&)>& emit) const {
  uint64_t id = 0;
  auto doc_id = [&] { return fmt::format("00000000-5ce0-4000-8000-{:012x}", options_.seed * 100'000'000 + id++); };
  for (const ScenarioRecord& rec : records_) {
    const ParsedDocument& d = rec.doc;
    const std::string ts = FormatTimestamp(rec.time);
    if (d.kind == DocKind::kCrash) {
      const CrashRecord& c = *d.crash;
      JsonWriter w;
      w.BeginObject();
      w.Key("uuid").String(d.doc_id);
      w.Key("submitted_timestamp").String(ts);
      w.Key("product").String(d.dims.product);
      w.Key("version").String(d.dims.version);
      w.Key("build").String(d.dims.build_id);
      w.Key("release_channel").String(d.dims.channel);
      w.Key("process_type").String(c.process);
      if (!c.install_id.empty()) w.Key("install_time").String(c.install_id);
      w.Key("startup_crash").Bool(c.startup);
      w.Key("os_name").String(d.dims.os);
      if (c.crash_class == CrashClass::kContentShutdown) w.Key("ipc_channel_error").String("ShutDownKill");
      w.Key("json_dump").BeginObject();
      w.Key("crash_info").BeginObject().Key("type").String("SIGSEGV").Key("crashing_thread").Int(0).EndObject();
      w.Key("threads").BeginArray().BeginObject().Key("frames").BeginArray();
      w.BeginObject().Key("frame").Int(0).Key("function").String(c.signature + "()").Key("module").String("xul.dll");
      w.Key("offset").String("0x1234").EndObject();
      w.EndArray().EndObject().EndArray();
      w.EndObject();
      w.EndObject();
      emit(w.Take());
      continue;
    }
    JsonWriter w;
    w.BeginObject();
    w.Key("type").String(d.kind == DocKind::kMain ? "main" : "bhr");
    w.Key("id").String(doc_id());
    w.Key("submission_timestamp").String(ts);
    if (!d.install_id.empty()) w.Key("clientId").String(d.install_id);
    WriteDims(w, d.dims);
    w.Key("payload").BeginObject();
    if (d.kind == DocKind::kMain) {
      w.Key("info")
          .BeginObject()
          .Key("reason")
          .String("daily")
          .Key("subsessionLength")
          .Int(d.usage_ms / 1000)
          .EndObject();
      if (d.subprocess_crashes.gpu > 0) {
        w.Key("keyedHistograms").BeginObject().Key("SUBPROCESS_CRASHES_WITH_DUMP").BeginObject();
        w.Key("gpu").BeginObject().Key("sum").Int(static_cast<int64_t>(d.subprocess_crashes.gpu)).EndObject();
        w.EndObject().EndObject();
      }
    } else {
      w.Key("timeSinceLastPing").Int(d.usage_ms);
      w.Key("modules").BeginArray().EndArray();
      w.Key("hangs").BeginArray();
      size_t k = 0;
      for (const HangRecord& h : d.hangs) {
        for (uint64_t i = 0; i < h.hang_count; ++i, ++k) {
          w.BeginObject();
          w.Key("duration").Double(static_cast<double>(rec.hang_durations_us[k]) / 1000.0);
          w.Key("thread").String(h.thread);
          w.Key("process").String("default");
          w.Key("stack").BeginArray();
          for (std::string_view f : d.Stack(h)) w.String(f);
          w.EndArray();
          w.EndObject();
        }
      }
      w.EndArray();
    }
    w.EndObject();
    w.EndObject();
    emit(w.Take());
  }
}

std::string ScenarioTruthJson(const ScenarioOptions& options, const ScenarioTruth& t) {
  JsonWriter w;
  w.BeginObject();
  w.Key("seed").Uint(options.seed);
  w.Key("plants").BeginArray();
  for (const ScenarioPlantName& p : ScenarioPlantNames()) {
    if (options.plants & p.plant) w.String(p.name);
  }
  w.EndArray();
  w.Key("build_noise").Double(options.build_noise);
  w.Key("channel").String(t.channel);
  w.Key("new_build_id").String(t.new_build_id);
  w.Key("new_build_date").String(t.new_build_date);
  w.Key("new_version").String(t.new_version);
  w.Key("baseline_build_ids").BeginArray();
  for (const std::string& b : t.baseline_build_ids) w.String(b);
  w.EndArray();
  w.Key("expected_alerts").BeginArray();
  for (const ScenarioExpectedAlert& a : t.expected_alerts) {
    w.BeginObject();
    w.Key("rule").String(a.rule);
    w.Key("build").String(a.build);
    w.Key("signature").String(a.signature);
    w.Key("os").String(a.os);
    w.Key("scope").String(a.scope);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::shared_ptr<const Snapshot> Scenario::MakeSnapshot(const AggregateOptions& options) const {
  auto symbols = std::make_shared<Symbols>();
  ShardState state(options, symbols.get());
  ForEachDelta(*symbols, [&](Delta&& d) { state.Apply(d); });
  state.AdvanceTo(EventTime{end_ms_});
  return MergeSnapshots({state.Snapshot()}, *symbols, options.bucket_ms, options.windows_ms, options.retention_ms,
                        true, symbols);
}

}  // namespace seismo
