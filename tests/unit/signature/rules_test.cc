// The ruleset (reference §3, §5, §7, §14): one behaviour per test, rule by
// rule, then the consequences of their order.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "signature_test_util.h"

namespace seismo {
namespace {

using testing_util::Generate;
using testing_util::Sig;
using testing_util::StackOf;

const std::string kHello = StackOf({"hello"});

// --- 1. SignatureGenerationRule -------------------------------------------

TEST(StackSignatureTest, EmptyCrashDataHasNoFrameData) {
  SignatureResult r = Generate("{}");
  EXPECT_EQ(r.signature, "EMPTY: no frame data available");
  EXPECT_EQ(r.proto_signature, "");
}

TEST(StackSignatureTest, WalkStopsAtFirstFrameThatIsNeitherIrrelevantNorPrefix) {
  // §4.8 worked example.
  EXPECT_EQ(Sig(StackOf({"NtWaitForMultipleObjects", "WaitForMultipleObjectsEx",
                         "WaitForMultipleObjectsExImplementation", "RealMsgWaitForMultipleObjectsEx",
                         "MsgWaitForMultipleObjects", "F_1152915508_____", "Next"})),
            "MsgWaitForMultipleObjects | F_1152915508_____");
}

TEST(StackSignatureTest, ProtoSignatureHasEveryFrameIncludingEmptyOnes) {
  SignatureResult r = Generate(R"j({"threads": [{"frames": [{"function": "a"}, {}, {"function": "b"}]}]})j");
  EXPECT_EQ(r.proto_signature, "a |  | b");
  EXPECT_EQ(r.signature, "a");
}

TEST(StackSignatureTest, CrashingThreadIsConvertedWithInt) {
  std::string threads = R"j("threads": [{"frames": [{"function": "zero"}]}, {"frames": [{"function": "one"}]}])j";
  EXPECT_EQ(Sig("{\"crashing_thread\": \"1\", " + threads + "}"), "one");
  EXPECT_EQ(Sig("{\"crashing_thread\": \" 1 \", " + threads + "}"), "one");
  EXPECT_EQ(Sig("{\"crashing_thread\": true, " + threads + "}"), "one");
  EXPECT_EQ(Sig("{\"crashing_thread\": 1.9, " + threads + "}"), "one");
  EXPECT_EQ(Sig("{\"crashing_thread\": \"x\", " + threads + "}"), "zero");
  EXPECT_EQ(Sig("{\"crashing_thread\": \"\", " + threads + "}"), "zero");
  EXPECT_EQ(Sig("{\"crashing_thread\": null, " + threads + "}"), "zero");
  EXPECT_EQ(Sig("{\"crashing_thread\": [1], " + threads + "}"), "zero");
}

TEST(StackSignatureTest, NegativeCrashingThreadCountsFromTheEnd) {
  std::string threads = R"j("threads": [{"frames": [{"function": "zero"}]}, {"frames": [{"function": "one"}]}])j";
  EXPECT_EQ(Sig("{\"crashing_thread\": -1, " + threads + "}"), "one");
  EXPECT_EQ(Sig("{\"crashing_thread\": -2, " + threads + "}"), "zero");
  EXPECT_EQ(Sig("{\"crashing_thread\": -3, " + threads + "}"), "EMPTY: no frame data available");
}

TEST(StackSignatureTest, NullFramesMakeTheRuleFail) {
  SignatureResult r = Generate(R"j({"threads": [{"frames": null}]})j");
  EXPECT_EQ(r.signature, "");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(r.notes[0].starts_with("SignatureGenerationRule: Rule failed: ")) << r.notes[0];
}

TEST(StackSignatureTest, NullFrameMakesTheRuleFail) {
  SignatureResult r = Generate(R"j({"threads": [{"frames": [{"function": "a"}, null]}]})j");
  EXPECT_EQ(r.signature, "");
  EXPECT_EQ(r.proto_signature, "");
}

TEST(StackSignatureTest, NullFrameBeyondFortyIsNeverRead) {
  std::string frames;
  for (int i = 0; i < 40; ++i) frames += R"j({"offset": "0x1234"},)j";
  EXPECT_EQ(Sig(R"j({"threads": [{"frames": [)j" + frames + "null]}]}"), "@0x1234");
}

TEST(StackSignatureTest, ThreadsThatAreNotAListGiveNoFrames) {
  EXPECT_EQ(Sig(R"j({"threads": {"0": {"frames": [{"function": "a"}]}}})j"), "EMPTY: no frame data available");
  EXPECT_EQ(Sig(R"j({"threads": null})j"), "EMPTY: no frame data available");
}

TEST(StackSignatureTest, AllIrrelevantFallsBackToFirstFrameWithNote) {
  SignatureResult r = Generate(StackOf({"@0x1234", "@0x5678"}));
  // (offsets given as functions normalise to themselves)
  EXPECT_EQ(r.signature, "@0x1234");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "SignatureGenerationRule: CSignatureTool: no frame data for crashing thread (0)");
}

TEST(StackSignatureTest, AllFramesEmptyGiveEmptySignature) {
  EXPECT_EQ(Sig(R"j({"threads": [{"frames": [{}, {}]}]})j"), "");
}

TEST(StackSignatureTest, NullCallIsAPrefixOtherOffsetsAreIrrelevant) {
  EXPECT_EQ(Sig(R"j({"threads": [{"frames": [{"offset": "0x0"}, {"offset": "0x10"}, {"function": "f"}]}]})j"),
            "@0x0 | f");
}

TEST(StackSignatureTest, UnloadedDllIsAPrefixUnloadedSoIsNot) {
  EXPECT_EQ(Sig(R"j({"threads": [{"frames": [{"unloaded_modules": [{"module": "a.so"}]}, {"function": "f"}]}]})j"),
            "(unloaded a.so)");
  EXPECT_EQ(Sig(R"j({"threads": [{"frames": [{"unloaded_modules": [{"module": "a.dll"}]}, {"function": "f"}]}]})j"),
            "(unloaded a.dll) | f");
}

TEST(StackSignatureTest, DllCollapseIsCaseSensitiveAfterLowerCasing) {
  EXPECT_EQ(Sig(R"j({"threads": [{"frames": [{"module": "a.dll"}, {"module": "A.dll"}, {"function": "f"}]}]})j"),
            "a.dll | A.dll | f");
  EXPECT_EQ(Sig(R"j({"os": "Windows NT", "threads": [{"frames": [{"module": "a.dll"}, {"module": "A.dll"}, {"function": "f"}]}]})j"),
            "a.dll | f");
}

TEST(StackSignatureTest, UnloadedFramesNeverCollapse) {
  EXPECT_EQ(Sig(R"j({"threads": [{"frames": [{"unloaded_modules": [{"module": "a.dll"}]},
                                            {"unloaded_modules": [{"module": "a.dll"}]}, {"function": "f"}]}]})j"),
            "(unloaded a.dll) | (unloaded a.dll) | f");
}

