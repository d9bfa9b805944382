// Crash documents: processed crash and Telemetry crash ping -> crash data
// (reference §2, SPEC §3.3) and -> ParsedDocument (dimensions, ids, times,
// class).
#include "seismo/parse/crash_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "seismo/signature/generator.h"

namespace seismo {
namespace {

const SignatureGenerator& Gen() {
  static std::unique_ptr<SignatureGenerator> gen = std::move(SignatureGenerator::LoadDefault()).value();
  return *gen;
}

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(SEISMO_SOURCE_DIR) + "/tests/data/signature/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ParsedDocument MustParse(std::string_view json, CrashFormat format) {
  ParseResult<ParsedDocument> r = ParseCrashDocument(json, format, Gen());
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : RejectReasonName(r.reason()));
  return r.ok() ? std::move(r.value()) : ParsedDocument{};
}

RejectReason MustReject(std::string_view json, CrashFormat format) {
  ParseResult<ParsedDocument> r = ParseCrashDocument(json, format, Gen());
  EXPECT_FALSE(r.ok());
  return r.ok() ? RejectReason::kCount_ : r.reason();
}

// --- crash ping ------------------------------------------------------------

TEST(CrashPingTest, ReferenceExampleBecomesModuleFrames) {
  ParseResult<CrashData> cd = CrashDataFromPingJson(ReadData("crash-ping-4.1.json"));
  ASSERT_TRUE(cd.ok());
  EXPECT_EQ(cd.value().os.text, "Windows NT");
  EXPECT_EQ(cd.value().reason.text, "EXCEPTION_BREAKPOINT");
  ASSERT_EQ(cd.value().threads.size(), 1u);
  SignatureResult r = Gen().Generate(cd.value());
  EXPECT_EQ(r.proto_signature, "xul.dll | xul.dll | firefox.exe");
  EXPECT_EQ(r.signature, "xul.dll | firefox.exe");
}

TEST(CrashPingTest, ReferenceExampleDocument) {
  ParsedDocument d = MustParse(ReadData("crash-ping-4.1.json"), CrashFormat::kTelemetryPing);
  EXPECT_EQ(d.kind, DocKind::kCrash);
  EXPECT_EQ(d.dims.channel, "release");
  EXPECT_EQ(d.dims.product, "Firefox");
  EXPECT_EQ(d.dims.version, "86.0");
  EXPECT_EQ(d.dims.build_id, "20210222142601");
  EXPECT_EQ(d.dims.build_date, "20210222");
  EXPECT_EQ(d.dims.os, "Windows_NT");
  // The crash id, not the ping's own id: both pings of one crash share it.
  EXPECT_EQ(d.doc_id, "crash-ping:0d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6");
  EXPECT_FALSE(d.primary_time.has_value());
  ASSERT_TRUE(d.fallback_time.has_value());
  EXPECT_EQ(*d.fallback_time, ParseTimestamp("2021-03-02T11:00:00.000Z"));
  ASSERT_TRUE(d.crash.has_value());
  EXPECT_EQ(d.crash->process, "content");
  EXPECT_EQ(d.crash->crash_class, CrashClass::kContent);
  EXPECT_FALSE(d.crash->startup);
  EXPECT_EQ(d.crash->install_id, "0f0e0d0c-1111-4222-8333-444455556666");
  EXPECT_EQ(d.crash->signature, "xul.dll | firefox.exe");
}

TEST(CrashPingTest, InvalidModuleIndexUsesTheOffset) {
  ParseResult<CrashData> cd = CrashDataFromPingJson(R"j({"type": "crash", "payload": {"stackTraces": {
      "crash_info": {"crashing_thread": 0}, "modules": [{"filename": "a.dll"}],
      "threads": [{"frames": [{"ip": "0x00001000", "module_index": 7}, {"ip": "0x0"}, {"ip": "0x2", "module_index": 0}]}]}}})j");
  ASSERT_TRUE(cd.ok());
  EXPECT_EQ(Gen().Generate(cd.value()).proto_signature, "@0x1000 | @0x0 | a.dll");
}

