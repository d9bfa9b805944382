// Parser on a crash source (DocHints{kCrash}, as a crash topic or `--crash` file gives):
// the document is parsed once, by the crash reader (ADR 0021). It must read every crash
// document as the kind-detecting path reads it, in place or copied, and give each
// reason of its own parse as the other kinds do.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "seismo/parse/parser.h"
#include "seismo/signature/generator.h"
#include "test_docs.h"

namespace seismo {
namespace {

using testing::ReadFile;

const SignatureGenerator& Gen() {
  static std::unique_ptr<SignatureGenerator> gen = std::move(SignatureGenerator::LoadDefault()).value();
  return *gen;
}

constexpr DocHints kCrashSource{DocKind::kCrash};

std::string SignatureData(const std::string& name) {
  return ReadFile(std::string(SEISMO_SOURCE_DIR) + "/tests/data/signature/" + name);
}

struct Crash {
  std::string name;
  std::string json;
  std::string expected_signature;  // "" when the file gives none
};

// The two example documents and every processed crash of Socorro's vectors.
std::vector<Crash> Crashes() {
  std::vector<Crash> out = {{"crash-ping-4.1", SignatureData("crash-ping-4.1.json"), "xul.dll | firefox.exe"},
                            {"processed-crash-example", SignatureData("processed-crash-example.json"), ""}};
  simdjson::dom::parser parser;
  simdjson::padded_string text(SignatureData("socorro-vectors.json"));
  simdjson::dom::element root = parser.parse(text);
  for (simdjson::dom::element v : simdjson::dom::array(root["vectors"])) {
    if (std::string_view(v["kind"]) != "processed_crash") continue;
    Crash c{std::string(std::string_view(v["id"])), simdjson::minify(v["input"].value()), ""};
    simdjson::dom::element e;
    if (!v["expected_signature"].get(e) && e.type() == simdjson::dom::element_type::STRING) {
      c.expected_signature = std::string(std::string_view(e));
    }
    out.push_back(std::move(c));
  }
  return out;
}

void ExpectSameDocument(const ParsedDocument& a, const ParsedDocument& b, const std::string& name) {
  EXPECT_EQ(a.kind, b.kind) << name;
  EXPECT_EQ(a.dims.channel, b.dims.channel) << name;
  EXPECT_EQ(a.dims.product, b.dims.product) << name;
  EXPECT_EQ(a.dims.version, b.dims.version) << name;
  EXPECT_EQ(a.dims.build_id, b.dims.build_id) << name;
  EXPECT_EQ(a.dims.build_date, b.dims.build_date) << name;
  EXPECT_EQ(a.dims.os, b.dims.os) << name;
  EXPECT_EQ(a.doc_id, b.doc_id) << name;
  EXPECT_EQ(a.primary_time, b.primary_time) << name;
  EXPECT_EQ(a.fallback_time, b.fallback_time) << name;
  ASSERT_TRUE(a.crash && b.crash) << name;
  EXPECT_EQ(a.crash->process, b.crash->process) << name;
  EXPECT_EQ(a.crash->crash_class, b.crash->crash_class) << name;
  EXPECT_EQ(a.crash->startup, b.crash->startup) << name;
  EXPECT_EQ(a.crash->signature, b.crash->signature) << name;
  EXPECT_EQ(a.crash->proto_signature, b.crash->proto_signature) << name;
  EXPECT_EQ(a.crash->install_id, b.crash->install_id) << name;
}

TEST(CrashSource, EveryCrashReadsAsTheKindDetectingPathReadsIt) {
  Parser p({}, &Gen());
  size_t compared = 0;
  for (const Crash& c : Crashes()) {
    ParseResult<ParsedDocument> hinted = p.Parse(c.json, kCrashSource);
    ASSERT_TRUE(hinted.ok()) << c.name << ": " << RejectReasonName(hinted.reason());
    EXPECT_EQ(hinted.value().kind, DocKind::kCrash);
    if (!c.expected_signature.empty())
      EXPECT_EQ(hinted.value().crash->signature, c.expected_signature) << c.name;
    ParseResult<ParsedDocument> detected = p.Parse(c.json);
    // A processed crash without json_dump, threads or crashing_thread says nothing of its kind.
    if (!detected.ok() && detected.reason() == RejectReason::kUnknownKind) continue;
    ASSERT_TRUE(detected.ok()) << c.name << ": " << RejectReasonName(detected.reason());
    ExpectSameDocument(hinted.value(), detected.value(), c.name);
    ++compared;
  }
  EXPECT_GE(compared, 2u);
}

TEST(CrashSource, ADocumentWithPaddingAfterItIsReadWhereItIs) {
  Parser p({}, &Gen());
  for (const Crash& c : Crashes()) {
    std::string buffer = c.json + std::string(kParsePadding, 'x');  // not JSON: must not be read as such
    ParsedDocument in_place;
    std::optional<RejectReason> r =
        p.ParseInto(std::string_view(buffer.data(), c.json.size()), kCrashSource, in_place, kParsePadding);
    ASSERT_FALSE(r) << c.name << ": " << RejectReasonName(*r);
    ParseResult<ParsedDocument> copied = p.Parse(c.json, kCrashSource);
    ASSERT_TRUE(copied.ok()) << c.name;
    ExpectSameDocument(in_place, copied.value(), c.name);
  }
}

RejectReason RejectOf(const std::string& doc, ParseOptions o = {}, const SignatureGenerator* gen = &Gen()) {
  Parser p(std::move(o), gen);
  ParseResult<ParsedDocument> r = p.Parse(doc, kCrashSource);
  EXPECT_FALSE(r.ok()) << doc.substr(0, 60);
  return r.ok() ? RejectReason::kCount_ : r.reason();
}

std::string Name(RejectReason r) { return std::string(RejectReasonName(r)); }

TEST(CrashSource, EachReasonOfItsOwnParse) {
  ParseOptions shallow;
  shallow.max_depth = 8;
  ParseOptions release_only;
  release_only.hangs.channels = {"release"};
  ParseOptions small;
  small.max_document_bytes = 100;
  const std::string ping = SignatureData("crash-ping-4.1.json");  // channel "release"
  ParseOptions beta_only;
  beta_only.hangs.channels = {"beta"};

  EXPECT_EQ(Name(RejectOf("{")), "malformed_json");
  EXPECT_EQ(Name(RejectOf(R"({"type":"crash"} x)")), "malformed_json");
  EXPECT_EQ(Name(RejectOf("[1,2]")), "not_object");
  EXPECT_EQ(Name(RejectOf(std::string(R"({"type":"crash","x":")") + "\xff\"}")), "invalid_utf8");
  EXPECT_EQ(Name(RejectOf(R"({"type":"crash","a":[[[[[[[[[1]]]]]]]]]})", shallow)), "too_deep");
  EXPECT_EQ(Name(RejectOf(ping, small)), "too_large");
  EXPECT_EQ(Name(RejectOf(R"({"type":"crash"})", {}, nullptr)), "bad_crash");
  EXPECT_EQ(Name(RejectOf(R"({"type":"crash","application":{}})")), "missing_build_id");
  EXPECT_EQ(Name(RejectOf(R"({"type":"crash","application":{"buildId":"2026"}})")), "bad_build_id");
  EXPECT_EQ(Name(RejectOf(ping, beta_only)), "filtered");
  Parser release(release_only, &Gen());
  EXPECT_TRUE(release.Parse(ping, kCrashSource).ok());
}

// As for the other kinds: invalid_utf8, then too_deep, then what simdjson says, whatever
// order the faults come in.
TEST(CrashSource, TwoFaultsGiveTheReasonOfTheFirstCheck) {
  ParseOptions shallow;
  shallow.max_depth = 8;
  const std::string deep = R"({"type":"crash","payload":)" + std::string(20, '[');
  EXPECT_EQ(Name(RejectOf(std::string(R"({"type":"crash","x":")") + "\xff", shallow)), "invalid_utf8");
  EXPECT_EQ(Name(RejectOf(deep + "\"abc", shallow)), "too_deep");
  EXPECT_EQ(Name(RejectOf(deep + "\"\xff\"" + std::string(20, ']') + "}", shallow)), "invalid_utf8");
  EXPECT_EQ(Name(RejectOf(R"({"type":"crash",)" + std::string(20, '[') + "}", shallow)), "too_deep");
}

}  // namespace
}  // namespace seismo
