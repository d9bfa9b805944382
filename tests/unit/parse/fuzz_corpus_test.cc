// Every file of the fuzz corpora through the fuzz targets' own bodies
// (fuzz/fuzz_targets.h): the seeds, and any crash a fuzzing run found and
// saved there, are regression tests without a line of C++ per case.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace seismo::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> CorpusFiles(const std::string& target) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(SEISMO_SOURCE_DIR) / "fuzz" / "corpus" / target)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FuzzCorpus, EveryParseCorpusFileKeepsTheParsersContract) {
  std::vector<fs::path> files = CorpusFiles("parse");
  ASSERT_GE(files.size(), 20u);
  for (const fs::path& f : files) EXPECT_EQ(ParseTarget(Slurp(f)), "") << f.filename();
}

TEST(FuzzCorpus, EverySignatureCorpusFileKeepsTheSignatureInvariants) {
  std::vector<fs::path> files = CorpusFiles("signature");
  ASSERT_GE(files.size(), 20u);
  for (const fs::path& f : files) EXPECT_EQ(SignatureTarget(Slurp(f)), "") << f.filename();
}

TEST(FuzzCorpus, EveryAggregatesCorpusFileIsDecidedAndReencodesToAFixedPoint) {
  std::vector<fs::path> files = CorpusFiles("aggregates");
  ASSERT_GE(files.size(), 5u);
  for (const fs::path& f : files) EXPECT_EQ(AggregatesRecordTarget(Slurp(f)), "") << f.filename();
}

}  // namespace
}  // namespace seismo::fuzz
