// `seismo signature`: one output line per input line, through the real binary
// (skipped when the binary has not been built yet).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace seismo {
namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
};

CliRun RunSeismo(const std::string& args) {
  CliRun r;
  FILE* p = ::popen((std::string(SEISMO_BINARY) + " " + args + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class SignatureCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(SEISMO_BINARY)) GTEST_SKIP() << "seismo binary not built";
    input_ = std::filesystem::temp_directory_path() / ("seismo-sig-cli-" + std::to_string(::getpid()) + ".ndjson");
    std::ofstream(input_) << R"j({"threads": [{"frames": [{"function": "void Foo::Bar(int) const"}]}], "hang": "ui"})j" "\n"
                          << "not json\n"
                          << R"j({"json_dump": {"threads": [{"frames": [{"function": "Proc::Crash()"}]}]}})j" "\n"
                          << R"j({"type": "crash", "payload": {"stackTraces": {"modules": [{"filename": "xul.dll"}], )j"
                          << R"j("threads": [{"frames": [{"ip": "0x1", "module_index": 0}]}]}}})j" "\n"
                          << R"j({"type": "main", "payload": {"info": {"subsessionLength": 60}}})j" "\n";
  }
  void TearDown() override {
    if (!input_.empty()) std::filesystem::remove(input_);
  }
  std::filesystem::path input_;
};

// A main ping is a document, but not a crash: an empty line, like bad JSON.
TEST_F(SignatureCliTest, PrintsOneLinePerInputLineForAllThreeShapes) {
  CliRun r = RunSeismo("signature " + input_.string());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "hang: ui | Foo::Bar\n\nProc::Crash\nxul.dll\n\n");
}

TEST_F(SignatureCliTest, JsonOutputHasNotesAndErrors) {
  CliRun r = RunSeismo("signature --json - < " + input_.string());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find(R"j({"signature":"hang: ui | Foo::Bar","proto_signature":"Foo::Bar","notes":[]})j"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"j({"error":"malformed_json"})j"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"j({"error":"unknown_kind"})j"), std::string::npos) << r.out;
}

TEST_F(SignatureCliTest, MissingFileOrListsExitWithTwo) {
  EXPECT_EQ(RunSeismo("signature /nonexistent/file.ndjson").exit_code, 2);
  EXPECT_EQ(RunSeismo("signature --siglists /nonexistent " + input_.string()).exit_code, 2);
}

}  // namespace
}  // namespace seismo
