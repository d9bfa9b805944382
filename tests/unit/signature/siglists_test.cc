// Signature lists: loading, Python regex semantics on PCRE2, errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "seismo/signature/generator.h"
#include "seismo/signature/siglists.h"
#include "signature/py_regex.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using signature_internal::LiteralOf;
using signature_internal::TranslatePythonRegex;

const SigLists& Default() {
  static std::unique_ptr<SigLists> lists = std::move(SigLists::LoadDefault()).value();
  return *lists;
}

// A scratch copy of config/siglists that a test may break.
class SiglistDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-siglists-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    for (const auto& e : fs::directory_iterator(fs::path(SEISMO_SOURCE_DIR) / "config" / "siglists")) {
      fs::copy_file(e.path(), dir_ / e.path().filename(), fs::copy_options::overwrite_existing);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Append(const std::string& file, const std::string& text) {
    std::ofstream(dir_ / file, std::ios::app) << text;
  }
  fs::path dir_;
};

TEST(SigListsTest, DefaultListsHaveTwentySentinelsInFileOrder) {
  ASSERT_EQ(Default().sentinels().size(), 20u);
  EXPECT_EQ(Default().sentinels().front(), "_purecall");
  EXPECT_EQ(Default().sentinels().back(), "IPC::MessageWriter::FatalError");
}

TEST(SigListsTest, BracesThatAreNotQuantifiersAreLiteral) {
  EXPECT_TRUE(Default().IsIrrelevant("{virtual override thunk}"));
  EXPECT_TRUE(Default().IsIrrelevant("<env_logger::Logger as log::Log>::log::{{closure}}"));
}

TEST(SigListsTest, EscapedAngleBracketIsALiteralNotAWordBoundary) {
  EXPECT_TRUE(Default().IsPrefix("<name omitted>"));
}

TEST(SigListsTest, DotStarEntriesMatchAnywhere) {
  EXPECT_TRUE(Default().IsPrefix("(unloaded foo.dll)"));
  EXPECT_FALSE(Default().IsPrefix("(unloaded foo.so)"));
  EXPECT_TRUE(Default().IsPrefix("nsThread::ProcessNextEvent"));
}

TEST(SigListsTest, DollarAnchorsOnlyWhereWritten) {
  EXPECT_TRUE(Default().IsIrrelevant("handle_error"));
  EXPECT_FALSE(Default().IsIrrelevant("handle_error_more"));
}

TEST(SigListsTest, OffsetEntries) {
  EXPECT_TRUE(Default().IsPrefix("@0x0"));
  EXPECT_FALSE(Default().IsIrrelevant("@0x0"));
  EXPECT_TRUE(Default().IsIrrelevant("@0x10"));
  EXPECT_TRUE(Default().IsIrrelevant("@0x1"));
}

TEST(SigListsTest, LineNumberListMatchesAtStartOnly) {
  EXPECT_TRUE(Default().WantsLineNumber("js_Interpret"));
  EXPECT_TRUE(Default().WantsLineNumber("js_InterpretFoo"));
  EXPECT_FALSE(Default().WantsLineNumber("a_js_Interpret"));
}

TEST(SigListsTest, CustomEntriesUsePythonSemantics) {
  auto lists = SigLists::FromEntries({"a\\d+\\Z", "x{,2}y"}, {}, {}, {});
  ASSERT_TRUE(lists);
  EXPECT_TRUE(lists.value()->IsIrrelevant("a12"));
  EXPECT_FALSE(lists.value()->IsIrrelevant("a12\n"));  // Python \Z is the very end
  EXPECT_TRUE(lists.value()->IsIrrelevant("a\u0663"));  // \d is Unicode
  EXPECT_TRUE(lists.value()->IsIrrelevant("xxy"));       // {,2} means {0,2}
  EXPECT_TRUE(lists.value()->IsIrrelevant("y"));
}

TEST(PyRegexTest, TranslatesPythonOnlySyntax) {
  EXPECT_EQ(TranslatePythonRegex("a\\Z"), "a\\z");
  EXPECT_EQ(TranslatePythonRegex("\\u00e9"), "\\x{00e9}");
  EXPECT_EQ(TranslatePythonRegex("a{,3}"), "a{0,3}");
  EXPECT_EQ(TranslatePythonRegex("a{2,}"), "a{2,}");
}

TEST(PyRegexTest, LiteralDetection) {
  EXPECT_EQ(LiteralOf("mozilla::ipc::Foo"), "mozilla::ipc::Foo");
  EXPECT_EQ(LiteralOf("libc\\.so"), "libc.so");
  EXPECT_EQ(LiteralOf("a\\.b"), "a.b");
  EXPECT_EQ(LiteralOf("\\<name omitted\\>"), "<name omitted>");
  EXPECT_EQ(LiteralOf(".*free"), std::nullopt);
  EXPECT_EQ(LiteralOf("a\\d"), std::nullopt);
}

TEST_F(SiglistDirTest, LoadsTheShippedFilesAtRunTime) {
  auto gen = SignatureGenerator::LoadFromDir(dir_.string());
  ASSERT_TRUE(gen) << gen.error().message();
  EXPECT_EQ(gen.value()->lists().sentinels().size(), 20u);
}

TEST_F(SiglistDirTest, BrokenRegexIsAnErrorNamingFileAndLine) {
  std::ifstream in(dir_ / "prefix_signature_re.txt");
  int lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  Append("prefix_signature_re.txt", "# trailing comment\nunbalanced(paren\n");
  auto gen = SignatureGenerator::LoadFromDir(dir_.string());
  ASSERT_FALSE(gen);
  const std::string& m = gen.error().message();
  EXPECT_NE(m.find("prefix_signature_re.txt:"), std::string::npos) << m;
  // The shipped lines, then the comment, then the bad line.
  EXPECT_NE(m.find(":" + std::to_string(lines + 2) + ":"), std::string::npos) << m;
  EXPECT_NE(m.find("unbalanced(paren"), std::string::npos) << m;
}

TEST_F(SiglistDirTest, MissingFileIsNotFound) {
  fs::remove(dir_ / "signature_sentinels.txt");
  auto gen = SignatureGenerator::LoadFromDir(dir_.string());
  ASSERT_FALSE(gen);
  EXPECT_EQ(gen.error().code(), StatusCode::kNotFound);
}

TEST_F(SiglistDirTest, RunTimeListsChangeTheSignature) {
  Append("irrelevant_signature_re.txt", "\nhello\n");
  auto gen = SignatureGenerator::LoadFromDir(dir_.string());
  ASSERT_TRUE(gen);
  CrashData cd;
  cd.threads_shape = Shape::kList;
  cd.threads.emplace_back();
  cd.threads[0].frames_shape = Shape::kList;
  for (const char* f : {"hello", "world"}) {
    Frame fr;
    fr.function = PyValue::Str(f);
    cd.threads[0].frames.push_back(fr);
  }
  EXPECT_EQ(gen.value()->Generate(cd).signature, "world");
}

}  // namespace
}  // namespace seismo
