// Helpers shared by the signature unit tests: the default generator and a
// one-call "crash-data JSON -> result".
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "seismo/parse/crash_parser.h"
#include "seismo/signature/generator.h"

namespace seismo::testing_util {

inline const SignatureGenerator& DefaultGenerator() {
  static std::unique_ptr<SignatureGenerator> gen = std::move(SignatureGenerator::LoadDefault()).value();
  return *gen;
}

// Generates from a crash-data dict given as JSON text.
inline SignatureResult Generate(std::string_view crash_data_json) {
  ParseResult<CrashData> data = CrashDataFromJson(crash_data_json);
  EXPECT_TRUE(data.ok()) << crash_data_json;
  if (!data.ok()) return {};
  return DefaultGenerator().Generate(data.value());
}

inline std::string Sig(std::string_view crash_data_json) { return Generate(crash_data_json).signature; }

// A one-thread crash-data dict whose frames are the given function names.
inline std::string StackOf(std::initializer_list<std::string_view> functions, std::string_view extra = "") {
  std::string json = R"({"crashing_thread": 0, "threads": [{"frames": [)";
  bool first = true;
  for (std::string_view f : functions) {
    if (!first) json += ", ";
    first = false;
    json += R"({"function": ")";
    json += f;
    json += "\"}";
  }
  json += "]}]";
  if (!extra.empty()) {
    json += ", ";
    json += extra;
  }
  json += "}";
  return json;
}

// The normalised form of one frame (given as a JSON object).
inline std::string NormalizedFrame(std::string_view frame_json) {
  return Generate(std::string(R"({"threads": [{"frames": [)") + std::string(frame_json) + "]}]}").proto_signature;
}

}  // namespace seismo::testing_util
