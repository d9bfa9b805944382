#include "common.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "seismo/signature/generator.h"

namespace seismo::bench {

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void Die(const std::string& what) {
  std::fprintf(stderr, "seismo_bench: %s\n", what.c_str());
  std::exit(1);
}

Line::Line(const std::string& measure) { s_ = "{\"measure\":\"" + measure + "\""; }

Line& Line::Num(const std::string& k, double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  s_ += ",\"" + k + "\":" + buf;
  return *this;
}

Line& Line::Int(const std::string& k, uint64_t v) {
  s_ += ",\"" + k + "\":" + std::to_string(v);
  return *this;
}

Line& Line::Str(const std::string& k, const std::string& v) {
  s_ += ",\"" + k + "\":\"" + v + "\"";
  return *this;
}

Line& Line::Bool(const std::string& k, bool v) {
  s_ += ",\"" + k + "\":" + (v ? "true" : "false");
  return *this;
}

void Line::Print() {
  std::printf("%s}\n", s_.c_str());
  std::fflush(stdout);
}

Corpus LoadCorpus(const std::vector<std::string>& files) {
  Corpus c;
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) Die("cannot read " + f);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      c.docs.emplace_back(c.data.size(), line.size());
      c.data += line;
      c.data.append(simdjson::SIMDJSON_PADDING, ' ');
      c.bytes += line.size();
    }
  }
  return c;
}

std::string TopicOf(std::string_view doc) {
  if (doc.find("\"type\":\"main\"") != std::string_view::npos) return "telemetry.main";
  if (doc.find("\"type\":\"bhr\"") != std::string_view::npos) return "telemetry.bhr";
  if (doc.find("\"type\":\"crash\"") != std::string_view::npos) return "telemetry.crash";
  return "socorro.processed";
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

std::unique_ptr<SignatureGenerator> Signatures() {
  auto gen = SignatureGenerator::LoadDefault();
  if (!gen) Die(gen.error().message());
  return std::move(*gen);
}

}  // namespace seismo::bench