TEST(CrashPingTest, MetadataAnnotationsAreRightStrippedAndOomSizeIsAnInteger) {
  ParseResult<CrashData> cd = CrashDataFromPingJson(R"j({"type": "crash", "payload": {"metadata": {
      "AbortMessage": "boom  ", "ipc_channel_error": "ShutDownKill\n", "IPCMessageName": "M ",
      "OOMAllocationSize": "12x", "Hang": "ui ", "JSLargeAllocationFailure": "Reporting ",
      "AsyncShutdownTimeout": "{}  "}}})j");
  ASSERT_TRUE(cd.ok());
  const CrashData& c = cd.value();
  EXPECT_EQ(c.abort_message.text, "boom");
  EXPECT_EQ(c.ipc_channel_error.text, "ShutDownKill");
  EXPECT_EQ(c.ipc_message_name.text, "M");
  EXPECT_TRUE(c.oom_allocation_size.is_none());
  EXPECT_EQ(c.hang.text, "ui");
  EXPECT_EQ(c.js_large_allocation_failure.text, "Reporting");
  EXPECT_EQ(c.async_shutdown_timeout.text, "{}");
  ParseResult<CrashData> sized =
      CrashDataFromPingJson(R"j({"payload": {"metadata": {"OOMAllocationSize": "300000"}}})j");
  ASSERT_TRUE(sized.ok());
  EXPECT_EQ(sized.value().oom_allocation_size.text, "300000");
}

TEST(CrashPingTest, NullStackTracesIsAnEmptyStack) {
  ParseResult<CrashData> cd = CrashDataFromPingJson(R"j({"payload": {"stackTraces": null}})j");
  ASSERT_TRUE(cd.ok());
  EXPECT_EQ(Gen().Generate(cd.value()).signature, "EMPTY: no frame data available");
}

TEST(CrashPingTest, WrongTypesAreRejected) {
  EXPECT_EQ(CrashDataFromPingJson(R"j({"payload": {"metadata": {"Hang": 1}}})j").reason(),
            RejectReason::kWrongType);
  EXPECT_EQ(CrashDataFromPingJson(R"j({"payload": {"stackTraces": {"threads": {}}}})j").reason(),
            RejectReason::kWrongType);
  EXPECT_EQ(CrashDataFromPingJson(R"j({"payload": {"stackTraces": {"threads": [{"frames": [{"ip": 5}]}]}}})j")
                .reason(),
            RejectReason::kWrongType);
  EXPECT_EQ(CrashDataFromPingJson(R"j({"payload": 3})j").reason(), RejectReason::kWrongType);
  EXPECT_EQ(CrashDataFromPingJson(R"j({"type": "crash"})j").reason(), RejectReason::kBadCrash);
}

TEST(CrashPingTest, BuildIdMustHaveEightLeadingDigits) {
  EXPECT_EQ(MustReject(R"j({"type": "crash", "application": {"buildId": "2021022"}, "payload": {}})j",
                       CrashFormat::kTelemetryPing),
            RejectReason::kBadBuildId);
  EXPECT_EQ(MustReject(R"j({"type": "crash", "application": {"buildId": "2021x2221"}, "payload": {}})j",
                       CrashFormat::kTelemetryPing),
            RejectReason::kBadBuildId);
  EXPECT_EQ(
      MustReject(R"j({"type": "crash", "application": {}, "payload": {}})j", CrashFormat::kTelemetryPing),
      RejectReason::kMissingBuildId);
  EXPECT_EQ(MustReject(R"j({"type": "crash", "payload": {}})j", CrashFormat::kTelemetryPing),
            RejectReason::kMissingBuildId);
}

TEST(CrashPingTest, MissingDimensionsAreUnknownAndVersionFallsBack) {
  ParsedDocument d = MustParse(
      R"j({"type": "crash", "application": {"buildId": "20210222", "version": "86.0"}, "payload": {"crashId": "c1"},
           "submission_timestamp": "2021-03-02T12:00:00Z"})j",
      CrashFormat::kTelemetryPing);
  EXPECT_EQ(d.dims.channel, "unknown");
  EXPECT_EQ(d.dims.os, "unknown");
  EXPECT_EQ(d.dims.version, "86.0");
  EXPECT_EQ(d.doc_id, "crash-ping:c1");
  EXPECT_EQ(d.primary_time, ParseTimestamp("2021-03-02T12:00:00Z"));
  ASSERT_TRUE(d.crash.has_value());
  EXPECT_EQ(d.crash->process, "parent");  // processType missing -> parent
  EXPECT_EQ(d.crash->crash_class, CrashClass::kParent);
}

