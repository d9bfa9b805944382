// Frame normalisation (reference §4.4–§4.7), one behaviour per test.
#include <gtest/gtest.h>

#include "signature/normalize.h"
#include "signature_test_util.h"

namespace seismo {
namespace {

using signature_internal::CollapseArgumentsCpp;
using signature_internal::CollapseTypesCpp;
using signature_internal::DropPrefixAndReturnType;
using signature_internal::ParseSourceFile;
using testing_util::NormalizedFrame;

std::string Fn(std::string_view function) {
  return NormalizedFrame(std::string(R"j({"function": ")j") + std::string(function) + "\"}");
}

std::string Drop(std::string_view f) {
  std::string_view out;
  EXPECT_TRUE(DropPrefixAndReturnType(f, &out));
  return std::string(out);
}

TEST(DropPrefixTest, DropsStaticAndReturnType) {
  EXPECT_EQ(Drop("static void * Allocator<MozJemallocBase>::malloc(unsigned __int64)"),
            "Allocator<MozJemallocBase>::malloc(unsigned __int64)");
}

TEST(DropPrefixTest, KeepsCloneSuffixAttachedToTheFunction) {
  EXPECT_EQ(Drop("nsXPConnect::InitStatics() [clone .cold.638]"), "nsXPConnect::InitStatics() [clone .cold.638]");
}

TEST(DropPrefixTest, BacktickApostropheIsABracketPair) {
  EXPECT_EQ(Drop("[thunk]:CShellItem::QueryInterface`adjustor{12}' (_GUID const&, void**)"),
            "[thunk]:CShellItem::QueryInterface`adjustor{12}' (_GUID const&, void**)");
}

TEST(DropPrefixTest, UnmatchedCloserIsAnOrdinaryCharacter) {
  EXPECT_EQ(Drop("a) b"), "b");
  EXPECT_EQ(Drop("(a> b) c"), "c");
}

TEST(DropPrefixTest, ConsecutiveSpacesMakeEmptyTokens) {
  EXPECT_EQ(Drop("void  f"), "f");
  // "(int)" merges with the empty token before it; " (int)" then stops the merge.
  EXPECT_EQ(Drop("void f  (int)"), " (int)");
}

TEST(DropPrefixTest, EmptyStringHasNoTokens) {
  std::string_view out;
  EXPECT_FALSE(DropPrefixAndReturnType("", &out));
}

TEST(NormalizeCppTest, OperatorNewWithoutScopeLosesItsName) { EXPECT_EQ(Fn("operator new(unsigned long)"), "new"); }

TEST(NormalizeCppTest, TrailingConstIsAPlainSuffixTest) {
  EXPECT_EQ(Fn("make_const"), "make_");
  EXPECT_EQ(Fn("Foo::operator&"), "Foo::operator");
}

TEST(NormalizeCppTest, QualifierRemovalThatEmptiesTheNameGivesAnEmptyStack) {
  // drop_prefix_and_return_type("") raises IndexError, which the rule catches.
  testing_util::DefaultGenerator();
  SignatureResult r = testing_util::Generate(R"j({"threads": [{"frames": [{"function": "const"}]}]})j");
  EXPECT_EQ(r.signature, "EMPTY: no frame data available");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes[0], "SignatureGenerationRule: No crashing frames found because of list index out of range");
}

TEST(NormalizeCppTest, ParamTraitsKeepsOuterBracketsAndCollapsesInside) {
  EXPECT_EQ(CollapseTypesCpp("IPC::ParamTraits<nsTSubstring<char> >"), "IPC::ParamTraits<nsTSubstring<T> >");
}

TEST(NormalizeCppTest, UnknownInPdbIsKeptVerbatim) { EXPECT_EQ(Fn("<unknown in ntdll.pdb>"), "<unknown in ntdll.pdb>"); }

TEST(NormalizeCppTest, UnbalancedOpenerSwallowsTheRest) { EXPECT_EQ(CollapseTypesCpp("Foo<bar"), "Foo<T>"); }

TEST(NormalizeCppTest, BeforeIsOnlyTheTextSinceThePreviousSlice) {
  // The second '(' slice's `before` is "" (not "operator()"), so it is removed.
  EXPECT_EQ(CollapseArgumentsCpp("operator()(s,t,u)"), "operator()");
}

TEST(NormalizeCppTest, OperatorTemplateSliceIsKept) {
  EXPECT_EQ(Fn("js::jit::CodePosition::operator<(js::jit::CodePosition) const"), "js::jit::CodePosition::operator<");
}

TEST(NormalizeCppTest, LambdaNumbersAreReplacedWithoutOverlap) {
  EXPECT_EQ(Fn("A::$_1::$_2::b"), "A::$::$_2::b");
}

TEST(NormalizeCppTest, SpacesBeforeStarsAndCommasGoAndCommasGetOne) {
  // (::operator skips the prefix/return-type step, which would split on spaces)
  EXPECT_EQ(Fn("X::operator Foo *,a &b ,c"), "X::operator Foo*, a&b, c");
}

TEST(NormalizeCppTest, LineNumberListAppendsLineOrNone) {
  EXPECT_EQ(NormalizedFrame(R"j({"function": "js_Interpret", "line": 23})j"), "js_Interpret:23");
  EXPECT_EQ(NormalizedFrame(R"j({"function": "js_Interpret"})j"), "js_Interpret:None");
  EXPECT_EQ(NormalizedFrame(R"j({"function": "js_Interpret", "line": 2.0})j"), "js_Interpret:2.0");
}

TEST(NormalizeRustTest, RustRulesNeedAnAbsoluteOrVcsRsPath) {
  // Relative foo.rs selects C++ rules, which keep the ::h hash.
  EXPECT_EQ(NormalizedFrame(R"j({"function": "f::h0123456789abcdef", "file": "foo.rs"})j"), "f::h0123456789abcdef");
  EXPECT_EQ(NormalizedFrame(R"j({"function": "f::h0123456789abcdef", "file": "/src/foo.rs"})j"), "f");
  EXPECT_EQ(NormalizedFrame(R"j({"function": "f::h0123456789abcdef", "file": "c:\\src\\foo.rs"})j"), "f");
}

TEST(NormalizeRustTest, AsSliceIsKeptOthersCollapse) {
  EXPECT_EQ(NormalizedFrame(R"j({"function": "<a::B<c> as d::E>::f<g>(x)", "file": "/x.rs"})j"),
            "<a::B<c> as d::E>::f<T>");
}

TEST(ParseSourceFileTest, HandlesVcsWindowsAndAbsolutePaths) {
  bool found = false;
  EXPECT_EQ(ParseSourceFile("hg:hg.mozilla.org/mozilla-central:dom/Foo.cpp:abc", &found), "dom/Foo.cpp");
  EXPECT_TRUE(found);
  EXPECT_EQ(ParseSourceFile("c:\\src\\foo.rs", &found), "\\src\\foo.rs");
  EXPECT_EQ(ParseSourceFile("/usr/src/foo.rs", &found), "/usr/src/foo.rs");
  ParseSourceFile("foo.rs", &found);
  EXPECT_FALSE(found);
  ParseSourceFile("a:b:c", &found);
  EXPECT_FALSE(found);
}

TEST(NormalizeFrameTest, FileAndLineGiveBasenameHashLine) {
  EXPECT_EQ(NormalizedFrame(R"j({"file": "c:\\a/b\\Foo.cpp", "line": 42})j"), "Foo.cpp#42");
  EXPECT_EQ(NormalizedFrame(R"j({"file": "/a/b/Foo.cpp/", "line": 7, "module": "m"})j"), "Foo.cpp#7");
}

TEST(NormalizeFrameTest, LineZeroIsFalsySoTheModuleIsUsed) {
  EXPECT_EQ(NormalizedFrame(R"j({"file": "/a/Foo.cpp", "line": 0, "module": "libfoo.so"})j"), "libfoo.so");
}

TEST(NormalizeFrameTest, ModuleLosesSurroundingBrackets) {
  EXPECT_EQ(NormalizedFrame(R"j({"module": "[[[module]]"})j"), "module");
}

TEST(NormalizeFrameTest, UnloadedModuleUsesTheFirstEntryOnly) {
  EXPECT_EQ(NormalizedFrame(R"j({"unloaded_modules": [{"module": "a.dll"}, {"module": "b.dll"}], "offset": "0x1"})j"),
            "(unloaded a.dll)");
}

TEST(NormalizeFrameTest, OffsetIsReprintedAsLowerCaseHex) {
  EXPECT_EQ(NormalizedFrame(R"j({"offset": "0x0000000000032EC0"})j"), "@0x32ec0");
  EXPECT_EQ(NormalizedFrame(R"j({"offset": "0x0000"})j"), "@0x0");
  EXPECT_EQ(NormalizedFrame(R"j({"offset": "junk"})j"), "@junk");
  EXPECT_EQ(NormalizedFrame(R"j({"offset": "1f"})j"), "@0x1f");
}

TEST(NormalizeFrameTest, NothingUsableGivesEmptyString) {
  EXPECT_EQ(NormalizedFrame(R"j({"trust": "scan"})j"), "");
  EXPECT_EQ(NormalizedFrame(R"j({"module_offset": "0x12"})j"), "");
}

TEST(NormalizeFrameTest, WindowsModulesAreLowerCasedFunctionsAreNot) {
  SignatureResult r = testing_util::Generate(
      R"j({"os": "Windows NT", "threads": [{"frames": [{"module": "FOO.DLL"}, {"function": "Bar::Baz", "module": "X.DLL"}]}]})j");
  EXPECT_EQ(r.proto_signature, "foo.dll | Bar::Baz");
  r = testing_util::Generate(R"j({"os": "Linux", "threads": [{"frames": [{"module": "FOO.SO"}]}]})j");
  EXPECT_EQ(r.proto_signature, "FOO.SO");
}

TEST(NormalizeFrameTest, InlinesComeBeforeTheirFrameAndCountTowardsForty) {
  std::string frames;
  for (int i = 0; i < 39; ++i) frames += R"j({"function": "f)j" + std::to_string(i) + "\"},";
  frames += R"j({"function": "outer", "inlines": [{"function": "in1"}, {"function": "in2"}]})j";
  SignatureResult r = testing_util::Generate(R"j({"threads": [{"frames": [)j" + frames + "]}]}");
  EXPECT_TRUE(r.proto_signature.ends_with("f38 | in1")) << r.proto_signature;
}

}  // namespace
}  // namespace seismo
