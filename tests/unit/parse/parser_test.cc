// Parser: main and bhr pings -> usage and hang records (SPEC §2, §3.1, §3.2).
#include "seismo/parse/parser.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "support/parsed.h"
#include "test_docs.h"

namespace seismo {
namespace {

using test::StackOf;
using testing::BhrPing;
using testing::DataFile;
using testing::MainPing;
using testing::Replace;

ParseResult<ParsedDocument> ParseWith(const std::string& doc, ParseOptions o = {}) {
  Parser p(o, nullptr);
  return p.Parse(doc);
}

TEST(ParserMain, ReferenceExampleGivesUsageHangsAndGpuCrashes) {
  auto r = ParseWith(DataFile("docs/reference_main.json"));
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  const ParsedDocument& d = r.value();
  EXPECT_EQ(d.kind, DocKind::kMain);
  EXPECT_EQ(d.dims.channel, "nightly");
  EXPECT_EQ(d.dims.build_id, "20170530030204");
  EXPECT_EQ(d.dims.build_date, "20170530");
  EXPECT_EQ(d.dims.os, "Windows_NT");
  EXPECT_EQ(d.dims.version, "55.0a1");
  EXPECT_EQ(d.doc_id, "5f1c2a7e-0b7d-4c55-9a61-2b9f0f3a1001");
  EXPECT_EQ(d.install_id, "0f0e0d0c-1111-4222-8333-444455556666");  // clientId
  EXPECT_EQ(d.usage_ms, 3'600'000);  // 1.0 usage hour
  EXPECT_EQ(d.subprocess_crashes.gpu, 1u);
  ASSERT_EQ(d.hangs.size(), 2u);
  EXPECT_EQ(d.hangs[0].thread, "Gecko");
  EXPECT_EQ(d.hangs[0].process, "parent");
  EXPECT_EQ(d.hangs[0].hang_count, 3u);
  EXPECT_EQ(d.hangs[0].hang_us, 1021'000);
  EXPECT_EQ(d.hangs[0].signature, "(chrome script)");
  EXPECT_EQ(StackOf(d, 0).size(), 4u);
  // Child payload (reason == shutdown): Gecko_Child, 1 hang of 255 ms; the
  // second child payload has no threadHangStats and is skipped.
  EXPECT_EQ(d.hangs[1].thread, "Gecko_Child");
  EXPECT_EQ(d.hangs[1].process, "content");
  EXPECT_EQ(d.hangs[1].hang_count, 1u);
  EXPECT_EQ(d.hangs[1].hang_us, 255'000);
  EXPECT_EQ(d.hangs[1].signature, "IPDL::PBrowser::RecvAsyncMessage");
  ASSERT_TRUE(d.fallback_time);
  EXPECT_EQ(FormatTimestamp(*d.fallback_time), "2017-06-01T12:34:56.789Z");
}

TEST(ParserMain, ChildPayloadsOnlyFromShutdownPingsByDefault) {
  std::string daily = Replace(DataFile("docs/reference_main.json"), R"("reason": "shutdown")", R"("reason": "daily")");
  auto r = ParseWith(daily);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value().hangs.size(), 1u);
  EXPECT_EQ(r.value().hangs[0].thread, "Gecko");
}

TEST(ParserMain, SavedSessionPingsUseChildPayloadsEvenWithoutShutdownReason) {
  std::string doc = Replace(DataFile("docs/reference_main.json"), R"("reason": "shutdown")", R"("reason": "daily")");
  doc = Replace(doc, R"("type": "main")", R"("type": "saved-session")");
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().hangs.size(), 2u);
}

TEST(ParserMain, ChildPayloadsAllAndNone) {
  std::string daily = Replace(DataFile("docs/reference_main.json"), R"("reason": "shutdown")", R"("reason": "daily")");
  ParseOptions all;
  all.hangs.child_payloads = ChildPayloads::kAll;
  EXPECT_EQ(ParseWith(daily, all).value().hangs.size(), 2u);
  ParseOptions none;
  none.hangs.child_payloads = ChildPayloads::kNone;
  EXPECT_EQ(ParseWith(DataFile("docs/reference_main.json"), none).value().hangs.size(), 1u);
}

TEST(ParserMain, ChildPayloadWithoutThreadHangStatsFirstDoesNotEndTheLoop) {
  std::string doc = MainPing(
      R"("info":{"reason":"shutdown","subsessionLength":60},"childPayloads":[{"ver":4},null,)"
      R"({"threadHangStats":[{"name":"Gecko_Child","hangs":[{"stack":["a"],"histogram":{"values":{"255":1}}}]}]}])");
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  ASSERT_EQ(r.value().hangs.size(), 1u);
  EXPECT_EQ(r.value().hangs[0].hang_us, 255'000);
}

TEST(ParserMain, ThreadsWithoutNameAreSkipped) {
  std::string doc = MainPing(
      R"("info":{"subsessionLength":60},"threadHangStats":[{"hangs":[{"stack":["a"],"histogram":{"values":{"255":1}}}]},)"
      R"({"name":"Gecko","hangs":[{"stack":["b"],"histogram":{"values":{"511":1}}}]}])");
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value().hangs.size(), 1u);
  EXPECT_EQ(r.value().hangs[0].signature, "b");
}

// Found by fuzz_parse: a legacy stack whose innermost element is "" gave its hang the
// signature "". An empty element names nothing (ADR 0001): the innermost non-empty one does.
TEST(ParserMain, AnEmptyInnermostElementDoesNotNameTheHang) {
  std::string doc = MainPing(
      R"("info":{"subsessionLength":60},"threadHangStats":[{"name":"Gecko","hangs":[)"
      R"({"stack":["a",""],"histogram":{"values":{"255":1}}},{"stack":[""],"histogram":{"values":{"511":1}}}]}])");
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  ASSERT_EQ(r.value().hangs.size(), 2u);
  EXPECT_EQ(StackOf(r.value(), 0), (std::vector<std::string>{"a", ""}));
  EXPECT_EQ(r.value().hangs[0].signature, "a");
  EXPECT_EQ(StackOf(r.value(), 1), std::vector<std::string>{""});
  EXPECT_EQ(r.value().hangs[1].signature, "(empty stack)");
}

TEST(ParserMain, UsageIsClampedToOneDay) {
  auto r = ParseWith(MainPing(R"("info":{"subsessionLength":100000})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().usage_ms, 86'400'000);
}

TEST(ParserMain, PingWithoutHangsStillAddsUsage) {
  auto r = ParseWith(MainPing(R"("info":{"subsessionLength":1800})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().usage_ms, 1'800'000);
  EXPECT_TRUE(r.value().hangs.empty());
}

TEST(ParserMain, SubmissionTimestampIsPrimaryTime) {
  std::string doc = Replace(MainPing(R"("info":{"subsessionLength":1})"), R"("type":"main")",
                            R"("type":"main","submission_timestamp":"2026-11-20T10:00:00Z")");
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(FormatTimestamp(*r.value().primary_time), "2026-11-20T10:00:00.000Z");
}

TEST(ParserMain, DisplayVersionWinsOverVersionAndMissingDimensionsAreUnknown) {
  std::string doc = R"({"type":"main","application":{"buildId":"2026111709","version":"146.0","displayVersion":"146.0b4"},"payload":{"info":{"subsessionLength":5}}})";
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().dims.version, "146.0b4");
  EXPECT_EQ(r.value().dims.channel, "unknown");
  EXPECT_EQ(r.value().dims.os, "unknown");
  EXPECT_EQ(r.value().dims.product, "unknown");
  EXPECT_EQ(r.value().dims.build_date, "20261117");
}

TEST(ParserMain, FiltersSelectThreadsAndProcesses) {
  ParseOptions o;
  o.hangs.threads = {"Gecko_Child"};
  auto r = ParseWith(DataFile("docs/reference_main.json"), o);
  ASSERT_EQ(r.value().hangs.size(), 1u);
  EXPECT_EQ(r.value().hangs[0].thread, "Gecko_Child");
  ParseOptions p;
  p.hangs.processes = {"parent"};
  EXPECT_EQ(ParseWith(DataFile("docs/reference_main.json"), p).value().hangs.size(), 1u);
  ParseOptions c;
  c.hangs.channels = {"release"};
  EXPECT_EQ(ParseWith(DataFile("docs/reference_main.json"), c).reason(), RejectReason::kFiltered);
}

TEST(ParserBhr, ReferenceExampleGivesUsageAndTwoHangs) {
  auto r = ParseWith(DataFile("docs/reference_bhr.json"));
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  const ParsedDocument& d = r.value();
  EXPECT_EQ(d.kind, DocKind::kBhr);
  EXPECT_EQ(d.usage_ms, 5'400'000);  // 1.5 h
  EXPECT_EQ(d.dims.build_date, "20210301");
  EXPECT_EQ(d.install_id, "");  // bhr pings are sent without a clientId
  ASSERT_EQ(d.hangs.size(), 2u);
  const HangRecord& gecko = d.hangs[0];
  EXPECT_EQ(gecko.thread, "Gecko");
  EXPECT_EQ(gecko.process, "parent");
  EXPECT_EQ(gecko.hang_us, 312'500);
  EXPECT_EQ(gecko.hang_count, 1u);
  std::vector<std::string> expected = {"ntdll.pdb+0x6a2f0", "xul.pdb+0x1c2d3e", "nsRefreshDriver::Tick",
                                       "PresShell::DoFlushPendingNotifications Layout",
                                       "xul.pdb+0x2a0b11", "(unresolved)"};
  EXPECT_EQ(StackOf(d, 0), expected);
  EXPECT_EQ(gecko.signature, "(unresolved)");
  EXPECT_EQ(d.hangs[1].process, "content");
  EXPECT_EQ(d.hangs[1].hang_us, 145'000);
}

TEST(ParserBhr, ClientIdIsReadWhenAPipelineAddsIt) {
  auto r = ParseWith(Replace(DataFile("docs/reference_bhr.json"), R"("type": "bhr",)",
                             R"("type": "bhr", "clientId": "c1ie47",)"));
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  EXPECT_EQ(r.value().install_id, "c1ie47");
  EXPECT_EQ(r.value().hangs.size(), 2u);
}

TEST(ParserBhr, InnermostLabelSignatureSkipsMarkersAndNativeFrames) {
  ParseOptions o;
  o.hangs.signature = HangSignatureMode::kInnermostLabel;
  auto r = ParseWith(DataFile("docs/reference_bhr.json"), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().hangs[0].signature, "PresShell::DoFlushPendingNotifications Layout");
  EXPECT_EQ(r.value().hangs[1].signature, "XRE_InitChildProcess");
}

TEST(ParserBhr, DurationAndStackLengthFilters) {
  std::string deep = "[";
  for (int i = 0; i < 300; ++i) deep += std::string(i ? "," : "") + "\"f\"";
  deep += "]";
  std::string doc = BhrPing(
      R"("timeSinceLastPing":3600000,"hangs":[)"
      R"({"duration":127.9,"thread":"Gecko","process":"default","stack":["a"]},)"
      R"({"duration":128,"thread":"Gecko","process":"default","stack":["b"]},)"
      R"({"duration":65535.9,"thread":"Gecko","process":"default","stack":["c"]},)"
      R"({"duration":65536,"thread":"Gecko","process":"default","stack":["d"]},)"
      R"({"duration":200,"thread":"Gecko","process":"default","stack":[]},)"
      R"({"duration":200,"thread":"Gecko","process":"default","stack":)" + deep + "}]");
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  ASSERT_EQ(r.value().hangs.size(), 2u);
  EXPECT_EQ(r.value().hangs[0].signature, "b");
  EXPECT_EQ(r.value().hangs[1].signature, "c");
}

TEST(ParserBhr, MalformedStackElementsAreDroppedButCountTowardLength) {
  std::string doc = BhrPing(
      R"("timeSinceLastPing":1000,"modules":[["xul.pdb","X"]],"hangs":[{"duration":500,"thread":"Gecko","process":"default",)"
      R"("stack":["root",42,{"x":1},[0],[0,"1f",3],["0","1f"],[0,"zz"],null,[-1,"00ff"],[0,"AB"]]}])");
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  std::vector<std::string> expected = {"root", "0xff", "xul.pdb+0xab"};
  EXPECT_EQ(StackOf(r.value(), 0), expected);
}

TEST(ParserBhr, PingWithNoHangsStillAddsUsage) {
  auto r = ParseWith(BhrPing(R"("timeSinceLastPing":7200000,"hangs":[])"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().usage_ms, 7'200'000);
}

// A bhr stack element "" is a string, so it is a frame (ADR 0017): [""] keeps one frame, but
// an empty element names nothing (ADR 0001), so its signature is "(empty stack)", as is that of
// a stack whose elements were all dropped; the two stay different stacks.
TEST(ParserBhr, AnEmptyStringIsAFrame) {
  auto r = ParseWith(BhrPing(R"("timeSinceLastPing":1000,"hangs":[)"
                             R"({"duration":200,"thread":"Gecko","process":"default","stack":[""]},)"
                             R"({"duration":200,"thread":"Gecko","process":"default","stack":[7]}])"));
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  ASSERT_EQ(r.value().hangs.size(), 2u);
  EXPECT_EQ(StackOf(r.value(), 0), std::vector<std::string>{""});
  EXPECT_EQ(r.value().hangs[0].signature, "(empty stack)");
  EXPECT_TRUE(StackOf(r.value(), 1).empty());
  EXPECT_EQ(r.value().hangs[1].signature, "(empty stack)");
}

// Durations in 1/1000 ms, rounded half to even on the number's decimal digits.
TEST(ParserBhr, FractionalDurationsRoundHalfToEven) {
  auto r =
      ParseWith(BhrPing(R"("timeSinceLastPing":1000,"hangs":[)"
                        R"({"duration":295.063584,"thread":"Gecko","process":"default","stack":["a"]},)"
                        R"({"duration":200.0005,"thread":"Gecko","process":"default","stack":["a"]},)"
                        R"({"duration":200.0015,"thread":"Gecko","process":"default","stack":["a"]},)"
                        R"({"duration":1.280005E2,"thread":"Gecko","process":"default","stack":["a"]}])"));
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  ASSERT_EQ(r.value().hangs.size(), 4u);
  EXPECT_EQ(r.value().hangs[0].hang_us, 295'064);
  EXPECT_EQ(r.value().hangs[1].hang_us, 200'000);
  EXPECT_EQ(r.value().hangs[2].hang_us, 200'002);
  EXPECT_EQ(r.value().hangs[3].hang_us, 128'000);
}

// A member repeated in a document takes its last value, at every level and whatever its
// type, a container whole (not merged with the earlier one); histogram keys too. This is
// what JSON.parse, Python's json (Socorro's processor, the crash parser here) and
// Jackson's default (Mozilla's ingestion) do. ADR 0017.
TEST(ParserDuplicateKeys, TheLastValueWinsAtEveryLevelOfAMainPing) {
  auto r = ParseWith(
      R"({"type":"main","application":{"buildId":"20261117090501","channel":"beta","channel":"nightly"},)"
      R"("application":{"buildId":"20261117090502","name":"Firefox"},)"
      R"("payload":{"info":{"subsessionLength":100,"subsessionLength":3600},"threadHangStats":[{"name":"Gecko",)"
      R"("hangs":[{"stack":["a","b"],"stack":["c"],"histogram":{"values":{"255":1,"511":2,"255":3}}}]}]}})");
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  const ParsedDocument& d = r.value();
  EXPECT_EQ(d.dims.build_id, "20261117090502");
  EXPECT_EQ(d.dims.channel, "unknown");  // the second "application" has none
  EXPECT_EQ(d.dims.product, "Firefox");
  EXPECT_EQ(d.usage_ms, 3'600'000);
  ASSERT_EQ(d.hangs.size(), 1u);
  EXPECT_EQ(StackOf(d, 0), std::vector<std::string>{"c"});
  EXPECT_EQ(d.hangs[0].hang_count, 5u);  // 3 + 2, not 1 + 2 + 3
  EXPECT_EQ(d.hangs[0].hang_us, (255 * 3 + 511 * 2) * 1000);
  // A repeated payload replaces the first whole: its hangs go with it.
  auto twice = ParseWith(MainPing(R"("info":{"subsessionLength":60},"threadHangStats":[{"name":"G","hangs":[)"
                                  R"({"stack":["x"],"histogram":{"values":{"1023":1}}}]}]},"payload":{)"
                                  R"("info":{"subsessionLength":30})"));
  ASSERT_TRUE(twice.ok()) << RejectReasonName(twice.reason());
  EXPECT_EQ(twice.value().usage_ms, 30'000);
  EXPECT_TRUE(twice.value().hangs.empty());
  // Distinct key strings stay distinct keys, even when they name one bucket.
  auto distinct =
      ParseWith(MainPing(R"("info":{"subsessionLength":60},"threadHangStats":[{"name":"G","hangs":[)"
                         R"({"stack":["x"],"histogram":{"values":{"255":1,"0255":2}}}]}])"));
  ASSERT_TRUE(distinct.ok());
  EXPECT_EQ(distinct.value().hangs[0].hang_count, 3u);
}

TEST(ParserDuplicateKeys, ABhrPingsModulesAndHangsAreItsLastArrays) {
  auto r = ParseWith(
      BhrPing(R"("timeSinceLastPing":1000,"modules":[["m1.pdb","A"]],)"
              R"("hangs":[{"duration":300,"thread":"Gecko","process":"default","stack":["first"]}],)"
              R"("modules":[["m2.pdb","B"]],)"
              R"("hangs":[{"duration":400,"duration":500,"thread":"Gecko","process":"default",)"
              R"("stack":["x"],"stack":[[0,"10"]]}])"));
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  ASSERT_EQ(r.value().hangs.size(), 1u);
  EXPECT_EQ(r.value().hangs[0].hang_us, 500'000);
  EXPECT_EQ(StackOf(r.value(), 0), std::vector<std::string>{"m2.pdb+0x10"});
}

TEST(ParserDuplicateKeys, ARepeatedTypeTakesItsLastValue) {
  auto main = ParseWith(R"({"type":"crash","application":{"buildId":"20261117090501"},)"
                        R"("payload":{"info":{"subsessionLength":60}},"type":"main"})");
  ASSERT_TRUE(main.ok()) << RejectReasonName(main.reason());
  EXPECT_EQ(main.value().kind, DocKind::kMain);
  EXPECT_EQ(main.value().usage_ms, 60'000);
  EXPECT_EQ(ParseWith(R"({"type":"main","type":"crash"})").reason(), RejectReason::kBadCrash);
}

TEST(ParserKind, TopicHintOverridesTheDocument) {
  Parser p({}, nullptr);
  std::string doc = R"({"application":{"buildId":"20261117090501"},"payload":{"timeSinceLastPing":10}})";
  EXPECT_EQ(p.Parse(doc).reason(), RejectReason::kUnknownKind);
  auto r = p.Parse(doc, DocHints{DocKind::kBhr});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().kind, DocKind::kBhr);
}

TEST(ParserKind, FirstShutdownIsAMainPing) {
  std::string doc = Replace(MainPing(R"("info":{"subsessionLength":5})"), R"("type":"main")", R"("type":"first-shutdown")");
  EXPECT_EQ(ParseWith(doc).value().kind, DocKind::kMain);
}

TEST(ParserKind, CrashDocumentsWithoutSignatureListsAreBadCrash) {
  EXPECT_EQ(ParseWith(R"({"type":"crash"})").reason(), RejectReason::kBadCrash);
  EXPECT_EQ(ParseWith(R"({"json_dump":{}})").reason(), RejectReason::kBadCrash);
}

// Every rejection reason the parser can give, one row or more each.
struct RejectCase {
  const char* name;
  std::string doc;
  RejectReason reason;
  ParseOptions options = {};
};

ParseOptions MaxDocumentBytes(size_t bytes) {
  ParseOptions o;
  o.max_document_bytes = bytes;
  return o;
}

ParseOptions OnlyChannel(std::string channel) {
  ParseOptions o;
  o.hangs.channels = {std::move(channel)};
  return o;
}

std::vector<RejectCase> RejectCases() {
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "[";
  for (int i = 0; i < 300; ++i) deep += "]";
  return {
      {"truncated", R"({"type":"main","payload":{"info":{"subsessionLength":5})", RejectReason::kMalformedJson},
      {"garbage", "not json at all", RejectReason::kMalformedJson},
      {"trailing_garbage", MainPing(R"("info":{"subsessionLength":5})") + " {}", RejectReason::kMalformedJson},
      {"empty", "", RejectReason::kMalformedJson},
      {"array_root", "[1,2,3]", RejectReason::kNotObject},
      {"string_root", R"("main")", RejectReason::kNotObject},
      {"invalid_utf8", std::string(R"({"type":"main","x":")") + "\xff\xfe" + "\"}", RejectReason::kInvalidUtf8},
      {"too_deep", R"({"type":"main","payload":)" + deep + "}", RejectReason::kTooDeep},
      {"unknown_type", R"({"type":"event","application":{"buildId":"20261117090501"}})", RejectReason::kUnknownKind},
      {"no_type", R"({"application":{"buildId":"20261117090501"}})", RejectReason::kUnknownKind},
      {"missing_build_id", R"({"type":"main","application":{},"payload":{"info":{"subsessionLength":5}}})", RejectReason::kMissingBuildId},
      {"null_build_id", R"({"type":"main","application":{"buildId":null},"payload":{"info":{"subsessionLength":5}}})", RejectReason::kMissingBuildId},
      {"numeric_build_id", R"({"type":"main","application":{"buildId":20261117},"payload":{"info":{"subsessionLength":5}}})", RejectReason::kWrongType},
      {"short_build_id", MainPing(R"("info":{"subsessionLength":5})", "2026111"), RejectReason::kBadBuildId},
      {"letters_build_id", MainPing(R"("info":{"subsessionLength":5})", "2026x1170905"), RejectReason::kBadBuildId},
      {"missing_usage", MainPing(R"("info":{})"), RejectReason::kBadUsage},
      {"null_usage", MainPing(R"("info":{"subsessionLength":null})"), RejectReason::kBadUsage},
      {"negative_usage", MainPing(R"("info":{"subsessionLength":-5})"), RejectReason::kBadUsage},
      {"fractional_usage", MainPing(R"("info":{"subsessionLength":5.5})"), RejectReason::kBadUsage},
      {"string_usage", MainPing(R"("info":{"subsessionLength":"5"})"), RejectReason::kBadUsage},
      {"huge_usage", MainPing(R"("info":{"subsessionLength":99999999999999999999})"), RejectReason::kBadUsage},
      {"bhr_missing_usage", BhrPing(R"("hangs":[])"), RejectReason::kBadUsage},
      {"bhr_usage_over_a_day", BhrPing(R"("timeSinceLastPing":86400001)"), RejectReason::kUsageTooLarge},
      {"histogram_key_not_integer", MainPing(R"("info":{"subsessionLength":5},"threadHangStats":[{"name":"G","hangs":[{"stack":[],"histogram":{"values":{"255.5":1}}}]}])"), RejectReason::kBadHistogram},
      {"histogram_negative_count", MainPing(R"("info":{"subsessionLength":5},"threadHangStats":[{"name":"G","hangs":[{"stack":[],"histogram":{"values":{"255":-1}}}]}])"), RejectReason::kBadHistogram},
      {"histogram_string_count", MainPing(R"("info":{"subsessionLength":5},"threadHangStats":[{"name":"G","hangs":[{"stack":[],"histogram":{"values":{"255":"1"}}}]}])"), RejectReason::kBadHistogram},
      {"histogram_weighted_sum_overflows", MainPing(R"("info":{"subsessionLength":5},"threadHangStats":[{"name":"G","hangs":[{"stack":["a"],"histogram":{"values":{"8191":1130000000000}}}]}])"), RejectReason::kHangOverflow},
      {"bhr_negative_duration", BhrPing(R"("timeSinceLastPing":5,"hangs":[{"duration":-1,"thread":"Gecko","stack":["a"]}])"), RejectReason::kBadHang},
      {"bhr_string_duration", BhrPing(R"("timeSinceLastPing":5,"hangs":[{"duration":"200","thread":"Gecko","stack":["a"]}])"), RejectReason::kBadHang},
      {"bhr_missing_duration", BhrPing(R"("timeSinceLastPing":5,"hangs":[{"thread":"Gecko","stack":["a"]}])"), RejectReason::kBadHang},
      {"application_not_object", R"({"type":"main","application":"x","payload":{"info":{"subsessionLength":5}}})", RejectReason::kWrongType},
      {"threads_not_array", MainPing(R"("info":{"subsessionLength":5},"threadHangStats":{"name":"G"})"), RejectReason::kWrongType},
      {"stack_frame_not_string", MainPing(R"("info":{"subsessionLength":5},"threadHangStats":[{"name":"G","hangs":[{"stack":[1],"histogram":{"values":{}}}]}])"), RejectReason::kWrongType},
      {"client_id_not_string", R"({"type":"main","clientId":7,"application":{"buildId":"20261117090501"},"payload":{"info":{"subsessionLength":5}}})", RejectReason::kWrongType},
      {"os_name_not_string", R"({"type":"main","application":{"buildId":"20261117090501"},"environment":{"system":{"os":{"name":7}}},"payload":{"info":{"subsessionLength":5}}})", RejectReason::kWrongType},
      {"bad_submission_timestamp", R"({"type":"main","submission_timestamp":"soon","application":{"buildId":"20261117090501"},"payload":{"info":{"subsessionLength":5}}})", RejectReason::kBadTimestamp},
      {"too_large", MainPing(R"("info":{"subsessionLength":5},"pad":")" + std::string(200, 'x') + "\""), RejectReason::kTooLarge, MaxDocumentBytes(100)},
      {"crash_without_crash_data", R"({"type":"crash"})", RejectReason::kBadCrash},
      {"channel_filtered_out", DataFile("docs/reference_main.json"), RejectReason::kFiltered, OnlyChannel("release")},
  };
}

TEST(ParserRejects, EveryReasonHasACase) {
  const std::vector<RejectCase> cases = RejectCases();
  std::set<RejectReason> covered;
  for (const RejectCase& c : cases) {
    auto r = ParseWith(c.doc, c.options);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(RejectReasonName(r.reason()), RejectReasonName(c.reason)) << c.name;
    covered.insert(c.reason);
  }
  for (size_t i = 0; i < kRejectReasonCount; ++i) {
    const auto reason = static_cast<RejectReason>(i);
    // future_time is decided after parsing, against the source's watermark (the shard
    // stage's FutureTime.* tests); the parser never gives it.
    if (reason == RejectReason::kFutureTime) continue;
    EXPECT_TRUE(covered.count(reason) != 0) << "no case for " << RejectReasonName(reason);
  }
}

// A document with two faults gets the first of: invalid_utf8, too_deep, what simdjson
// says. simdjson's stage 1 (which now does the UTF-8 check) reports an unclosed string
// before a bad byte; the reasons must not depend on that.
TEST(ParserRejects, TwoFaultsGiveTheReasonOfTheFirstCheck) {
  const std::string deep = R"({"type":"main","payload":)" + std::string(300, '[');
  const std::string unclosed = std::string(R"({"type":"main","x":")") + "\xff";
  EXPECT_EQ(ParseWith(unclosed).reason(), RejectReason::kInvalidUtf8);
  EXPECT_EQ(ParseWith(deep + "\"abc").reason(), RejectReason::kTooDeep);
  EXPECT_EQ(ParseWith(deep + "\"\xff\"" + std::string(300, ']') + "}").reason(), RejectReason::kInvalidUtf8);
  EXPECT_EQ(ParseWith(deep + "\"\xff").reason(), RejectReason::kInvalidUtf8);
}

// The too_deep verdict of a document's source (DocHints::nesting, made as it was copied into
// its chunk: ADR 0042) stands in for the parser's own scan when made against the parser's
// max_depth, whatever it says; one made against another limit is not used.
TEST(ParserRejects, ADepthVerdictMadeAheadIsUsedOnlyForTheParsersLimit) {
  const std::string good = MainPing(R"("info":{"subsessionLength":1800})");
  const std::string deep = R"({"type":"main","x":)" + std::string(300, '[') + std::string(300, ']') + "}";
  Parser p(ParseOptions{}, nullptr);
  const size_t limit = p.options().max_depth;
  ASSERT_LT(limit, 300u);
  ASSERT_TRUE(p.Parse(good).ok());
  EXPECT_EQ(p.Parse(deep).reason(), RejectReason::kTooDeep);
  // Made against this limit: taken as it is (it is never wrong when made by AddDocument).
  EXPECT_EQ(p.Parse(good, DocHints{std::nullopt, Nesting{limit, true}}).reason(), RejectReason::kTooDeep);
  EXPECT_NE(p.Parse(deep, DocHints{std::nullopt, Nesting{limit, false}}).reason(), RejectReason::kTooDeep);
  // Made against another limit, or not made: the parser scans.
  EXPECT_TRUE(p.Parse(good, DocHints{std::nullopt, Nesting{limit + 1, true}}).ok());
  EXPECT_EQ(p.Parse(deep, DocHints{std::nullopt, Nesting{limit + 1, false}}).reason(),
            RejectReason::kTooDeep);
  EXPECT_EQ(p.Parse(deep, DocHints{std::nullopt, Nesting{0, false}}).reason(), RejectReason::kTooDeep);
  // The crash reader takes it too, where its DOM parse fails (a shallow document cut short).
  const std::string cut_crash = R"({"crash_id":"c","x":[1,)";
  EXPECT_EQ(p.Parse(cut_crash, DocHints{DocKind::kCrash, Nesting{limit, true}}).reason(),
            RejectReason::kTooDeep);
  EXPECT_EQ(p.Parse(cut_crash, DocHints{DocKind::kCrash, Nesting{}}).reason(), RejectReason::kMalformedJson);
}

// Frames and module names are read as views into the parser's buffer, unescaped.
TEST(ParserBhr, EscapedFramesAndModuleNamesAreUnescaped) {
  auto r =
      ParseWith(BhrPing(R"("timeSinceLastPing":5,"modules":[["x\u00fcl.pdb","ID"]],)"
                        R"("hangs":[{"duration":200,"thread":"Gecko","stack":["a\"b",[0,"1F"],"c\\d"]}])"));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value().hangs.size(), 1u);
  EXPECT_EQ(StackOf(r.value(), 0), (std::vector<std::string>{"a\"b", "x\u00fcl.pdb+0x1f", "c\\d"}));
}

TEST(ParserRejects, OversizedDocumentIsTooLarge) {
  ParseOptions o;
  o.max_document_bytes = 100;
  EXPECT_EQ(ParseWith(MainPing(R"("info":{"subsessionLength":5},"pad":")" + std::string(200, 'x') + "\""), o).reason(),
            RejectReason::kTooLarge);
}

TEST(ParserRejects, UnreadableCreationDateIsIgnoredNotFatal) {
  std::string doc = Replace(MainPing(R"("info":{"subsessionLength":5})"), R"("type":"main")",
                            R"("type":"main","creationDate":"last tuesday")");
  auto r = ParseWith(doc);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().fallback_time);
}

TEST(ParserReuse, OneParserHandlesManyDocumentsOfDifferentSizes) {
  Parser p({}, nullptr);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(p.Parse(DataFile("docs/reference_main.json")).ok());
    EXPECT_TRUE(p.Parse(MainPing(R"("info":{"subsessionLength":5})")).ok());
    EXPECT_FALSE(p.Parse("{").ok());
  }
}

// ParseInto reads a document where it is when the bytes after it may be read: whatever
// they hold (the next documents of a chunk), the result is the one of a padded copy.
TEST(ParserInPlace, ADocumentFollowedByOtherBytesParsesAsItsCopyDoes) {
  const std::string doc = DataFile("docs/reference_bhr.json");
  Parser p({}, nullptr);
  for (const std::string after : {std::string(kParsePadding, ' '), std::string(kParsePadding, '"'),
                                  std::string(kParsePadding, '{'), "\n" + doc}) {
    const std::string chunk = doc + after;
    ParsedDocument in_place;
    ASSERT_FALSE(p.ParseInto(std::string_view(chunk).substr(0, doc.size()), {}, in_place, after.size()));
    auto copied = p.Parse(doc);
    ASSERT_TRUE(copied.ok());
    ASSERT_EQ(in_place.hangs.size(), copied.value().hangs.size());
    for (size_t i = 0; i < in_place.hangs.size(); ++i) {
      EXPECT_EQ(StackOf(in_place, i), StackOf(copied.value(), i));
      EXPECT_EQ(in_place.hangs[i].signature, copied.value().hangs[i].signature);
      EXPECT_EQ(in_place.hangs[i].hang_us, copied.value().hangs[i].hang_us);
    }
    EXPECT_EQ(in_place.usage_ms, copied.value().usage_ms);
  }
  // Trailing garbage is still the document's own: in place it is rejected as a copy is.
  const std::string bad = doc + "}" + std::string(kParsePadding, ' ');
  ParsedDocument out;
  EXPECT_EQ(p.ParseInto(std::string_view(bad).substr(0, doc.size() + 1), {}, out, kParsePadding),
            p.Parse(doc + "}").reason());
}

// A worker's one document, reused: nothing of the previous document stays behind.
TEST(ParserReuse, ADocumentParsedIntoAgainHoldsOnlyTheNewOne) {
  Parser p({}, nullptr);
  ParsedDocument d;
  ASSERT_FALSE(p.ParseInto(DataFile("docs/reference_bhr.json"), {}, d));
  ASSERT_EQ(d.hangs.size(), 2u);
  ASSERT_FALSE(p.ParseInto(BhrPing(R"("timeSinceLastPing":1000,"hangs":[)"
                                   R"({"duration":200,"thread":"T","process":"gpu","stack":["only"]}])"),
                           {}, d));
  ASSERT_EQ(d.hangs.size(), 1u);
  EXPECT_EQ(d.frames.size(), 1u);
  EXPECT_EQ(StackOf(d, 0), std::vector<std::string>{"only"});
  EXPECT_EQ(d.hangs[0].process, "gpu");
  EXPECT_EQ(d.hangs[0].thread, "T");
  EXPECT_EQ(d.usage_ms, 1000);
  EXPECT_TRUE(p.ParseInto("{", {}, d).has_value());
  ASSERT_FALSE(p.ParseInto(MainPing(R"("info":{"subsessionLength":5})"), {}, d));
  EXPECT_TRUE(d.hangs.empty());
  EXPECT_TRUE(d.frames.empty());
}

// Frames are scrubbed before anything sees them, and a signature that is one of them takes
// its scrubbed text; a signature that is another frame keeps its own (SPEC §7).
TEST(ParserScrub, FramesAndTheSignatureThatIsOneOfThemAreScrubbed) {
  auto r = ParseWith(BhrPing(R"("timeSinceLastPing":1000,"hangs":[)"
                             R"({"duration":200,"thread":"Gecko","process":"default",)"
                             R"j("stack":["root","f (https://bank.example.com/a?s=SECRET:42)"]},)j"
                             R"({"duration":200,"thread":"Gecko","process":"default",)"
                             R"("stack":["alice@example.com","leaf"]}])"));
  ASSERT_TRUE(r.ok()) << RejectReasonName(r.reason());
  const ParsedDocument& d = r.value();
  ASSERT_EQ(d.hangs.size(), 2u);
  EXPECT_EQ(StackOf(d, 0), (std::vector<std::string>{"root", "f (https://<host>/<path>:42)"}));
  EXPECT_EQ(d.hangs[0].signature, "f (https://<host>/<path>:42)");
  EXPECT_EQ(StackOf(d, 1), (std::vector<std::string>{"<email>", "leaf"}));
  EXPECT_EQ(d.hangs[1].signature, "leaf");
}

// Views into the document's own arena: a moved document's views still read its texts.
TEST(ParsedDocumentViews, MovedDocumentsKeepTheirTexts) {
  std::vector<ParsedDocument> docs;
  for (int i = 0; i < 50; ++i) {
    ParsedDocument d;
    const std::string frame = "frame-" + std::to_string(i) + std::string(static_cast<size_t>(i) * 1000, 'z');
    d.AddHang("parent", "Gecko", {std::string_view("root"), std::string_view(frame)}, frame, 1, 1);
    docs.push_back(std::move(d));  // the vector reallocates: every document moves
  }
  for (int i = 0; i < 50; ++i) {
    const std::string frame = "frame-" + std::to_string(i) + std::string(static_cast<size_t>(i) * 1000, 'z');
    EXPECT_EQ(test::StackOf(docs[static_cast<size_t>(i)], 0), (std::vector<std::string>{"root", frame}));
    EXPECT_EQ(docs[static_cast<size_t>(i)].hangs[0].signature, frame);
  }
}

}  // namespace
}  // namespace seismo