TEST(CrashPingTest, BadSubmissionTimestampIsRejectedBadCreationDateIgnored) {
  EXPECT_EQ(
      MustReject(
          R"j({"application": {"buildId": "20210222"}, "payload": {}, "submission_timestamp": "yesterday"})j",
          CrashFormat::kTelemetryPing),
      RejectReason::kBadTimestamp);
  ParsedDocument d =
      MustParse(R"j({"application": {"buildId": "20210222"}, "payload": {}, "creationDate": "soon"})j",
                CrashFormat::kTelemetryPing);
  EXPECT_FALSE(d.fallback_time.has_value());
  EXPECT_EQ(MustReject(R"j({"application": {"buildId": 20210222}, "payload": {}})j", CrashFormat::kTelemetryPing),
            RejectReason::kWrongType);
  // Unreadable text is ignored; a value that is not a string is a wrong type, as in main pings.
  EXPECT_EQ(MustReject(R"j({"application": {"buildId": "20210222"}, "payload": {}, "creationDate": 1})j",
                       CrashFormat::kTelemetryPing),
            RejectReason::kWrongType);
}

TEST(CrashPingTest, ShutDownKillContentIsContentShutdownAndStartupFlag) {
  ParsedDocument d = MustParse(
      R"j({"application": {"buildId": "20210222"}, "payload": {"processType": "tab",
           "metadata": {"ipc_channel_error": "ShutDownKill", "StartupCrash": "1"}}})j",
      CrashFormat::kTelemetryPing);
  ASSERT_TRUE(d.crash.has_value());
  EXPECT_EQ(d.crash->crash_class, CrashClass::kContentShutdown);
  EXPECT_TRUE(d.crash->startup);
  EXPECT_EQ(d.crash->signature, "IPCError-content | ShutDownKill");
}

// --- processed crash -------------------------------------------------------

TEST(ProcessedCrashTest, ReferenceExampleDocument) {
  ParsedDocument d = MustParse(ReadData("processed-crash-example.json"), CrashFormat::kProcessed);
  EXPECT_EQ(d.dims.channel, "release");
  EXPECT_EQ(d.dims.product, "Firefox");
  EXPECT_EQ(d.dims.version, "130.0");
  EXPECT_EQ(d.dims.build_id, "20260901000000");
  EXPECT_EQ(d.dims.build_date, "20260901");
  EXPECT_EQ(d.dims.os, "Windows_NT");  // Socorro's name mapped onto Telemetry's
  EXPECT_EQ(d.doc_id, "crash:de1bb258-cbbf-4589-a673-34f800260918");
  EXPECT_EQ(d.primary_time, ParseTimestamp("2026-09-18T12:34:56.123456+00:00"));
  ASSERT_TRUE(d.crash.has_value());
  EXPECT_EQ(d.crash->process, "content");
  // mozalloc_abort is irrelevant and the only frame; OOM large from the size.
  EXPECT_EQ(d.crash->signature, "OOM | large | mozalloc_abort");
}

TEST(ProcessedCrashTest, UsesCrashInfoThreadNotTopLevelCrashingThread) {
  ParseResult<CrashData> cd = CrashDataFromProcessedJson(R"j({"crashing_thread": 1,
      "json_dump": {"crash_info": {"crashing_thread": 0, "type": "SIGSEGV"}, "system_info": {"os": "Linux"},
                    "crashing_thread": {"frames": [{"function": "wrong"}]},
                    "threads": [{"frames": [{"function": "right"}]}, {"frames": [{"function": "other"}]}]}})j");
  ASSERT_TRUE(cd.ok());
  EXPECT_EQ(Gen().Generate(cd.value()).signature, "right");
  EXPECT_EQ(cd.value().reason.text, "SIGSEGV");
  EXPECT_EQ(cd.value().os.text, "Linux");
}

TEST(ProcessedCrashTest, WithoutJsonDumpThereIsNoStack) {
  ParseResult<CrashData> cd =
      CrashDataFromProcessedJson(R"j({"crashing_thread": 0, "reason": "EXCEPTION_STACK_OVERFLOW",
      "mdsw_status_string": "OK"})j");
  ASSERT_TRUE(cd.ok());
  EXPECT_TRUE(cd.value().reason.is_none());  // only from json_dump
  EXPECT_EQ(Gen().Generate(cd.value()).signature, "EMPTY: no frame data available; OK");
}

