// What the subcommands of seismo_bench share: the JSON line they print, the corpus
// loaded in memory, the topic a document goes to, percentiles and the signature lists.
//
// Threading: Line and Corpus belong to one thread; the functions are pure or read files.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seismo {
class SignatureGenerator;
}

namespace seismo::bench {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0);

[[noreturn]] void Die(const std::string& what);

// One JSON line: {"measure": name, k: v, ...}. Values are preformatted JSON.
class Line {
 public:
  explicit Line(const std::string& measure);
  Line& Num(const std::string& k, double v, int precision = 1);
  Line& Int(const std::string& k, uint64_t v);
  Line& Str(const std::string& k, const std::string& v);
  Line& Bool(const std::string& k, bool v);
  void Print();

 private:
  std::string s_;
};

// The corpus in memory, each document followed by SIMDJSON_PADDING bytes.
struct Corpus {
  std::string data;
  std::vector<std::pair<size_t, size_t>> docs;  // begin, length
  uint64_t bytes = 0;                           // document bytes (no newlines, no padding)
  std::string_view doc(size_t i) const { return {data.data() + docs[i].first, docs[i].second}; }
};

Corpus LoadCorpus(const std::vector<std::string>& files);

// The topic seismo's default configuration reads a document of this type from.
std::string TopicOf(std::string_view doc);

// The p-quantile (0..1) of `v`, nearest rank; 0 when empty.
double Percentile(std::vector<double> v, double p);

// The signature lists built into the binary.
std::unique_ptr<SignatureGenerator> Signatures();

}  // namespace seismo::bench
