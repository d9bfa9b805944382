// End to end through the real binaries: `seismo generate --kind scenario --plant P` writes a
// release timeline (main pings, bhr pings, Socorro processed crashes) and the alerts it
// should fire (--truth); `seismo replay` over it — parser, signature generator, shards,
// alert rules at the default settings — fires exactly those alerts and nothing else.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <set>
#include <tuple>
#include <vector>

#include "test_scale.h"

namespace seismo {
namespace {

// (rule, build, signature, os, scope)
using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;

std::string Text(simdjson::dom::element e) {
  return e.is_null() ? std::string() : std::string(std::string_view(e));
}

struct PlantCase {
  const char* plant;
  uint64_t seed;
  size_t expected;  // how many alerts the plant fires (the truth names them)
};

void PrintTo(const PlantCase& c, std::ostream* os) { *os << c.plant << " seed " << c.seed; }

class AlertReplay : public ::testing::TestWithParam<PlantCase> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing::TempDir()) /
           ("seismo-alert-replay-" + std::string(GetParam().plant) + "-" + std::to_string(GetParam().seed));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const char* name) const { return (dir_ / name).string(); }
  static int Run(const std::string& args) {
    return std::system((std::string(SEISMO_BINARY) + " " + args).c_str());
  }

  std::filesystem::path dir_;
};

// The alerts the truth names and the alerts replay fired, as keys.
struct Outcome {
  std::set<Key> expected, fired;
};

Outcome ReadOutcome(const std::string& truth_path, const std::string& output_path) {
  simdjson::dom::parser truth_parser, output_parser;
  simdjson::dom::element truth = truth_parser.load(truth_path);
  simdjson::dom::element output = output_parser.load(output_path);
  Outcome out;
  for (simdjson::dom::element e : truth["expected_alerts"].get_array()) {
    out.expected.insert(
        {Text(e["rule"]), Text(e["build"]), Text(e["signature"]), Text(e["os"]), Text(e["scope"])});
  }
  EXPECT_EQ(uint64_t(output["records"]["rejected_total"]), 0u) << "every scenario document parses";
  EXPECT_GT(uint64_t(output["records"]["crash"]), 20'000u);
  for (simdjson::dom::element a : output["alerts"].get_array()) {
    EXPECT_EQ(std::string_view(a["state"]), "firing");  // replay: one round, `for` = 1
    // The scope is the hang source or the crash class, when the rule has one.
    std::string scope;
    simdjson::dom::element e;
    if (a["source"].get(e) == simdjson::SUCCESS || a["process"].get(e) == simdjson::SUCCESS) scope = Text(e);
    out.fired.insert({Text(a["rule"]), Text(a["build"]), Text(a["signature"]), Text(a["os"]), scope});
  }
  return out;
}

TEST_P(AlertReplay, PlantFiresExactlyItsAlertsThroughGenerateAndReplay) {
  const PlantCase& c = GetParam();
  // A quarter of the default population: a quarter of the pings, the same crash and hang counts.
  ASSERT_EQ(Run("generate --kind scenario --plant " + std::string(c.plant) + " --seed " +
                std::to_string(c.seed) + " --scale 0.25 --truth " + Path("truth.json") + " --output " +
                Path("input.ndjson") + " 2>/dev/null"),
            0);
  ASSERT_EQ(Run("replay --quiet --output " + Path("output.json") + " " + Path("input.ndjson")), 0);
  const Outcome outcome = ReadOutcome(Path("truth.json"), Path("output.json"));
  EXPECT_EQ(outcome.expected.size(), c.expected) << "the truth names the plant's alerts";
  EXPECT_EQ(outcome.fired, outcome.expected) << c.plant << " seed " << c.seed;
}

// Crash reports without any install identity (no install_time, as some processed-crash
// exports have): the installs behind every crash selection are unknown, so the
// min_installs guard is skipped rather than blocking every crash rule (SPEC §5, ADR 0017),
// the planted alert fires, and says so: "installs": null and a note.
TEST(AlertReplayUnknownInstalls, APlantedBadReleaseWhoseCrashesCarryNoInstallIdFiresItsAlert) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "seismo-unknown-installs";
  std::filesystem::create_directories(dir);
  for (const PlantCase& c : {PlantCase{"crash_spike", 3, 1}, PlantCase{"new_signature", 4, 1}}) {
    SCOPED_TRACE(c.plant);
    const std::string input = (dir / "input.ndjson").string(), truth = (dir / "truth.json").string();
    const std::string output = (dir / "output.json").string();
    ASSERT_EQ(std::system((std::string(SEISMO_BINARY) + " generate --kind scenario --plant " + c.plant +
                           " --seed " + std::to_string(c.seed) + " --scale 0.25 --truth " + truth +
                           " 2>/dev/null | sed -e 's/\"install_time\":\"[0-9]*\",//' > " + input)
                              .c_str()),
              0);
    ASSERT_NE(std::system(("grep -q install_time " + input).c_str()), 0) << "install ids left";
    ASSERT_EQ(std::system(
                  (std::string(SEISMO_BINARY) + " replay --quiet --output " + output + " " + input).c_str()),
              0);
    const Outcome outcome = ReadOutcome(truth, output);
    EXPECT_EQ(outcome.expected.size(), c.expected);
    EXPECT_EQ(outcome.fired, outcome.expected);
    simdjson::dom::parser parser;
    for (simdjson::dom::element a : parser.load(output)["alerts"].get_array()) {
      EXPECT_TRUE(a["installs"].is_null());
      EXPECT_NE(Text(a["note"]).find("min_installs guard was skipped"), std::string::npos);
    }
  }
  std::filesystem::remove_all(dir);
}