TEST(ProcessedCrashTest, IntOrNoneDropsUnparsableSizes) {
  ParseResult<CrashData> cd = CrashDataFromProcessedJson(R"j({"oom_allocation_size": "big"})j");
  ASSERT_TRUE(cd.ok());
  EXPECT_TRUE(cd.value().oom_allocation_size.is_none());
  ParseResult<CrashData> numeric = CrashDataFromProcessedJson(R"j({"oom_allocation_size": " 17 "})j");
  ASSERT_TRUE(numeric.ok());
  EXPECT_EQ(numeric.value().oom_allocation_size.kind, PyValue::Kind::kInt);
  EXPECT_EQ(numeric.value().oom_allocation_size.text, "17");
}

TEST(ProcessedCrashTest, CrashDataDictWithoutJsonDumpIsReadAsIs) {
  ParsedDocument d = MustParse(R"j({"product": "Firefox", "threads": [{"frames": [{"function": "f"}]}]})j",
                               CrashFormat::kProcessed);
  ASSERT_TRUE(d.crash.has_value());
  EXPECT_EQ(d.crash->signature, "f");
  EXPECT_EQ(d.dims.build_id, "unknown");
  EXPECT_EQ(d.dims.build_date, "unknown");
}

TEST(ProcessedCrashTest, AnnotationNamesAreFallbacks) {
  ParsedDocument d = MustParse(R"j({"ReleaseChannel": "beta", "ProductName": "Fenix", "Version": "1.0",
      "BuildID": "20260101000000", "crash_id": "x", "date_processed": "2026-01-02T00:00:00Z",
      "startup_crash": "1", "install_time": 1700000000, "process_type": null})j",
                               CrashFormat::kProcessed);
  EXPECT_EQ(d.dims.channel, "beta");
  EXPECT_EQ(d.dims.product, "Fenix");
  EXPECT_EQ(d.dims.version, "1.0");
  EXPECT_EQ(d.dims.build_date, "20260101");
  EXPECT_EQ(d.doc_id, "crash:x");
  EXPECT_EQ(d.primary_time, ParseTimestamp("2026-01-02T00:00:00Z"));
  ASSERT_TRUE(d.crash.has_value());
  EXPECT_TRUE(d.crash->startup);
  EXPECT_EQ(d.crash->install_id, "1700000000");
  EXPECT_EQ(d.crash->process, "parent");
}

TEST(ProcessedCrashTest, MalformedBuildIsRejectedMissingIsUnknown) {
  EXPECT_EQ(MustReject(R"j({"build": "abc"})j", CrashFormat::kProcessed), RejectReason::kBadBuildId);
  EXPECT_EQ(MustReject(R"j({"build": 2026})j", CrashFormat::kProcessed), RejectReason::kWrongType);
  EXPECT_EQ(MustParse("{}", CrashFormat::kProcessed).dims.build_id, "unknown");
}

TEST(ProcessedCrashTest, WrongTypesAreRejected) {
  EXPECT_EQ(MustReject(R"j({"product": 5})j", CrashFormat::kProcessed), RejectReason::kWrongType);
  EXPECT_EQ(MustReject(R"j({"process_type": []})j", CrashFormat::kProcessed), RejectReason::kWrongType);
  EXPECT_EQ(MustReject(R"j({"uuid": 1})j", CrashFormat::kProcessed), RejectReason::kWrongType);
}

// --- shared ----------------------------------------------------------------

TEST(CrashJsonTest, MalformedAndNonObjectDocumentsAreRejected) {
  EXPECT_EQ(CrashDataFromJson("{").reason(), RejectReason::kMalformedJson);
  EXPECT_EQ(CrashDataFromJson("[]").reason(), RejectReason::kNotObject);
  EXPECT_EQ(CrashDataFromJson("\"x\"").reason(), RejectReason::kNotObject);
  EXPECT_EQ(CrashDataFromJson("{\"a\": \"\xff\"}").reason(), RejectReason::kInvalidUtf8);
  EXPECT_EQ(MustReject("{} x", CrashFormat::kProcessed), RejectReason::kMalformedJson);
}

