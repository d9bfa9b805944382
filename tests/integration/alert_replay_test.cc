// End to end: scenario documents (main pings, bhr pings, Socorro processed crashes)
// through the real `seismo replay` binary - parser, signature generator, shards - and
// the alerts it writes into --output name exactly the planted problems.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "seismo/app/scenario.h"

namespace seismo {
namespace {

TEST(AlertReplay, PlantedBadBuildFiresItsAlertsInReplayOutput) {
  ScenarioOptions o;
  o.seed = 3;
  o.plants = kPlantSignatureSpike | kPlantNewSignature;
  o.usage_per_hour = 200;            // a smaller corpus (fewer pings) ...
  o.crashes_per_usage_hour = 0.2;    // ... with the same crash counts
  o.hangs_per_usage_hour = 0.2;
  o.baseline_builds = 3;
  Scenario s(o);
  const std::string dir = testing::TempDir();
  const std::string input = dir + "/alert_scenario.ndjson";
  const std::string output = dir + "/alert_scenario.json";
  {
    std::ofstream out(input);
    s.ForEachDocument([&](std::string&& doc) { out << doc << '\n'; });
  }
  const std::string cmd = std::string(SEISMO_BINARY) + " replay --quiet --output " + output + " " + input;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.load(output);
  EXPECT_EQ(uint64_t(root["records"]["rejected_total"]), 0u)
      << "every scenario document parses";
  std::set<std::tuple<std::string, std::string, std::string>> fired;
  for (simdjson::dom::element a : root["alerts"].get_array()) {
    EXPECT_EQ(std::string_view(a["state"]), "firing");
    auto text = [](simdjson::dom::element e) { return e.is_null() ? std::string() : std::string(std::string_view(e)); };
    fired.insert({text(a["rule"]), text(a["build"]), text(a["signature"])});
  }
  const std::set<std::tuple<std::string, std::string, std::string>> expected = {
      {"crash_signature_spike", s.truth().new_build_id, s.truth().spike_signature},
      {"new_crash_signature", s.truth().new_build_id, s.truth().new_signature},
  };
  EXPECT_EQ(fired, expected);
  std::remove(input.c_str());
  std::remove(output.c_str());
}

}  // namespace
}  // namespace seismo
