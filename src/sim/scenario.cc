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

constexpr int64_t kHour = 3'600'000;

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

// The mean of the last (up to) three entries of `factors[0, n)`: the baseline builds a
// rule compares the new build with at its defaults.
double RecentMean(const std::vector<std::vector<double>>& factors, size_t n, size_t signature) {
  double sum = 0;
  size_t k = 0;
  for (size_t b = n; b > 0 && k < 3; --b, ++k) sum += factors[b - 1][signature];
  return k == 0 ? 1.0 : sum / static_cast<double>(k);
}

}  // namespace

void Scenario::Generate() {
  const ScenarioOptions& o = options_;
  Rng r(o.seed * 0x9e3779b97f4a7c15ULL + 17);
  const int64_t start = o.start_ms - o.start_ms % kHour;

  std::vector<Build> builds;
  for (int i = 0; i <= o.baseline_builds; ++i) {
    Build b;
    b.release_ms = start + (i * o.build_spacing_hours + 9) * kHour;
    b.build_id = BuildIdAt(b.release_ms);
    b.build_date = b.build_id.substr(0, 8);
    b.version = fmt::format("{}.0", 140 + i);
    b.is_new = i == o.baseline_builds;
    builds.push_back(b);
  }
  const int64_t end_hour_start = builds.back().release_ms + (o.new_build_age_hours - 1) * kHour;
  end_ms_ = end_hour_start + kHour - 1;
  if (o.plants & kPlantEarlyBuild) {
    Build e;
    e.release_ms = end_hour_start;
    e.build_id = BuildIdAt(e.release_ms + 60'000);
    e.build_date = e.build_id.substr(0, 8);
    e.version = fmt::format("{}.0", 141 + o.baseline_builds);
    e.early = true;
    builds.push_back(e);
  }
  const auto new_index = static_cast<size_t>(o.baseline_builds);
  const Build& n = builds[new_index];
  truth_.channel = o.channel;
  truth_.new_build_id = n.build_id;
  truth_.new_build_date = n.build_date;
  truth_.new_version = n.version;
  for (size_t i = 0; i < new_index; ++i) truth_.baseline_build_ids.push_back(builds[i].build_id);
  if (o.plants & kPlantSignatureSpike) truth_.spike_signature = CrashSignature(kSpikeSignature);
  if (o.plants & kPlantNewSignature) truth_.new_signature = "mozilla::scenario::NewInThisBuild";
  if (o.plants & kPlantHangSpike) truth_.hang_signature = HangSignature(kHangSpikeSignature);
  if (o.plants & kPlantOsBurst) {
    truth_.burst_signature = CrashSignature(kBurstSignature);
    truth_.burst_os = "Linux";
  }
  if (o.plants & kPlantInstallStorm) truth_.storm_signature = "mozilla::scenario::OneMachineStorm";
  if (o.plants & kPlantHangStorm) truth_.hang_storm_signature = "scenario::OneMachineHangStorm";
  if (o.plants & kPlantEarlyBuild) {
    truth_.early_build_id = builds.back().build_id;
    truth_.early_signature = "mozilla::scenario::EarlyBuildCrash";
  }
  auto expect = [&](std::string rule, std::string build, std::string signature, std::string os,
                    std::string scope) {
    truth_.expected_alerts.push_back(
        {std::move(rule), std::move(build), std::move(signature), std::move(os), std::move(scope)});
  };
  if (o.plants & kPlantSignatureSpike) {
    expect("crash_signature_spike", n.build_id, truth_.spike_signature, "all", "");
  }
  if (o.plants & kPlantNewSignature) expect("new_crash_signature", n.build_id, truth_.new_signature, "all", "");
  if (o.plants & kPlantBuildRegression) {
    for (const char* cls : {"parent", "content", "content_shutdown", "gpu", "startup"}) {
      expect("crash_rate_regression", n.build_id, "", "all", cls);
    }
  }
  if (o.plants & kPlantGpuRegression) expect("crash_rate_regression", n.build_id, "", "all", "gpu");
  if (o.plants & kPlantHangSpike) expect("hang_spike", n.build_date, truth_.hang_signature, "all", "bhr");
  if (o.plants & kPlantOsBurst) expect("burst", "", truth_.burst_signature, truth_.burst_os, "");
  std::sort(truth_.expected_alerts.begin(), truth_.expected_alerts.end());
  truth_.expected_alerts.erase(std::unique(truth_.expected_alerts.begin(), truth_.expected_alerts.end()),
                               truth_.expected_alerts.end());

  const std::vector<double> crash_share = ZipfShares(o.crash_signatures);
  const std::vector<double> hang_share = ZipfShares(o.hang_signatures);
  // Per-build, per-signature rate factors: builds are never exactly alike. Column
  // crash_signatures of crash_noise is the main pings' gpu sub-process crash rate.
  std::vector<std::vector<double>> crash_noise, hang_noise;
  const auto gpu_column = static_cast<size_t>(o.crash_signatures);
  const double subprocess_gpu = o.subprocess_gpu_per_usage_hour;
  for (size_t b = 0; b < builds.size(); ++b) {
    crash_noise.emplace_back();
    hang_noise.emplace_back();
    for (int s = 0; s <= o.crash_signatures; ++s) crash_noise[b].push_back(r.LogNormal(0, o.build_noise));
    for (int s = 0; s < o.hang_signatures; ++s) hang_noise[b].push_back(r.LogNormal(0, o.build_noise));
  }
  // Plants on N are relative to the builds it is compared with (its own factor replaced).
  if (o.plants & kPlantSignatureSpike) {
    const auto s = static_cast<size_t>(kSpikeSignature);
    crash_noise[new_index][s] = o.spike_factor * RecentMean(crash_noise, new_index, s);
  }
  if (o.plants & kPlantHangSpike) {
    const auto s = static_cast<size_t>(kHangSpikeSignature);
    hang_noise[new_index][s] = o.hang_factor * RecentMean(hang_noise, new_index, s);
  }
  if (o.plants & kPlantGpuRegression) {
    crash_noise[new_index][gpu_column] = o.regression_factor * RecentMean(crash_noise, new_index, gpu_column);
  }

  uint64_t doc_counter = 0;
  auto dims_of = [&](const Build& b, const char* os) {
    Dimensions d;
    d.channel = o.channel;
    d.product = "Firefox";
    d.version = b.version;
    d.build_id = b.build_id;
    d.build_date = b.build_date;
    d.os = os;
    return d;
  };
  auto at = [&](int64_t hour_start) { return EventTime{hour_start + static_cast<int64_t>(r.Below(kHour))}; };
  auto client = [&] { return ClientId(r.Below(static_cast<uint64_t>(std::max<int64_t>(1, o.installs)))); };
  auto ping = [&](DocKind kind, const Build& b, const char* os, int64_t hour_start, int64_t usage_ms,
                  std::string install) {
    ScenarioRecord rec;
    rec.time = at(hour_start);
    rec.doc.kind = kind;
    rec.doc.dims = dims_of(b, os);
    rec.doc.usage_ms = usage_ms;
    if (kind == DocKind::kMain || o.bhr_client_ids) rec.doc.install_id = std::move(install);
    return rec;
  };
  auto add_hang = [&](ScenarioRecord& rec, const std::string& signature, int64_t us) {
    std::vector<HangRecord>& hangs = rec.doc.hangs;
    if (hangs.empty() || hangs.back().signature != signature) {
      HangRecord h;
      h.process = "parent";
      h.thread = "Gecko";
      h.stack = {"Startup::XRE_Main", "Events::ProcessGeckoEvents", signature};
      h.signature = signature;
      hangs.push_back(std::move(h));
    }
    hangs.back().hang_us += us;
    ++hangs.back().hang_count;
    rec.hang_durations_us.push_back(us);
  };
  auto hang_us = [&] { return (1500 + static_cast<int64_t>(r.Below(5000))) * 100; };  // 150.0 .. 649.9 ms
  auto add_crash = [&](const Build& b, const char* os, int64_t hour_start, std::string signature, CrashClass cls,
                       std::string install) {
    ScenarioRecord rec;
    rec.time = at(hour_start);
    rec.doc.kind = DocKind::kCrash;
    rec.doc.dims = dims_of(b, os);
    rec.doc.doc_id = fmt::format("scenario-{}-{}", o.seed, doc_counter++);
    CrashRecord c;
    c.crash_class = cls;
    c.process = ProcessOf(cls);
    c.startup = r.Chance(0.05);
    c.signature = std::move(signature);
    if (o.crash_install_ids) c.install_id = std::move(install);
    rec.doc.crash = std::move(c);
    records_.push_back(std::move(rec));
  };

  const int64_t last_hour = FloorHour(end_ms_);
  for (int64_t hour = FloorHour(start); hour <= last_hour; hour += kHour) {
    // Every record of this hour has its time in it: sorting the hour's records keeps the
    // whole list in time order.
    const size_t hour_begin = records_.size();
    const bool final_hour = hour == end_hour_start;
    for (size_t bi = 0; bi < builds.size(); ++bi) {
      const Build& b = builds[bi];
      if (b.release_ms > hour) continue;
      const double age_h = static_cast<double>(hour - b.release_ms) / kHour;
      const double early = age_h < static_cast<double>(o.early_hours) ? o.early_adopter_factor : 1.0;
      for (const OsShare& os : kOs) {
        const double usage = o.usage_per_hour * (b.early ? 0.05 : 1.0) * os.share * (0.9 + 0.2 * r.Uniform());
        const auto pings = static_cast<size_t>(std::max(1.0, std::ceil(usage / kUsagePerPing)));
        // Main pings: usage (whole seconds, as subsessionLength carries it) and the main
        // pings' gpu sub-process crash counts.
        const auto seconds = static_cast<int64_t>(std::llround(usage * 3600));
        std::vector<ScenarioRecord> main;
        for (size_t p = 0; p < pings; ++p) {
          const int64_t share =
              seconds / static_cast<int64_t>(pings) + (p == 0 ? seconds % static_cast<int64_t>(pings) : 0);
          main.push_back(ping(DocKind::kMain, b, os.name, hour, share * 1000, client()));
        }
        if (subprocess_gpu > 0 && !b.early) {
          const double rate = subprocess_gpu * crash_noise[bi][gpu_column] * early *
                              (b.is_new && (o.plants & kPlantBuildRegression) ? o.regression_factor : 1.0);
          for (int64_t k = Poisson(r, usage * rate); k > 0; --k) {
            ++main[r.Below(pings)].doc.subprocess_crashes.gpu;
          }
        }
        for (ScenarioRecord& m : main) records_.push_back(std::move(m));
        // bhr pings: bhr usage, and the hour's hangs spread over them.
        const auto ms = static_cast<int64_t>(std::llround(usage * kHour));
        std::vector<ScenarioRecord> bhr;
        for (size_t p = 0; p < pings; ++p) {
          const int64_t share =
              ms / static_cast<int64_t>(pings) + (p == 0 ? ms % static_cast<int64_t>(pings) : 0);
          bhr.push_back(ping(DocKind::kBhr, b, os.name, hour, share, client()));
        }
        if (!b.early) {
          for (int s = 0; s < o.hang_signatures; ++s) {
            const double rate = o.hangs_per_usage_hour * hang_share[static_cast<size_t>(s)] *
                                hang_noise[bi][static_cast<size_t>(s)] * early;
            const std::string signature = HangSignature(s);
            for (int64_t k = Poisson(r, usage * rate); k > 0; --k) {
              add_hang(bhr[r.Below(pings)], signature, hang_us());
            }
          }
        }
        for (ScenarioRecord& h : bhr) records_.push_back(std::move(h));
        // Crash reports.
        if (b.early) continue;
        for (int s = 0; s < o.crash_signatures; ++s) {
          double rate = o.crashes_per_usage_hour * crash_share[static_cast<size_t>(s)] *
                        crash_noise[bi][static_cast<size_t>(s)] * early;
          if (b.is_new && (o.plants & kPlantBuildRegression)) rate *= o.regression_factor;
          if (final_hour && s == kBurstSignature && (o.plants & kPlantOsBurst) &&
              std::string_view(os.name) == "Linux") {
            rate *= o.burst_factor;
          }
          const int64_t count = Poisson(r, usage * rate);
          for (int64_t k = 0; k < count; ++k) {
            add_crash(b, os.name, hour, CrashSignature(s), ClassOf(s),
                      fmt::format("{}", 1'700'000'000 + bi * 1'000'000 + r.Below(200'000)));
          }
        }
        if (b.is_new && (o.plants & kPlantNewSignature)) {
          const double rate = 60.0 / (o.usage_per_hour * static_cast<double>(o.new_build_age_hours));
          for (int64_t k = Poisson(r, usage * rate); k > 0; --k) {
            add_crash(b, os.name, hour, truth_.new_signature, CrashClass::kParent,
                      fmt::format("{}", 1'800'000'000 + r.Below(200'000)));
          }
        }
      }
      const int64_t storm_per_hour =
          std::max<int64_t>(1, o.storm_crashes / std::max<int64_t>(1, o.new_build_age_hours));
      if (b.is_new && (o.plants & kPlantInstallStorm)) {
        for (int64_t k = 0; k < storm_per_hour; ++k) {
          add_crash(b, "Linux", hour, truth_.storm_signature, CrashClass::kParent, "1799999999");
        }
      }
      if (b.is_new && (o.plants & kPlantHangStorm)) {
        // One install's bhr ping each hour (an hour of usage), full of one stack's hangs.
        ScenarioRecord storm = ping(DocKind::kBhr, b, "Linux", hour, kHour, ClientId(0xffffffffffULL));
        for (int64_t k = 0; k < storm_per_hour; ++k) add_hang(storm, truth_.hang_storm_signature, hang_us());
        records_.push_back(std::move(storm));
      }
      if (b.early && final_hour) {
        add_crash(b, "Windows_NT", hour, truth_.early_signature, CrashClass::kParent, "1811111111");
        add_crash(b, "Windows_NT", hour, truth_.early_signature, CrashClass::kParent, "1822222222");
      }
    }
    std::stable_sort(records_.begin() + static_cast<ptrdiff_t>(hour_begin), records_.end(),
                     [](const ScenarioRecord& a, const ScenarioRecord& b) { return a.time < b.time; });
  }
}

int64_t Scenario::FloorHour(int64_t ms) { return ms - ((ms % kHour) + kHour) % kHour; }

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
          for (const std::string& f : h.stack) w.String(f);
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
