// The alert rules on generated release timelines (sim/scenario.h) with known truth, at the
// default thresholds: each planted problem fires exactly its alert, guards hold back what
// they should, and healthy builds with ordinary noise stay quiet across 50 seeds.
// (The same plants go through the real `seismo replay` in tests/integration/alert_replay_test.cc.)
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "seismo/aggregate/releases.h"
#include "seismo/aggregate/row_changes.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/alert/engine.h"
#include "seismo/query/builds_json.h"
#include "seismo/query/flame_diff.h"
#include "seismo/query/params.h"
#include "seismo/query/releases_json.h"
#include "seismo/sim/scenario.h"
#include "test_scale.h"

namespace seismo {
namespace {

using Fired = std::set<std::tuple<std::string, std::string, std::string, std::string>>;  // rule, build, signature, scope

std::vector<AlertCandidate> Evaluate(const Scenario& s, const AlertOptions& o = {}) {
  return EvaluateRules(*s.MakeSnapshot(), o);
}

Fired FiredOf(const std::vector<AlertCandidate>& candidates) {
  Fired out;
  for (const AlertCandidate& c : candidates) {
    if (c.holds) out.insert({std::string(AlertRuleName(c.key.rule)), c.key.build, c.key.signature, c.key.scope});
  }
  return out;
}

Fired FiredOf(const Scenario& s, const AlertOptions& o = {}) { return FiredOf(Evaluate(s, o)); }

const AlertCandidate* Find(const std::vector<AlertCandidate>& candidates, AlertRule rule,
                           const std::string& build, const std::string& signature) {
  for (const AlertCandidate& c : candidates) {
    if (c.key.rule == rule && c.key.build == build && c.key.signature == signature) return &c;
  }
  return nullptr;
}

ScenarioOptions Plant(uint32_t plants, uint64_t seed) {
  ScenarioOptions o;
  o.seed = seed;
  o.plants = plants;
  return o;
}

// The scenario's deltas that `keep` selects, aggregated by one ShardState as
// Scenario::MakeSnapshot does, for tests that change what a snapshot holds.
struct Aggregated {
  AggregateOptions options;
  std::shared_ptr<Symbols> symbols = std::make_shared<Symbols>();
  std::shared_ptr<const ShardSnapshot> shard;

