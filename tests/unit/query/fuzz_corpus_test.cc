// Every file of fuzz/corpus/query through the query fuzz target's own body
// (fuzz/fuzz_targets.h QueryTarget): the seeds (the dashboard's requests, bad ones), and any
// input a fuzzing run found and saved there, are regression tests without a line of C++ each.
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

TEST(FuzzCorpus, EveryQueryCorpusFileIsAnsweredAsTheApiMay) {
  std::vector<fs::path> files;
  for (const auto& entry :
       fs::directory_iterator(fs::path(SEISMO_SOURCE_DIR) / "fuzz" / "corpus" / "query")) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 20u);
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(QueryTarget(ss.str()), "") << f.filename();
  }
}

}  // namespace
}  // namespace seismo::fuzz