TEST(StackSignatureTest, SentinelCutsEverythingAbove) {
  EXPECT_EQ(Sig(StackOf({"nsFoo::Bar", "_purecall", "nsBaz::Qux"})), "_purecall | nsBaz::Qux");
}

TEST(StackSignatureTest, IrrelevantSentinelDiscardsItselfToo) {
  EXPECT_EQ(Sig(StackOf({"a::b", "mozilla::detail::MutexImpl::lock", "Caller::Method"})), "Caller::Method");
}

TEST(StackSignatureTest, ConditionalRpcChannelSentinelIsDead) {
  EXPECT_EQ(Sig(StackOf({"Foo::Bar", "RPCChannel::Call", "Baz"})), "Foo::Bar");
}

TEST(StackSignatureTest, EntryInBothListsActsAsIrrelevant) {
  EXPECT_EQ(Sig(StackOf({"KiFastSystemCall", "Foo"})), "Foo");
}

TEST(StackSignatureTest, PrefixMatchIsAnchoredAtStartOnly) {
  EXPECT_EQ(Sig(StackOf({"sendmsg", "Foo"})), "sendmsg | Foo");     // prefix `send`
  EXPECT_EQ(Sig(StackOf({"zeroize_thing", "Foo"})), "Foo");          // irrelevant `zero`
  EXPECT_EQ(Sig(StackOf({"my_free_wrapper", "Foo"})), "my_free_wrapper | Foo");  // `.*free`
}

// --- 2. StackwalkerErrorSignatureRule ---------------------------------------

TEST(StackwalkerErrorRuleTest, AppendsStatusToEmptySignatures) {
  EXPECT_EQ(Sig(R"j({"mdsw_status_string": "OK"})j"), "EMPTY: no frame data available; OK");
  EXPECT_EQ(Sig(R"j({"mdsw_status_string": "EmptyMinidump"})j"), "EMPTY: no frame data available; EmptyMinidump");
}

