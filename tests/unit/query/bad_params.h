// The table of 400 cases (tests/data/api/bad_params.tsv), shared by the
// parameter unit test and the test over the real HTTP server.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace seismo::testing {

struct BadCase {
  std::string path;   // "/api/v1/hangs"
  std::string query;  // raw query string
  std::string error;  // the whole {"error": ...} message
};

inline void PrintTo(const BadCase& c, std::ostream* os) { *os << c.path << "?" << c.query; }

inline std::vector<BadCase> LoadBadParams() {
  std::vector<BadCase> out;
  std::ifstream in(std::string(SEISMO_SOURCE_DIR) + "/tests/data/api/bad_params.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t a = line.find('\t');
    const size_t b = a == std::string::npos ? a : line.find('\t', a + 1);
    if (b == std::string::npos) {
      ADD_FAILURE() << "bad_params.tsv: not three tab-separated columns: " << line;
      continue;
    }
    out.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  EXPECT_GE(out.size(), 20u) << "bad_params.tsv not found or nearly empty";
  return out;
}

}  // namespace seismo::testing
