// NestsDeeperThan (the too_deep pre-check) against a naive byte-at-a-time
// model, on random documents built from quotes, backslashes and brackets so
// that strings, escapes and nesting straddle its 64-byte blocks.
#include "seismo/parse/nesting.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace seismo::parse_internal {
namespace {

// Model: depth of brackets outside strings; a backslash in a string escapes the next byte.
bool NaiveNestsDeeperThan(const std::string& s, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

TEST(NestsDeeperThan, AgreesWithTheNaiveModelOnRandomDocuments) {
  std::mt19937_64 rng(7);
  const std::string alphabets[] = {"\"\\{[]}a", "{[a\"", "{[]}ab\"", "\\\"a{"};
  for (int n = 0; n < 20000; ++n) {
    const std::string& alphabet = alphabets[n % 4];
    std::string doc(rng() % 400, ' ');
    for (char& c : doc) c = alphabet[rng() % alphabet.size()];
    size_t max_depth = rng() % 40;
    ASSERT_EQ(NestsDeeperThan(doc, max_depth), NaiveNestsDeeperThan(doc, max_depth)) << doc << " " << max_depth;
  }
}

// The parse stage is built for x86-64-v3 with PCLMUL (CMakeLists.txt); unit_parse_portable
// builds json_util.cc again for baseline x86-64 (tests/CMakeLists.txt), so the tests above
// also run over the SSE2 blocks and the shifted prefix XOR.
TEST(NestsDeeperThan, RunsTheKernelItsBuildAskedFor) {
#if defined(SEISMO_EXPECTED_DEPTH_KERNEL)
  EXPECT_EQ(DepthScanKernel(), SEISMO_EXPECTED_DEPTH_KERNEL);
#else
  EXPECT_FALSE(DepthScanKernel().empty());
#endif
}

TEST(NestsDeeperThan, BracketsInsideStringsDoNotCount) {
  std::string doc = "{\"k\":\"" + std::string(300, '[') + "\\\"" + std::string(300, '{') + "\"}";
  EXPECT_FALSE(NestsDeeperThan(doc, 2));
  EXPECT_TRUE(NestsDeeperThan(std::string(100, '[') + std::string(100, ']'), 99));
  EXPECT_FALSE(NestsDeeperThan(std::string(100, '[') + std::string(100, ']'), 100));
}

}  // namespace
}  // namespace seismo::parse_internal