TEST(StackwalkerErrorRuleTest, LeavesRealSignaturesAlone) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("mdsw_status_string": "OK")j")), "hello");
}

// --- 3. BadHardware ----------------------------------------------------------

TEST(BadHardwareRuleTest, MatchesDeviceDataErrorAnywhereInReason) {
  EXPECT_EQ(Sig(StackOf({"Text"}, R"j("reason": "X / STATUS_DEVICE_DATA_ERROR / Y")j")), "bad hardware | Text");
  EXPECT_EQ(Sig(StackOf({"Text"}, R"j("reason": "EXCEPTION_ACCESS_VIOLATION_READ")j")), "Text");
}

// --- 4. OOMSignature ---------------------------------------------------------

TEST(OomRuleTest, SmallAllocationDropsTheStack) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("oom_allocation_size": 262144)j")), "OOM | small");
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("oom_allocation_size": 262145)j")), "OOM | large | hello");
}

TEST(OomRuleTest, SizeZeroIsNotAnIndicatorButIsSmallWithOne) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("oom_allocation_size": 0)j")), "hello");
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("oom_allocation_size": 0, "reason": "STATUS_NO_MEMORY")j")), "OOM | small");
}

TEST(OomRuleTest, NumericStringSizeIsConverted) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("oom_allocation_size": "1048576")j")), "OOM | large | hello");
}

TEST(OomRuleTest, NonNumericSizeMakesTheRuleFail) {
  SignatureResult r = Generate(StackOf({"hello"}, R"j("oom_allocation_size": "lots")j"));
  EXPECT_EQ(r.signature, "hello");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(r.notes[0].starts_with("OOMSignature: Rule failed: "));
}

TEST(OomRuleTest, IndicatorsWithoutSizeGiveUnknown) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("reason": "STATUS_FATAL_MEMORY_EXHAUSTION")j")), "OOM | unknown | hello");
  EXPECT_EQ(Sig(R"j({"threads": [{"last_error_value": "ERROR_NOT_ENOUGH_MEMORY", "frames": [{"function": "hello"}]}]})j"),
            "OOM | unknown | hello");
  EXPECT_EQ(Sig(StackOf({"NS_ABORT_OOM", "hello"})), "OOM | unknown | NS_ABORT_OOM | hello");
  // A fragment counts only when it is in the signature: mozalloc_handle_oom is irrelevant.
  EXPECT_EQ(Sig(StackOf({"mozalloc_handle_oom", "hello"})), "hello");
}

TEST(OomRuleTest, EmptySignatureIsNeverOomWithoutSize) {
  EXPECT_EQ(Sig(R"j({"reason": "STATUS_NO_MEMORY", "threads": [{"frames": [{}]}]})j"), "");
}

TEST(OomRuleTest, JsLargeAllocationReportingIsLargeEvenWhenSmall) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("js_large_allocation_failure": "Reporting", "oom_allocation_size": 5)j")),
            "OOM | large | hello");
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("js_large_allocation_failure": "Recovered")j")), "hello");
}

// --- 5. AbortSignature -------------------------------------------------------

TEST(AbortRuleTest, EmptyMessageAfterCleaningStillAddsItsSlot) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("abort_message": "\u00e9\u00e9")j")), "Abort | | hello");
}

TEST(AbortRuleTest, EightyCharactersAreKept) {
  std::string m(80, 'a');
  EXPECT_EQ(Sig(StackOf({"hello"}, "\"abort_message\": \"" + m + "\"")), "Abort | " + m + " | hello");
}

TEST(AbortRuleTest, NonStringMessageMakesTheRuleFail) {
  SignatureResult r = Generate(StackOf({"hello"}, R"j("abort_message": 5)j"));
  EXPECT_EQ(r.signature, "hello");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(r.notes[0].starts_with("AbortSignature: Rule failed"));
}

// --- 6. SignatureShutdownTimeout ---------------------------------------------

