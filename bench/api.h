// seismo_bench api: the API's latency while the daemon ingests at full speed, with a
// given number of live series, and its freshness (issue 19, SPEC §8).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace seismo::bench {

struct ApiArgs {
  double seconds = 10;             // how long the load runs, once the series are live
  size_t series = 0;               // live hang series made before the load starts (besides the corpus')
  bool warm = true;                // the publisher builds the default answers (false: the first request does)
  std::vector<std::string> files;  // the corpus produced over and over while the load runs
};

// "--seconds S --series N [--no-warm] FILE..."; nullopt on a bad argument.
std::optional<ApiArgs> ParseApiArgs(const std::vector<std::string>& args);
int Api(const ApiArgs& args);

}  // namespace seismo::bench