// Options that belong to the other kind are usage errors (exit code 2), and a scenario is
// the same bytes for the same seed.
TEST(GenerateScenario, RefusesOptionsOfTheOtherKindsAndRepeatsItself) {
  auto exit_code = [](const std::string& args) {
    const int status =
        std::system((std::string(SEISMO_BINARY) + " generate " + args + " > /dev/null 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(exit_code("--kind scenario --count 5"), 2);
  EXPECT_EQ(exit_code("--kind scenario --pad-kb 4"), 2);
  EXPECT_EQ(exit_code("--kind scenario --scale 0"), 2);
  EXPECT_EQ(exit_code("--kind main --plant burst"), 2);
  EXPECT_EQ(exit_code("--kind crash --truth t.json"), 2);
  EXPECT_EQ(exit_code("--kind scenario --plant no_such_plant"), 2);
  const std::string dir = testing::TempDir();
  const std::string a = dir + "/scenario-a.ndjson", b = dir + "/scenario-b.ndjson";
  ASSERT_EQ(exit_code("--kind scenario --plant burst,hang_spike --seed 5 --scale 0.1 -o " + a), 0);
  ASSERT_EQ(exit_code("--kind scenario --plant hang_spike --plant burst --seed 5 --scale 0.1 -o " + b), 0);
  EXPECT_EQ(std::system(("cmp -s " + a + " " + b).c_str()), 0);
  EXPECT_GT(std::filesystem::file_size(a), 1'000'000u);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

std::vector<PlantCase> PlantCases() {
  const std::vector<PlantCase> all = {
      PlantCase{"crash_spike", 3, 1}, PlantCase{"new_signature", 4, 1}, PlantCase{"rate_regression", 5, 5},
      PlantCase{"hang_spike", 6, 1},  PlantCase{"burst", 7, 1},         PlantCase{"gpu_regression", 8, 1},
      // Healthy builds, and the guards: one install's storms, a build an hour old.
      PlantCase{"none", 9, 0}, PlantCase{"install_storm", 10, 0}, PlantCase{"hang_storm", 11, 0},
      PlantCase{"early_build", 12, 0}};
  // Under TSan (generate and replay ~30 s each there) a crash rule, the hang rule and a
  // healthy timeline: the replay's threads do the same for every plant, and every plant
  // runs in the other builds.
  if (test::kThreadSanitized) return {all[0], all[3], all[6]};
  return all;
}

INSTANTIATE_TEST_SUITE_P(
    Plants, AlertReplay, ::testing::ValuesIn(PlantCases()),
    [](const ::testing::TestParamInfo<PlantCase>& info) { return std::string(info.param.plant); });

}  // namespace
}  // namespace seismo
