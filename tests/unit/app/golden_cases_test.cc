// Golden cases: tests/data/cases/<name>/{input.ndjson, config.toml, expected.json}.
// Each case replays its input with its config and must produce exactly the
// expected output. Adding a case needs no C++.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "seismo/app/replay.h"
#include "seismo/signature/generator.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(SEISMO_SOURCE_DIR) / "tests/data/cases")) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Re-serialise through simdjson's DOM so formatting differences do not matter.
std::string Canonical(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(json).get(e)) return "INVALID JSON: " + json;
  return simdjson::minify(e);
}

class GoldenCase : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCase, ReplayProducesTheExpectedOutput) {
  fs::path dir = fs::path(SEISMO_SOURCE_DIR) / "tests/data/cases" / GetParam();
  std::string config_path = fs::exists(dir / "config.toml") ? (dir / "config.toml").string() : "";
  auto config = LoadConfig(config_path);
  ASSERT_TRUE(config) << config.error().message();
  auto signatures = LoadSignatures(*config);
  ASSERT_TRUE(signatures) << signatures.error().message();
  for (size_t threads : {1u, 3u}) {
    config->ingest.threads = threads;
    config->aggregate.shards = threads;
    auto result = RunReplay(*config, {(dir / "input.ndjson").string()}, signatures->get(), {});
    ASSERT_TRUE(result) << result.error().message();
    std::string actual = ReplayOutputJson(*result->snapshot, result->counts);
    EXPECT_EQ(Canonical(actual), Canonical(Slurp(dir / "expected.json")))
        << "threads=" << threads << "\nactual:\n" << ReplayOutputJson(*result->snapshot, result->counts, "[]", 2);
  }
}

// A source is 16 bits: more inputs than a replay can tell apart are refused before any is read
// (as many as 65 535 are read, each at its turn: ReplayCli.MoreFilesThanTheOpenFileLimit...).
TEST(Replay, MoreInputsThanSourcesAreRefusedBeforeReading) {
  auto config = LoadConfig("");
  ASSERT_TRUE(config) << config.error().message();
  auto signatures = LoadSignatures(*config);
  ASSERT_TRUE(signatures) << signatures.error().message();
  const std::vector<std::string> inputs(
      65'536,
      (fs::path(SEISMO_SOURCE_DIR) / "tests/data/cases" / CaseNames().front() / "input.ndjson").string());
  auto result = RunReplay(*config, inputs, signatures->get(), {});
  ASSERT_FALSE(result);
  EXPECT_EQ(
      result.error().message(),
      "65536 inputs: a replay reads at most 65535 (concatenate some: `cat` or `zcat` into one, or `-` for "
      "stdin)");
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenCase, ::testing::ValuesIn(CaseNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace seismo
