// Every case of tests/data/signature/socorro-vectors.json (taken from Socorro's
// own tests and from running its unmodified generator), honouring each
// vector's `kind` as the file's `conventions` describe.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "seismo/parse/crash_parser.h"
#include "seismo/signature/generator.h"
#include "signature/c_signature.h"

namespace seismo {
namespace {

struct Vector {
  std::string id;
  std::string kind;
  std::string input;  // minified JSON
  std::optional<std::string> signature;
  std::optional<std::string> proto_signature;
  std::optional<std::vector<std::string>> notes;
  std::optional<std::vector<std::string>> normalized_frames;
};

std::vector<std::string> Strings(simdjson::dom::element e) {
  std::vector<std::string> out;
  for (simdjson::dom::element s : simdjson::dom::array(e)) out.emplace_back(std::string_view(s));
  return out;
}

std::vector<Vector> LoadVectors() {
  std::ifstream in(std::string(SEISMO_SOURCE_DIR) + "/tests/data/signature/socorro-vectors.json");
  std::stringstream ss;
  ss << in.rdbuf();
  static simdjson::dom::parser parser;
  simdjson::padded_string text(ss.str());
  simdjson::dom::element root = parser.parse(text);
  std::vector<Vector> out;
  for (simdjson::dom::element v : simdjson::dom::array(root["vectors"])) {
    Vector x;
    x.id = std::string(std::string_view(v["id"]));
    x.kind = std::string(std::string_view(v["kind"]));
    x.input = simdjson::minify(v["input"].value());
    simdjson::dom::element e;
    if (!v["expected_signature"].get(e) && e.type() == simdjson::dom::element_type::STRING) {
      x.signature = std::string(std::string_view(e));
    }
    if (!v["expected_proto_signature"].get(e)) x.proto_signature = std::string(std::string_view(e));
    if (!v["expected_notes"].get(e)) x.notes = Strings(e);
    if (!v["expected_normalized_frames"].get(e)) x.normalized_frames = Strings(e);
    out.push_back(std::move(x));
  }
  return out;
}

const SignatureGenerator& Generator() {
  static std::unique_ptr<SignatureGenerator> gen = std::move(SignatureGenerator::LoadDefault()).value();
  return *gen;
}

class SocorroVectorTest : public ::testing::TestWithParam<Vector> {};

TEST_P(SocorroVectorTest, MatchesSocorro) {
  const Vector& v = GetParam();
  const SigLists& lists = Generator().lists();
  if (v.kind == "pipeline" || v.kind == "processed_crash") {
    ParseResult<CrashData> data = v.kind == "pipeline" ? CrashDataFromJson(v.input) : CrashDataFromProcessedJson(v.input);
    ASSERT_TRUE(data.ok()) << RejectReasonName(data.reason());
    SignatureResult r = Generator().Generate(data.value());
    ASSERT_TRUE(v.signature.has_value());
    EXPECT_EQ(r.signature, *v.signature);
    if (v.proto_signature) EXPECT_EQ(r.proto_signature, *v.proto_signature);
    if (v.notes) EXPECT_EQ(r.notes, *v.notes);
  } else if (v.kind == "normalize_frame") {
    // input.frame is one frame: normalise it alone, and as a one-frame stack.
    std::string frame = v.input.substr(v.input.find(':') + 1);
    frame.pop_back();
    ParseResult<CrashData> data = CrashDataFromJson(R"({"threads":[{"frames":[)" + frame + "]}]}");
    ASSERT_TRUE(data.ok());
    auto list = signature_internal::CreateFrameList(data.value().threads[0], false, lists);
    ASSERT_TRUE(list.ok()) << list.error().message;
    ASSERT_EQ(list.value().size(), 1u);
    EXPECT_EQ(list.value()[0], *v.signature);
    SignatureResult r = Generator().Generate(data.value());
    // The whole pipeline trims the trailing space a [clone .cold] leaves.
    std::string expected = *v.signature;
    while (!expected.empty() && expected.back() == ' ') expected.pop_back();
    EXPECT_EQ(r.signature, expected);
  } else if (v.kind == "frame_list") {
    std::string thread = v.input.substr(v.input.find(':') + 1);
    thread.pop_back();
    ParseResult<CrashData> data = CrashDataFromJson(R"({"threads":[)" + thread + "]}");
    ASSERT_TRUE(data.ok());
    auto list = signature_internal::CreateFrameList(data.value().threads[0], false, lists);
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(list.value(), *v.normalized_frames);
  } else if (v.kind == "csig_generate") {
    simdjson::dom::parser p;
    simdjson::dom::element in = p.parse(simdjson::padded_string(v.input));
    auto custom = SigLists::FromEntries(Strings(in["irrelevant"]), Strings(in["prefix"]), Strings(in["sentinels"]), {});
    ASSERT_TRUE(custom);
    auto walk = signature_internal::WalkFrames(Strings(in["normalized_frames"]), 0, *custom.value());
    EXPECT_EQ(walk.signature, *v.signature);
  } else {
    FAIL() << "unknown vector kind " << v.kind;
  }
}

INSTANTIATE_TEST_SUITE_P(AllVectors, SocorroVectorTest, ::testing::ValuesIn(LoadVectors()),
                         [](const ::testing::TestParamInfo<Vector>& info) { return info.param.id; });

TEST(SocorroVectorFileTest, HasAll114Vectors) { EXPECT_EQ(LoadVectors().size(), 114u); }

}  // namespace
}  // namespace seismo
