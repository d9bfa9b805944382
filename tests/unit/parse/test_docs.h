// Test documents: the reference examples and builders for variations.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace seismo::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string DataFile(const std::string& name) {
  return ReadFile(std::string(SEISMO_SOURCE_DIR) + "/tests/data/" + name);
}

// Replaces the first occurrence of `from` in `doc` (test precondition: present).
inline std::string Replace(std::string doc, const std::string& from, const std::string& to) {
  size_t pos = doc.find(from);
  if (pos == std::string::npos) return "REPLACE-FAILED:" + from;
  doc.replace(pos, from.size(), to);
  return doc;
}

// A minimal main ping with the given payload members (JSON text after "payload": {).
inline std::string MainPing(const std::string& payload, const std::string& build_id = "20261117090501") {
  return R"({"type":"main","id":"m1","application":{"buildId":")" + build_id +
         R"(","channel":"release","name":"Firefox","version":"146.0"},"environment":{"system":{"os":{"name":"Linux"}}},"payload":{)" +
         payload + "}}";
}

inline std::string BhrPing(const std::string& payload) {
  return R"({"type":"bhr","application":{"buildId":"20261117090501","channel":"nightly","name":"Firefox","version":"147.0a1"},"environment":{"system":{"os":{"name":"Windows_NT"}}},"payload":{)" +
         payload + "}}";
}

}  // namespace seismo::testing