TEST(ShutdownTimeoutRuleTest, ReferenceExample) {
  EXPECT_EQ(Sig(StackOf({"foo"}, R"j("async_shutdown_timeout": "{\"phase\":\"profile-before-change\",\"conditions\":[{\"name\":\"OS.File: Waiting for reads\"}]}")j")),
            "AsyncShutdownTimeout | profile-before-change | OS.File: Waiting for reads");
}

TEST(ShutdownTimeoutRuleTest, NonStringPhaseIsUnknown) {
  EXPECT_EQ(Sig(StackOf({"foo"}, R"j("async_shutdown_timeout": "{\"phase\": 3, \"conditions\": null}")j")),
            "AsyncShutdownTimeout | (unknown) | (none)");
}

TEST(ShutdownTimeoutRuleTest, ConditionWithoutNameIsUnknown) {
  EXPECT_EQ(Sig(StackOf({"foo"}, R"j("async_shutdown_timeout": "{\"phase\": \"p\", \"conditions\": [{\"who\": 1}]}")j")),
            "AsyncShutdownTimeout | p | UNKNOWN");
}

TEST(ShutdownTimeoutRuleTest, ConditionsUsePythonStr) {
  EXPECT_EQ(Sig(StackOf({"foo"}, R"j("async_shutdown_timeout": "{\"phase\": \"p\", \"conditions\": [true, null, 5, {\"name\": 2.5}]}")j")),
            "AsyncShutdownTimeout | p | 2.5,5,None,True");
}

TEST(ShutdownTimeoutRuleTest, NonObjectJsonMakesTheRuleFail) {
  SignatureResult r = Generate(StackOf({"foo"}, R"j("async_shutdown_timeout": "[1, 2]")j"));
  EXPECT_EQ(r.signature, "foo");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_TRUE(r.notes.back().starts_with("SignatureShutdownTimeout: Rule failed"));
}

// --- 7. SignatureRunWatchDog -------------------------------------------------

TEST(RunWatchdogRuleTest, RegeneratesFromThreadZero) {
  EXPECT_EQ(Sig(R"j({"crashing_thread": 1, "threads": [{"frames": [{"function": "Main::Loop"}]},
                   {"frames": [{"function": "mozilla::(anonymous namespace)::RunWatchdog(void*)"}]}]})j"),
            "shutdownhang | Main::Loop");
}

TEST(RunWatchdogRuleTest, RegenerationWipesEarlierPrefixes) {
  EXPECT_EQ(Sig(R"j({"crashing_thread": 1, "oom_allocation_size": 9999999, "threads": [{"frames": [{"function": "Main::Loop"}]},
                   {"frames": [{"function": "RunWatchdog"}]}]})j"),
            "shutdownhang | Main::Loop");
}

TEST(RunWatchdogRuleTest, EmptyThreadZeroKeepsTheOldSignature) {
  EXPECT_EQ(Sig(R"j({"crashing_thread": 1, "threads": [{"frames": [{}]}, {"frames": [{"function": "RunWatchdog"}]}]})j"),
            "shutdownhang | RunWatchdog");
}

// --- 8./9. IPC ---------------------------------------------------------------

TEST(IpcRuleTest, ChannelErrorKeepsOneHundredCodePoints) {
  std::string e;
  for (int i = 0; i < 120; ++i) e += "\\u00e9";
  // non-ASCII is cut to 100 code points first, then deleted by the clean-up
  EXPECT_EQ(Sig(StackOf({"x"}, "\"ipc_channel_error\": \"" + e + "\"")), "IPCError-content |");
}

TEST(IpcRuleTest, MessageNameIsAppendedRaw) {
  EXPECT_EQ(Sig(StackOf({"x"}, R"j("ipc_message_name": "PFoo::Msg_Bar")j")), "x | IPC_Message_Name=PFoo::Msg_Bar");
}

// --- 10./11. stack overflow, hang -------------------------------------------

TEST(StackOverflowRuleTest, NeedsTheExactReason) {
  EXPECT_EQ(Sig(StackOf({"x"}, R"j("reason": "EXCEPTION_STACK_OVERFLOW")j")), "stackoverflow | x");
  EXPECT_EQ(Sig(StackOf({"x"}, R"j("reason": "EXCEPTION_STACK_OVERFLOW ")j")), "x");
}

TEST(HungProcessRuleTest, EmptyHangStillPrefixes) { EXPECT_EQ(Sig(StackOf({"x"}, R"j("hang": "")j")), "hang: | x"); }

TEST(HungProcessRuleTest, NullHangDoesNothingAndNonStringsUseStr) {
  EXPECT_EQ(Sig(StackOf({"x"}, R"j("hang": null)j")), "x");
  EXPECT_EQ(Sig(StackOf({"x"}, R"j("hang": 1)j")), "hang: 1 | x");
  EXPECT_EQ(Sig(StackOf({"x"}, R"j("hang": false)j")), "hang: False | x");
}

// --- 12.-14. clean-up --------------------------------------------------------

TEST(CleanupRuleTest, NonPrintableCharactersAreDeletedNotSpaced) {
  EXPECT_EQ(Sig(StackOf({"foo\\tbar"})), "foobar");
  EXPECT_EQ(Sig(StackOf({"foo\\u00e9bar"})), "foobar");
}

TEST(CleanupRuleTest, PrintableNoteAlsoForSurroundingWhitespace) {
  SignatureResult r = Generate(StackOf({"hello"}, R"j("ipc_message_name": "x ")j"));
  EXPECT_EQ(r.signature, "hello | IPC_Message_Name=x");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "SigPrintableCharsOnly: unprintable characters removed");
}

TEST(CleanupRuleTest, RunsOfSpacesCollapse) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("ipc_message_name": "a    b")j")), "hello | IPC_Message_Name=a b");
}

TEST(CleanupRuleTest, TruncationGivesExactly255Characters) {
  std::string f(300, 'x');
  SignatureResult r = Generate(StackOf({f}));
  EXPECT_EQ(r.signature.size(), 255u);
  EXPECT_EQ(r.signature, std::string(252, 'x') + "...");
  EXPECT_EQ(r.notes.back(), "SigTruncate: SigTrunc: signature truncated due to length");
}

// --- Order consequences (§3) and surprises (§14) ----------------------------

TEST(RuleOrderTest, HangAndPrefixesStackUp) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("hang": "ui", "oom_allocation_size": 17)j")), "hang: ui | OOM | small");
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("abort_message": "msg", "oom_allocation_size": 17)j")), "Abort | msg | OOM | small");
}

TEST(RuleOrderTest, ShutdownTimeoutWipesEarlierButLaterRulesStillAdd) {
  EXPECT_EQ(Sig(StackOf({"foo"}, R"j("abort_message": "m", "hang": "shutdown", "async_shutdown_timeout": "{\"phase\": \"p\"}")j")),
            "hang: shutdown | AsyncShutdownTimeout | p | (none)");
}

TEST(RuleOrderTest, MozCrashReasonAndJitCategoryAreIgnored) {
  EXPECT_EQ(Sig(StackOf({"hello"}, R"j("moz_crash_reason": "MOZ_RELEASE_ASSERT(parentBuildID == childBuildID)", "jit_category": "x", "hang_type": 1)j")),
            "hello");
}

TEST(JavaRuleTest, SanitizedProductionTrace) {
  EXPECT_EQ(Sig(R"j({"java_stack_trace": "java.lang.NullPointerException\n\tat org.mozilla.gecko.Foo.bar(Foo.java:12)"})j"),
            "java.lang.NullPointerException: at org.mozilla.gecko.Foo.bar(Foo.java)");
  EXPECT_EQ(Sig(R"j({"java_stack_trace": "malformed"})j"), "malformed");
}

TEST(JavaRuleTest, JavaTraceTakesPrecedenceOverEverything) {
  EXPECT_EQ(Sig(StackOf({"native"}, R"j("java_stack_trace": "E: m", "java_exception": {"exception": {}})j")), "E: m");
}

TEST(JavaRuleTest, LongDescriptionWithoutSecondLineGivesClassColon) {
  std::string d(300, 't');
  EXPECT_EQ(Sig("{\"java_stack_trace\": \"Cls: " + d + "\"}"), "Cls:");
}

TEST(JavaRuleTest, NonStringTraceIsNotInExpectedFormat) {
  EXPECT_EQ(Sig(R"j({"java_stack_trace": 5})j"), "EMPTY: Java stack trace not in expected format");
  EXPECT_EQ(Sig(R"j({"java_stack_trace": "\n"})j"), "");
}

TEST(JavaRuleTest, ExceptionWithoutTypeIsUnknown) {
  EXPECT_EQ(Sig(R"j({"java_exception": {"exception": {"values": [{"stacktrace": {"frames": [{"function": "f"}]}}]}}})j"),
            "Unknown: at f");
}

TEST(GeneratorTest, GenerateIsSafeFromManyThreads) {
  std::string doc = StackOf({"NtWaitForMultipleObjects", "nsThread::ProcessNextEvent", "Foo<int>::Bar(int)", "x"});
  std::string expected = Sig(doc);
  ParseResult<CrashData> data = CrashDataFromJson(doc);
  ASSERT_TRUE(data.ok());
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        if (testing_util::DefaultGenerator().Generate(data.value()).signature != expected) ++mismatches;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace seismo
