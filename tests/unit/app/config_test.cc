#include "seismo/app/config.h"

#include <gtest/gtest.h>

#include <fstream>

namespace seismo {
namespace {

Result<Config> Parse(const std::string& text) { return ParseConfig(text, "test.toml"); }

void ExpectError(const std::string& text, const std::string& fragment) {
  auto c = Parse(text);
  ASSERT_FALSE(c) << text;
  EXPECT_NE(c.error().message().find(fragment), std::string::npos) << c.error().message();
  EXPECT_EQ(c.error().message().rfind("test.toml: ", 0), 0u) << c.error().message();
}

TEST(Config, EmptyFileGivesDefaults) {
  auto c = Parse("");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->parse.hangs.min_ms, 128);
  EXPECT_EQ(c->parse.hangs.max_ms, 16000);
  EXPECT_EQ(c->parse.hangs.bhr_max_ms, 65536);
  EXPECT_EQ(c->parse.hangs.child_payloads, ChildPayloads::kShutdownOnly);
  EXPECT_EQ(c->http.listen, "127.0.0.1:8080");
  EXPECT_EQ(c->aggregate.windows.size(), 3u);
  EXPECT_EQ(c->aggregate.retention, std::chrono::hours(24 * 14));
}

TEST(Config, ReadsEveryHangKey) {
  auto c = Parse(R"(
[hangs]
min_ms = 100
max_ms = 8000
bhr_max_ms = 30000
weighting = "mid"
child_payloads = "all"
signature = "innermost_label"
threads = ["Gecko"]
)");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->parse.hangs.min_ms, 100);
  EXPECT_EQ(c->parse.hangs.weighting, HangWeighting::kMid);
  EXPECT_EQ(c->parse.hangs.child_payloads, ChildPayloads::kAll);
  EXPECT_EQ(c->parse.hangs.signature, HangSignatureMode::kInnermostLabel);
  EXPECT_EQ(c->parse.hangs.threads, std::vector<std::string>{"Gecko"});
}

TEST(Config, ReadsKafkaTablesAsIs) {
  auto c = Parse(R"(
[kafka]
brokers = "b:1"
[kafka.topic_kinds]
"socorro.processed" = "crash"
[kafka.properties]
"session.timeout.ms" = "6000"
)");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->kafka.topic_kinds.at("socorro.processed"), "crash");
  EXPECT_EQ(c->kafka.properties.at("session.timeout.ms"), "6000");
}

TEST(Config, UnknownKeysAndSectionsAreErrors) {
  ExpectError("[hangs]\nmin_msec = 5\n", "hangs.min_msec: unknown key");
  ExpectError("[hang]\nmin_ms = 5\n", "hang: unknown section or key");
  ExpectError("verbose = true\n", "verbose: unknown section or key");
}

TEST(Config, WrongTypesNameTheKey) {
  ExpectError("[hangs]\nmin_ms = \"128\"\n", "hangs.min_ms: expected an integer");
  ExpectError("[kafka]\ntopics = \"a\"\n", "kafka.topics: expected an array of strings");
  ExpectError("[aggregate]\nbucket = 60\n", "aggregate.bucket: expected a duration");
  ExpectError("[http]\nlisten = 8080\n", "http.listen: expected a string");
  ExpectError("hangs = 1\n", "hangs: expected a table");
}

TEST(Config, ImpossibleValuesAreErrors) {
  ExpectError("[hangs]\nmin_ms = -1\n", "hangs.min_ms: -1 is out of range");
  ExpectError("[hangs]\nmin_ms = 500\nmax_ms = 400\n", "hangs.max_ms: must be greater than min_ms");
  ExpectError("[hangs]\nweighting = \"median\"\n", "hangs.weighting: \"median\" is not one of");
  ExpectError("[aggregate]\nbucket = \"1 hour\"\n", "aggregate.bucket: \"1 hour\" is not a duration");
  ExpectError("[aggregate]\nbucket = \"0s\"\n", "must be greater than zero");
  ExpectError("[aggregate]\nwindows = [\"90s\"]\n", "not a multiple of the bucket");
  ExpectError("[aggregate]\nwindows = [\"30d\"]\n", "longer than the retention");
  ExpectError("[kafka.topic_kinds]\nx = \"pings\"\n", "kafka.topic_kinds.x");
}

TEST(Config, SyntaxErrorsGiveLineAndColumn) {
  auto c = Parse("[hangs\nmin_ms = 1\n");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message().rfind("test.toml:1:", 0), 0u) << c.error().message();
}

TEST(Config, MissingFileIsAnError) {
  auto c = LoadConfig("/nonexistent/seismo.toml");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("/nonexistent/seismo.toml"), std::string::npos);
}

TEST(Config, ShippedExampleFilesAreValidAndDocumentTheDefaults) {
  for (const char* name : {"seismo.toml"}) {
    auto c = LoadConfig(std::string(SEISMO_SOURCE_DIR) + "/config/" + name);
    ASSERT_TRUE(c) << c.error().message();
  }
}

}  // namespace
}  // namespace seismo