  // The merged snapshot, after `edit` changed a copy of the shard's snapshot.
  std::shared_ptr<const Snapshot> Merge(const std::function<void(ShardSnapshot&)>& edit = {}) const {
    auto copy = std::make_shared<ShardSnapshot>(*shard);
    if (edit) edit(*copy);
    return MergeSnapshots({copy}, *symbols, options.bucket_ms, options.windows_ms, options.retention_ms, true,
                          symbols);
  }
};

Aggregated Aggregate(const Scenario& s, const std::function<bool(const Delta&)>& keep) {
  Aggregated out;
  ShardState state(out.options, out.symbols.get());
  s.ForEachDelta(*out.symbols, [&](Delta&& d) {
    if (keep(d)) state.Apply(d);
  });
  state.AdvanceTo(EventTime{s.end_ms()});
  out.shard = state.Snapshot();
  return out;
}

std::string Describe(const Fired& f) {
  std::string out;
  for (const auto& [rule, build, sig, scope] : f) out += rule + " " + build + " " + sig + " " + scope + "\n";
  return out.empty() ? "(nothing)" : out;
}

TEST(AlertRules, SignatureWhoseRateTriplesFiresSpikeForExactlyThatBuildAndSignature) {
  for (uint64_t seed : test::Seeds({1, 2, 3})) {
    Scenario s(Plant(kPlantSignatureSpike, seed));
    const Fired fired = FiredOf(s);
    const Fired expected = {{"crash_signature_spike", s.truth().new_build_id, s.truth().spike_signature, ""}};
    EXPECT_EQ(fired, expected) << "seed " << seed << ":\n" << Describe(fired);
  }
}

TEST(AlertRules, SpikeCarriesTheNumbersThatJustifyIt) {
  Scenario s(Plant(kPlantSignatureSpike, 4));
  size_t held = 0;
  for (const AlertCandidate& c : Evaluate(s)) {
    if (!c.holds) continue;
    ++held;
    const AlertNumbers& n = c.numbers;
    EXPECT_GE(n.count_new, 10);
    EXPECT_GT(n.count_base, 0);
    EXPECT_NEAR(n.exposure_new, 800 * 30, 800 * 30 * 0.06);  // usage hours of N, all OS
    // Age-matched: three baseline builds, each over its first 30 hours.
    EXPECT_NEAR(n.exposure_base, 3 * 800 * 30, 3 * 800 * 30 * 0.06);
    EXPECT_EQ(n.baseline_builds, (std::vector<std::string>{s.truth().baseline_build_ids[3],
                                                           s.truth().baseline_build_ids[2],
                                                           s.truth().baseline_build_ids[1]}));
    ASSERT_TRUE(n.ratio && n.p_value && n.p_adjusted && n.installs);
    EXPECT_GT(*n.ratio, 2.2);
    EXPECT_LT(*n.ratio, 4.0);
    EXPECT_LT(*n.p_adjusted, 0.001);
    EXPECT_GE(*n.p_adjusted, *n.p_value);
    EXPECT_GT(*n.installs, 50);
    // The build-to-build variation estimated from the baseline builds (noise sigma 0.1).
    EXPECT_GT(n.dispersion, 0.002);
    EXPECT_LT(n.dispersion, 0.03);
    EXPECT_EQ(n.version, s.truth().new_version);
    EXPECT_NEAR(n.age_hours, 30, 1);
  }
  EXPECT_EQ(held, 1u);
}

TEST(AlertRules, BrandNewSignatureFiresNewCrashSignature) {
  for (uint64_t seed : test::Seeds({1, 2})) {
    Scenario s(Plant(kPlantNewSignature, seed));
    const Fired fired = FiredOf(s);
    const Fired expected = {{"new_crash_signature", s.truth().new_build_id, s.truth().new_signature, ""}};
    EXPECT_EQ(fired, expected) << "seed " << seed << ":\n" << Describe(fired);
  }
}

TEST(AlertRules, WholeBuildRegressionFiresCrashRateRegressionPerClassAndNoSpikes) {
  for (uint64_t seed : test::Seeds({5, 6})) {
    Scenario s(Plant(kPlantBuildRegression, seed));
    const std::vector<AlertCandidate> c = Evaluate(s);
    Fired expected;
    for (const char* cls : {"parent", "content", "content_shutdown", "gpu", "startup"}) {
      expected.insert({"crash_rate_regression", s.truth().new_build_id, "", cls});
    }
    EXPECT_EQ(FiredOf(c), expected) << "seed " << seed << ":\n" << Describe(FiredOf(c));
    // Every signature tripled with its class: each is tested against the rise of the rest of
    // its class, so none is a spike of its own.
    const AlertCandidate* top =
        Find(c, AlertRule::kCrashSignatureSpike, s.truth().new_build_id, Scenario::CrashSignature(0));
    ASSERT_NE(top, nullptr);
    EXPECT_GT(*top->numbers.ratio, 2.5);
    EXPECT_FALSE(top->holds);
  }
  // The same timeline without the regression: nothing fires.
  EXPECT_EQ(FiredOf(Scenario(Plant(0, 5))), Fired{});
}

TEST(AlertRules, HangStackThatDoublesFiresHangSpikeAtTheDefaults) {
  for (uint64_t seed : test::Seeds({1, 2, 3})) {
    Scenario s(Plant(kPlantHangSpike, seed));
    const std::vector<AlertCandidate> c = Evaluate(s);
    const Fired expected = {{"hang_spike", s.truth().new_build_date, s.truth().hang_signature, "bhr"}};
    EXPECT_EQ(FiredOf(c), expected) << "seed " << seed << ":\n" << Describe(FiredOf(c));
    const AlertCandidate* h =
        Find(c, AlertRule::kHangSpike, s.truth().new_build_date, s.truth().hang_signature);
    ASSERT_NE(h, nullptr);
    EXPECT_GE(*h->numbers.ratio, 2.0);
    ASSERT_TRUE(h->numbers.installs);  // the scenario's bhr pings carry client ids
    EXPECT_GT(*h->numbers.installs, 100);
    EXPECT_GT(h->numbers.dispersion, 0);
  }
}

// Every candidate of a round, number for number (doubles by their bits).
std::vector<std::string> Exactly(const std::vector<AlertCandidate>& candidates) {
  std::vector<std::string> out;
  for (const AlertCandidate& c : candidates) {
    Alert a;
    a.key = c.key;
    a.numbers = c.numbers;
    const AlertNumbers& n = c.numbers;
    out.push_back(AlertJson(a) + (c.holds ? " holds " : " ") +
                  fmt::format("{:a} {:a} {:a} {:a}", n.ratio.value_or(-1), n.p_value.value_or(-1),
                              n.p_adjusted.value_or(-1), n.dispersion));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A build index made from the previous snapshot's (Snapshot::BuildsFrom, as the warm-up makes
// it: each build's hang series in another order than a full index's) gives the alerts the full
// index gives, number for number, and the same flame-graph diff, /builds and Releases view: no
// reader of a build's hang series depends on their order (releases.h BuildSeries).
TEST(AlertRules, ABuildIndexMadeFromThePreviousOneGivesWhatTheFullOneGives) {
  Scenario s(Plant(kPlantHangSpike, 1));
  AggregateOptions options;
  auto symbols = std::make_shared<Symbols>();
  ShardState state(options, symbols.get());
  std::vector<Delta> deltas;
  s.ForEachDelta(*symbols, [&](Delta&& d) { deltas.push_back(std::move(d)); });
  auto merged = [&] {
    return MergeSnapshots({state.Snapshot()}, *symbols, options.bucket_ms, options.windows_ms,
                          options.retention_ms, true, symbols);
  };
  // All but every 50th of the last fifth of the deltas, then those: about 0.4 % of them.
  const size_t late = deltas.size() * 4 / 5;
  for (size_t i = 0; i < deltas.size(); ++i) {
    if (i < late || i % 50 != 0) state.Apply(deltas[i]);
  }
  const std::shared_ptr<const Snapshot> before = merged();
  before->Builds();
  for (size_t i = late; i < deltas.size(); i += 50) state.Apply(deltas[i]);
  state.AdvanceTo(EventTime{s.end_ms()});
  const std::shared_ptr<const Snapshot> carried = merged();
  const RowChanges changes = ChangedRows(*before, *carried, Table::kHangs);
  ASSERT_FALSE(changes.added.empty());
  ASSERT_TRUE(carried->BuildsFrom(*before, changes.removed, changes.added));
  const std::shared_ptr<const Snapshot> full = merged();  // the same series, its index made in full
  ASSERT_EQ(full->table(Table::kHangs), carried->table(Table::kHangs));
  // Not vacuous: some build lists its hang series in another order.
  bool reordered = false;
  const BuildIndex &a = carried->Builds(), &b = full->Builds();
  ASSERT_EQ(a.hang_builds.size(), b.hang_builds.size());
  for (size_t i = 0; i < a.hang_builds.size(); ++i)
    reordered |= a.hang_builds[i].hangs != b.hang_builds[i].hangs;
  EXPECT_TRUE(reordered);

  for (const AlertOptions& o : {AlertOptions{}, [] {
                                  AlertOptions per_os;
                                  per_os.per_os = true;
                                  return per_os;
                                }()}) {
    const std::vector<AlertCandidate> got = EvaluateRules(*carried, o);
    EXPECT_EQ(Exactly(got), Exactly(EvaluateRules(*full, o)));
    EXPECT_NE(Find(got, AlertRule::kHangSpike, s.truth().new_build_date, s.truth().hang_signature), nullptr);
  }
  auto query = [&](Endpoint e, const std::string& raw) {
    return ParseQuery(e, ParseQueryString(raw).value(), carried->windows_ms).value();
  };
  for (const std::string& raw : {"channel=" + s.truth().channel,
                                 "channel=" + s.truth().channel + "&signature=" + s.truth().hang_signature}) {
    const Query q = query(Endpoint::kHangsFlameDiff, raw);
    EXPECT_EQ(FlamegraphDiffJson(*carried, q, BaselinePolicy{}),
              FlamegraphDiffJson(*full, q, BaselinePolicy{}))
        << raw;
  }
  const Query builds = query(Endpoint::kBuilds, "limit=200");
  EXPECT_EQ(BuildsJson(*carried, builds), BuildsJson(*full, builds));
  const Query releases = query(Endpoint::kReleases, "channel=" + s.truth().channel);
  EXPECT_EQ(ReleasesJson(*carried, releases, BaselinePolicy{}),
            ReleasesJson(*full, releases, BaselinePolicy{}));
}

TEST(AlertRules, HangStormFromOneInstallDoesNotFire) {
  Scenario s(Plant(kPlantHangStorm, 6));
  EXPECT_EQ(FiredOf(s), Fired{});
  // The installs guard is what holds it back.
  AlertOptions one_install;
  one_install.min_installs = 1;
  const Fired fired = FiredOf(s, one_install);
  EXPECT_TRUE(fired.count({"hang_spike", s.truth().new_build_date, s.truth().hang_storm_signature, "bhr"}))
      << Describe(fired);
}

// Mozilla's bhr pings carry no clientId: the installs behind a hang are unknown, the alert
// says so (installs null) and the guard cannot apply (ADR 0006).
TEST(AlertRules, BhrPingsWithoutClientIdsLeaveHangInstallsUnknown) {
  ScenarioOptions o = Plant(kPlantHangSpike | kPlantHangStorm, 7);
  o.bhr_client_ids = false;
  Scenario s(o);
  const std::vector<AlertCandidate> c = Evaluate(s);
  const AlertCandidate* h =
      Find(c, AlertRule::kHangSpike, s.truth().new_build_date, s.truth().hang_signature);
  ASSERT_NE(h, nullptr);
  EXPECT_TRUE(h->holds);
  EXPECT_FALSE(h->numbers.installs);
  const AlertCandidate* storm =
      Find(c, AlertRule::kHangSpike, s.truth().new_build_date, s.truth().hang_storm_signature);
  ASSERT_NE(storm, nullptr);
  EXPECT_TRUE(storm->holds);
  EXPECT_FALSE(storm->numbers.installs);
}

// Crash reports without install_time: the installs behind every crash selection are
// unknown. The min_installs guard is skipped instead of blocking every crash rule (SPEC §5,
// ADR 0017): each planted problem fires exactly its alert, which says installs null.
TEST(AlertRules, CrashesWithoutInstallIdsFireExactlyThePlantedAlertsWithInstallsUnknown) {
  ScenarioOptions o = Plant(kPlantSignatureSpike | kPlantNewSignature, 3);
  o.crash_install_ids = false;
  Scenario s(o);
  const std::vector<AlertCandidate> c = Evaluate(s);
  const Fired expected = {{"crash_signature_spike", s.truth().new_build_id, s.truth().spike_signature, ""},
                          {"new_crash_signature", s.truth().new_build_id, s.truth().new_signature, ""}};
  EXPECT_EQ(FiredOf(c), expected) << Describe(FiredOf(c));
  for (const AlertCandidate& candidate : c) {
    if (candidate.holds) EXPECT_FALSE(candidate.numbers.installs) << AlertRuleName(candidate.key.rule);
  }
  // The engine counts the candidates it tested without the guard, and each alert says why.
  AlertEngine engine(AlertOptions{});
  engine.Evaluate(*s.MakeSnapshot());
  EXPECT_GE(engine.stats().installs_unknown, 2u);
  for (const Alert& a : engine.Alerts()) {
    const std::string json = AlertJson(a);
    EXPECT_NE(json.find(R"("installs":null,"note":"installs unknown: )"), std::string::npos) << json;
  }
}

TEST(AlertRules, OneHourOsBurstFiresBurstForThatOsAndSignature) {
  for (uint64_t seed : test::Seeds({1, 2})) {
    Scenario s(Plant(kPlantOsBurst, seed));
    std::set<std::tuple<std::string, std::string, std::string>> fired;
    for (const AlertCandidate& c : Evaluate(s)) {
      if (c.holds) fired.insert({std::string(AlertRuleName(c.key.rule)), c.key.os, c.key.signature});
    }
    const std::set<std::tuple<std::string, std::string, std::string>> expected = {
        {"burst", s.truth().burst_os, s.truth().burst_signature}};
    EXPECT_EQ(fired, expected) << "seed " << seed;
  }
}

// Crashes arrive through another topic than usage and can run ahead of it. A burst
// window that holds crashes of minutes whose usage has not arrived must not fire.
TEST(AlertRules, BurstWaitsForUsageThatLagsBehindCrashes) {
  constexpr int64_t kLag = 45 * 60'000;
  for (uint64_t seed : test::Seeds({1, 2, 3})) {
    Scenario s(Plant(0, seed));
    const Aggregated aggregated = Aggregate(s, [&](const Delta& d) {
      return d.table() != Table::kBuildUsage || d.time.ms <= s.end_ms() - kLag;  // the rest: not consumed yet
    });
    auto lagging = aggregated.Merge();
    EXPECT_LE(lagging->table_time_ms[static_cast<size_t>(Table::kBuildUsage)], s.end_ms() - kLag);
    std::set<std::string> bursts;
    for (const AlertCandidate& c : EvaluateRules(*lagging, {})) {
      if (c.holds && c.key.rule == AlertRule::kBurst) bursts.insert(c.key.os + " " + c.key.signature);
    }
    EXPECT_TRUE(bursts.empty()) << "seed " << seed << ": " << *bursts.begin();

    // The control: reading up to the stream time instead sees a burst that is not there.
    auto blind = aggregated.Merge([](ShardSnapshot& shard) { shard.table_time_ms = MakeTableTimes(); });
    size_t blind_bursts = 0;
    for (const AlertCandidate& c : EvaluateRules(*blind, {}))
      blind_bursts += c.holds && c.key.rule == AlertRule::kBurst;
    EXPECT_GT(blind_bursts, 0u) << "seed " << seed;
  }
}

// The same for the new build's crash rate: main pings (usage) consumed hours behind the
// crash reports make a healthy young build look several times worse.
TEST(AlertRules, RegressionWaitsForUsageThatLagsBehindCrashes) {
  constexpr int64_t kLag = 15 * 3'600'000;
  for (uint64_t seed : test::Seeds({1, 2})) {
    Scenario s(Plant(0, seed));
    const Aggregated aggregated = Aggregate(s, [&](const Delta& d) {
      return d.table() != Table::kBuildUsage || d.time.ms <= s.end_ms() - kLag;  // the rest: not consumed yet
    });
    auto lagging = aggregated.Merge();
    EXPECT_EQ(FiredOf(EvaluateRules(*lagging, {})), Fired{}) << "seed " << seed;

    // The control: judging the build up to the stream time sees a regression that is not there.
    auto blind = aggregated.Merge([](ShardSnapshot& shard) { shard.table_time_ms = MakeTableTimes(); });
    const Fired blind_fired = FiredOf(EvaluateRules(*blind, {}));
    const bool regression = std::any_of(blind_fired.begin(), blind_fired.end(), [&](const auto& f) {
      return std::get<0>(f) == "crash_rate_regression" && std::get<1>(f) == s.truth().new_build_id;
    });
    EXPECT_TRUE(regression) << "seed " << seed << ":\n" << Describe(blind_fired);
  }
}

TEST(AlertRules, CrashStormFromOneInstallDoesNotFire) {
  Scenario s(Plant(kPlantInstallStorm, 6));
  EXPECT_EQ(FiredOf(s), Fired{});
  // The installs guard is what holds it back.
  AlertOptions one_install;
  one_install.min_installs = 1;
  EXPECT_TRUE(FiredOf(s, one_install).count({"new_crash_signature", s.truth().new_build_id, s.truth().storm_signature, ""}));
}

TEST(AlertRules, EarlyBuildWithTwoCrashesDoesNotFire) {
  Scenario s(Plant(kPlantEarlyBuild, 7));
  EXPECT_EQ(FiredOf(s), Fired{});
  // The minimum counts are what hold it back.
  AlertOptions tiny;
  tiny.min_new_count = 2;
  tiny.min_installs = 1;
  EXPECT_TRUE(FiredOf(s, tiny).count({"new_crash_signature", s.truth().early_build_id, s.truth().early_signature, ""}))
      << Describe(FiredOf(s, tiny));
}

TEST(AlertRules, NewBuildIsComparedWithTheSameAgeOfItsBaseline) {
  // Early adopters crash four times as often during a build's first day. N is 20 hours
  // old: against the first 20 hours of its baselines it is ordinary; against their whole
  // lives (mostly past their first day) it looks like a regression.
  ScenarioOptions so = Plant(0, 8);
  so.early_adopter_factor = 4.0;
  so.new_build_age_hours = 20;
  Scenario s(so);
  EXPECT_EQ(FiredOf(s), Fired{});
  AlertOptions whole_life;
  whole_life.age_matched = false;
  const Fired fired = FiredOf(s, whole_life);
  EXPECT_TRUE(fired.count({"crash_rate_regression", s.truth().new_build_id, "", "parent"})) << Describe(fired);
}

// A build is new for new_build_days after its first ping; older builds are not evaluated
// at all, however bad they are.
TEST(AlertRules, BuildOlderThanNewBuildDaysIsNotEvaluatedAsNew) {
  ScenarioOptions so = Plant(kPlantSignatureSpike | kPlantHangSpike, 9);
  so.new_build_age_hours = 8 * 24;  // N is eight days old, new_build_days is 7
  Scenario s(so);
  for (const AlertCandidate& c : Evaluate(s)) {
    EXPECT_NE(c.key.build, s.truth().new_build_id) << AlertRuleName(c.key.rule) << " " << c.key.signature;
    EXPECT_NE(c.key.build, s.truth().new_build_date) << AlertRuleName(c.key.rule) << " " << c.key.signature;
  }
  // The control: counted as new for nine days, the same build fires both planted alerts.
  AlertOptions nine_days;
  nine_days.new_build_days = 9;
  const Fired fired = FiredOf(s, nine_days);
  EXPECT_TRUE(fired.count({"crash_signature_spike", s.truth().new_build_id, s.truth().spike_signature, ""}))
      << Describe(fired);
  EXPECT_TRUE(fired.count({"hang_spike", s.truth().new_build_date, s.truth().hang_signature, "bhr"}))
      << Describe(fired);
}

// One earlier build cannot tell a regression from the ordinary difference between two
// healthy builds: the second build of a channel is not evaluated until min_baseline_builds.
TEST(AlertRules, BuildWithFewerBaselineBuildsThanTheMinimumIsNotEvaluated) {
  ScenarioOptions so = Plant(0, 10);
  so.baseline_builds = 3;  // the second build is still new at the end
  Scenario s(so);
  const std::string second = s.truth().baseline_build_ids[1];
  size_t with_one_baseline = 0;
  for (const AlertCandidate& c : Evaluate(s)) {
    if (c.key.rule == AlertRule::kBurst) continue;
    EXPECT_GE(c.numbers.baseline_builds.size(), 2u) << AlertRuleName(c.key.rule) << " " << c.key.build;
    EXPECT_NE(c.key.build, second);
  }
  AlertOptions one;
  one.min_baseline_builds = 1;
  for (const AlertCandidate& c : Evaluate(s, one)) with_one_baseline += c.key.build == second;
  EXPECT_GT(with_one_baseline, 10u);
}

TEST(AlertRules, PerOsBaselinesKeyAlertsByOs) {
  AlertOptions o;
  o.per_os = true;
  Scenario s(Plant(kPlantSignatureSpike, 9));
  std::set<std::string> os_names;
  for (const AlertCandidate& c : Evaluate(s, o)) {
    if (!c.holds) continue;
    EXPECT_EQ(c.key.signature, s.truth().spike_signature);
    os_names.insert(c.key.os);
  }
  EXPECT_TRUE(os_names.count("Windows_NT"));  // 72 % of the users: enough crashes alone
}

TEST(AlertRules, CrashShareExposureWithoutMainPings) {
  // A deployment with crash reports only: exposure falls back to the build's crash count,
  // where a signature's share of the crashes still triples.
  Scenario s(Plant(kPlantSignatureSpike, 10));
  auto snap = Aggregate(s, [](const Delta&) { return true; }).Merge([](ShardSnapshot& shard) {
    shard.pages[static_cast<size_t>(Table::kBuildUsage)]
        .clear();  // the build usage rows, not their table time
  });
  const std::vector<AlertCandidate> c = EvaluateRules(*snap, AlertOptions{});
  const Fired fired = FiredOf(c);
  EXPECT_TRUE(fired.count({"crash_signature_spike", s.truth().new_build_id, s.truth().spike_signature, ""}))
      << Describe(fired);
  for (const AlertCandidate& x : c) {
    if (x.key.rule != AlertRule::kHangSpike) EXPECT_EQ(x.numbers.exposure, ExposureMode::kCrashShare);
  }
}

// SPEC §3.3: gpu crashes also come from main pings' SUBPROCESS_CRASHES_WITH_DUMP. The gpu
// class of crash_rate_regression counts them as /api/v1/builds does.
TEST(AlertRules, GpuRegressionCountsMainPingSubprocessCrashesAsTheBuildsApiDoes) {
  ScenarioOptions so = Plant(kPlantGpuRegression, 11);
  so.subprocess_gpu_per_usage_hour = 0.01;  // ~8 per build-hour, against ~2 gpu crash reports
  Scenario s(so);
  const auto snap = s.MakeSnapshot();
  const std::vector<AlertCandidate> c = EvaluateRules(*snap, AlertOptions{});
  EXPECT_EQ(FiredOf(c), (Fired{{"crash_rate_regression", s.truth().new_build_id, "", "gpu"}}))
      << Describe(FiredOf(c));

  auto params = ParseQueryString("window=all&limit=1000");
  ASSERT_TRUE(params);
  auto q = ParseQuery(Endpoint::kBuilds, *params, snap->windows_ms);
  ASSERT_TRUE(q);
  simdjson::dom::parser parser;
  const std::string json = BuildsJson(*snap, *q);
  int64_t api_gpu = -1;
  for (simdjson::dom::element b : parser.parse(json)["builds"].get_array()) {
    if (std::string_view(b["build_id"]) == s.truth().new_build_id) api_gpu = int64_t(b["crashes"]["gpu"]);
  }
  const AlertCandidate* gpu = nullptr;
  for (const AlertCandidate& x : c) {
    if (x.key.rule == AlertRule::kCrashRateRegression && x.key.scope == "gpu" &&
        x.key.build == s.truth().new_build_id)
      gpu = &x;
  }
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->numbers.count_new, api_gpu);
  EXPECT_GT(api_gpu, 3 * static_cast<int64_t>(0.01 * 800 * 30));  // mostly main-ping counts, tripled
  // Its installs include the main pings that reported the sub-process crashes.
  EXPECT_GT(*gpu->numbers.installs, gpu->numbers.count_new / 2);

  // The same timeline without the plant: nothing fires.
  ScenarioOptions healthy = so;
  healthy.plants = 0;
  EXPECT_EQ(FiredOf(Scenario(healthy)), Fired{});
}

// "Ordinary noise": each (build, signature) rate carries a log-normal factor of sigma 0.1,
// so a healthy build's signature rate differs from the builds before it by up to ±20 %
// (two standard deviations), with Poisson counts on top (ADR 0006).
TEST(AlertRules, FiftySeedsOfHealthyBuildsFireNothing) {
  double smallest_p = 1.0;
  size_t tested = 0, dispersed = 0;
  const uint64_t seeds = test::Scaled(50, 10);  // fifty in optimised builds
  for (uint64_t seed = 100; seed < 100 + seeds; ++seed) {
    ScenarioOptions so = Plant(0, seed);
    so.baseline_builds = 3;  // smaller corpora: ~40 % less data per seed
    Scenario s(so);
    EXPECT_DOUBLE_EQ(so.build_noise, 0.10);
    const std::vector<AlertCandidate> c = Evaluate(s);
    tested += c.size();
    for (const AlertCandidate& x : c) {
      if (x.numbers.p_adjusted) smallest_p = std::min(smallest_p, *x.numbers.p_adjusted);
      dispersed += x.numbers.dispersion > 0;
    }
    EXPECT_EQ(FiredOf(c), Fired{}) << "seed " << seed;
  }
  EXPECT_GT(tested, seeds * 20);     // the rules really ran: many tests per seed
  EXPECT_GT(dispersed, seeds * 10);  // with the build-to-build variation estimated
  RecordProperty("smallest_adjusted_p", std::to_string(smallest_p));
  std::printf("healthy seeds: %zu tests, smallest adjusted p %.3g\n", tested, smallest_p);
}

// What keeps healthy builds quiet when they differ: the per-signature tests allow for the
// build-to-build variation the baseline builds show. Treated as plain Poisson counts, the
// ordinary variation of large signatures is "significant" by the dozen and only
// min_ratio stands between it and an alert.
TEST(AlertRules, EstimatedOverdispersionStopsCallingOrdinaryVariationSignificant) {
  AlertOptions poisson;
  poisson.overdispersion = Overdispersion::kNone;
  size_t significant_poisson = 0, significant_estimated = 0;
  auto significant = [](const std::vector<AlertCandidate>& c) {
    size_t n = 0;
    for (const AlertCandidate& x : c) {
      const bool per_signature =
          x.key.rule == AlertRule::kCrashSignatureSpike || x.key.rule == AlertRule::kHangSpike;
      n += per_signature && x.numbers.p_adjusted && *x.numbers.p_adjusted < 0.001;
    }
    return n;
  };
  for (uint64_t seed = 200; seed < 206; ++seed) {
    ScenarioOptions so = Plant(0, seed);
    so.baseline_builds = 3;
    so.build_noise = 0.15;
    Scenario s(so);
    const auto snap = s.MakeSnapshot();
    const std::vector<AlertCandidate> estimated = EvaluateRules(*snap, AlertOptions{});
    EXPECT_EQ(FiredOf(estimated), Fired{}) << "seed " << seed;
    significant_estimated += significant(estimated);
    significant_poisson += significant(EvaluateRules(*snap, poisson));
  }
  std::printf("significant: %zu as Poisson, %zu with the estimate\n", significant_poisson,
              significant_estimated);
  EXPECT_GE(significant_poisson, 15u);
  EXPECT_LE(significant_estimated, significant_poisson / 10);
}

}  // namespace
}  // namespace seismo