TEST(CrashJsonTest, DetectsTheThreeShapes) {
  CrashInput kind;
  ASSERT_TRUE(CrashDataFromAnyJson(R"j({"type": "crash", "payload": {}})j", &kind).ok());
  EXPECT_EQ(kind, CrashInput::kPing);
  ASSERT_TRUE(CrashDataFromAnyJson(R"j({"json_dump": {}})j", &kind).ok());
  EXPECT_EQ(kind, CrashInput::kProcessed);
  ASSERT_TRUE(CrashDataFromAnyJson(R"j({"threads": []})j", &kind).ok());
  EXPECT_EQ(kind, CrashInput::kCrashData);
}

TEST(CrashJsonTest, OtherTelemetryPingsAreNotCrashData) {
  EXPECT_EQ(CrashDataFromAnyJson(R"j({"type": "main", "payload": {}})j").reason(),
            RejectReason::kUnknownKind);
  EXPECT_EQ(CrashDataFromAnyJson(R"j({"type": "bhr", "threads": []})j").reason(), RejectReason::kUnknownKind);
  EXPECT_TRUE(CrashDataFromAnyJson(R"j({"type": 3, "threads": []})j").ok());  // not a ping type: a dict key
}

// The two pings one crash sends (crash reporter client, CrashManager) have their own
// ids but one crashId; without a crashId the ping's id is the key.
TEST(CrashPingTest, DeduplicationKeyIsTheCrashIdThenTheId) {
  const char* with = R"j({"type": "crash", "id": "ping-1", "application": {"buildId": "20210222"},
                          "payload": {"crashId": "crash-9"}})j";
  const char* without = R"j({"type": "crash", "id": "ping-2", "application": {"buildId": "20210222"},
                             "payload": {}})j";
  EXPECT_EQ(MustParse(with, CrashFormat::kTelemetryPing).doc_id, "crash-ping:crash-9");
  EXPECT_EQ(MustParse(without, CrashFormat::kTelemetryPing).doc_id, "crash-ping:ping-2");
}

TEST(ProcessedCrashTest, SocorroOsNamesAreMappedOntoTelemetryNames) {
  auto os_of = [](const char* name) {
    std::string doc = std::string(R"j({"uuid": "u", "os_name": ")j") + name + "\"}";
    return MustParse(doc, CrashFormat::kProcessed).dims.os;
  };
  EXPECT_EQ(os_of("Windows NT"), "Windows_NT");
  EXPECT_EQ(os_of("Mac OS X"), "Darwin");
  EXPECT_EQ(os_of("Linux"), "Linux");
  EXPECT_EQ(os_of("Android"), "Android");
  // The signature still sees Socorro's name (Windows module names are lower-cased).
  ParsedDocument d = MustParse(R"j({"uuid": "u", "os_name": "Windows NT", "json_dump": {"system_info":
      {"os": "Windows NT"}, "crash_info": {"crashing_thread": 0}, "threads": [{"frames": [{"module": "XUL.DLL"}]}]}})j",
                               CrashFormat::kProcessed);
  EXPECT_EQ(d.dims.os, "Windows_NT");
  EXPECT_EQ(d.crash->signature, "xul.dll");
}

TEST(CrashJsonTest, DuplicateKeysKeepTheLastValueLikePython) {
  ParseResult<CrashData> cd = CrashDataFromJson(R"j({"hang": "a", "hang": "b"})j");
  ASSERT_TRUE(cd.ok());
  EXPECT_EQ(cd.value().hang.text, "b");
}

TEST(CrashClassTest, MissionControlClasses) {
  EXPECT_EQ(ClassifyCrash("parent", "ShutDownKill"), CrashClass::kParent);
  EXPECT_EQ(ClassifyCrash("content", ""), CrashClass::kContent);
  EXPECT_EQ(ClassifyCrash("content", "xShutDownKilly"), CrashClass::kContentShutdown);
  EXPECT_EQ(ClassifyCrash("gpu", ""), CrashClass::kGpu);
  EXPECT_EQ(ClassifyCrash("rdd", ""), CrashClass::kRdd);
  EXPECT_EQ(ClassifyCrash("socket", ""), CrashClass::kSocket);
  EXPECT_EQ(ClassifyCrash("utility", ""), CrashClass::kUtility);
  EXPECT_EQ(ClassifyCrash("gmplugin", ""), CrashClass::kGmplugin);
  EXPECT_EQ(ClassifyCrash("plugin", ""), CrashClass::kPlugin);
  EXPECT_EQ(ClassifyCrash("vr", ""), CrashClass::kOther);
}

}  // namespace
}  // namespace seismo
