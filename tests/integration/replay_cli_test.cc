// The real `seismo` binary: replay from files and stdin, dead letters, exit
// codes, --help/--version, and byte-identical output across thread counts.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct CmdResult {
  int exit_code;
  std::string out;
};

CmdResult Shell(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReplayCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-replay-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    bin_ = SEISMO_BINARY;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::string bin_;
};

// libcurl is loaded only when a webhook sink starts (ADR 0043): a process that posts nothing
// (a replay, or --version) never maps it, nor the libraries it needs (~4 ms of each start).
TEST_F(ReplayCli, NoWebhookNoLibcurl) {
  for (const std::string args :
       {std::string(" --version"), " replay -q --output " + Path("out.json") + " /dev/null"}) {
    const CmdResult r = Shell("LD_DEBUG=libs " + bin_ + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("libsimdjson"), std::string::npos) << "LD_DEBUG lists what is loaded:\n" << r.out;
    EXPECT_EQ(r.out.find("libcurl"), std::string::npos) << args;
  }
}

TEST_F(ReplayCli, HelpAndVersion) {
  CmdResult help = Shell(bin_ + " --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* cmd : {"replay", "generate", "signature", "broker", "produce"}) {
    EXPECT_NE(help.out.find(cmd), std::string::npos) << cmd;
  }
  EXPECT_EQ(Shell(bin_ + " replay --help").exit_code, 0);
  CmdResult version = Shell(bin_ + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("seismo "), std::string::npos);
  EXPECT_EQ(Shell(bin_ + " no-such-command 2>/dev/null").exit_code, 2);
}

// The progress line (records, records/s, MB/s, redrawn in place) only when stderr is a
// terminal: `script` runs replay on a pseudo-terminal; stdin stays open a second so at
// least one redraw happens.
TEST_F(ReplayCli, ProgressBarOnATerminalOnlyAndSilentOtherwise) {
  ASSERT_EQ(Shell(bin_ + " generate --kind main --count 2000 --seed 3 > " + Path("m.ndjson")).exit_code, 0);
  const std::string slow_input = "(cat " + Path("m.ndjson") + "; sleep 1) | ";
  const std::string replay = bin_ + " replay - --output " + Path("out.json");
  CmdResult tty = Shell("script -qefc '" + slow_input + replay + "' /dev/null");
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  const std::string redraw = "\r\033[K";
  const size_t line = tty.out.find(redraw);
  ASSERT_NE(line, std::string::npos) << tty.out;
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(tty.out[line + redraw.size()]))) << tty.out;
  EXPECT_NE(tty.out.find(" records  "), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(" records/s  "), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(" MB/s"), std::string::npos) << tty.out;

  CmdResult piped = Shell(slow_input + replay + " 2> " + Path("err.txt"));
  ASSERT_EQ(piped.exit_code, 0);
  const std::string err = Slurp(Path("err.txt"));
  EXPECT_EQ(err.find('\r'), std::string::npos) << err;
  EXPECT_EQ(err.find("records/s"), std::string::npos) << err;
}

TEST_F(ReplayCli, OutputIsByteIdenticalAcrossThreadCountsAndInputForms) {
  ASSERT_EQ(Shell(bin_ + " generate --kind main --count 3000 --seed 5 > " + Path("m.ndjson")).exit_code, 0);
  ASSERT_EQ(Shell(bin_ + " generate --kind bhr --count 1500 --seed 6 | gzip -c > " + Path("b.ndjson.gz")).exit_code, 0);
  ASSERT_EQ(Shell(bin_ + " generate --kind crash --count 800 --seed 7 | zstd -q -c > " + Path("c.ndjson.zst")).exit_code, 0);
  std::string inputs = Path("m.ndjson") + " " + Path("b.ndjson.gz") + " " + Path("c.ndjson.zst");
  ASSERT_EQ(Shell(bin_ + " replay --quiet --threads 1 --output " + Path("one.json") + " " + inputs).exit_code, 0);
  ASSERT_EQ(Shell(bin_ + " replay --quiet --threads 4 --output " + Path("four.json") + " " + inputs).exit_code, 0);
  std::string one = Slurp(Path("one.json"));
  EXPECT_GT(one.size(), 10000u);
  EXPECT_EQ(one, Slurp(Path("four.json")));
  // stdin ("-") and --output - give the same document.
  CmdResult piped = Shell("cat " + Path("m.ndjson") + " | " + bin_ + " replay --quiet --output - -");
  ASSERT_EQ(piped.exit_code, 0);
  ASSERT_EQ(Shell(bin_ + " replay --quiet --output " + Path("m.json") + " " + Path("m.ndjson")).exit_code, 0);
  EXPECT_EQ(piped.out, Slurp(Path("m.json")));
}

// An archive of many files: each is opened at its turn, so a replay of more files than the
// process may hold open at once reads them all, and gives the document the files give as
// one. Every input is checked before the first is read: a missing last file fails the run
// before anything is written.
TEST_F(ReplayCli, MoreFilesThanTheOpenFileLimitAreReadOneAfterAnother) {
  ASSERT_EQ(Shell(bin_ + " generate --kind main --count 400 --seed 9 > " + Path("all.ndjson")).exit_code, 0);
  fs::create_directories(dir_ / "parts");
  ASSERT_EQ(Shell("cd " + Path("parts") + " && split -l 1 -a 3 " + Path("all.ndjson") + " p_").exit_code, 0);
  std::vector<std::string> parts;
  for (const auto& e : fs::directory_iterator(dir_ / "parts")) parts.push_back(e.path().string());
  std::sort(parts.begin(), parts.end());
  ASSERT_EQ(parts.size(), 400u);
  std::string inputs;
  for (const std::string& p : parts) inputs += " " + p;
  // 64 descriptors: the 400 files at once would need more.
  CmdResult many = Shell("ulimit -n 64 && " + bin_ + " replay --quiet --threads 2 --output " +
                         Path("many.json") + inputs + " 2>&1");
  ASSERT_EQ(many.exit_code, 0) << many.out;
  ASSERT_EQ(
      Shell(bin_ + " replay --quiet --threads 2 --output " + Path("one.json") + " " + Path("all.ndjson"))
          .exit_code,
      0);
  const std::string one = Slurp(Path("one.json"));
  EXPECT_GT(one.size(), 10000u);
  EXPECT_EQ(Slurp(Path("many.json")), one);

  CmdResult missing = Shell(bin_ + " replay --quiet --output " + Path("none.json") + inputs + " " +
                            Path("missing.ndjson") + " 2>&1");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find(Path("missing.ndjson") + ": No such file or directory"), std::string::npos)
      << missing.out;
  EXPECT_FALSE(fs::exists(Path("none.json")));
}

// With --output the summary's lines are made beside the output's sorts (ADR 0045), without
// it after the run: the same lines either way (its first, with the time, aside).
TEST_F(ReplayCli, SummaryLinesAreTheSameWithOrWithoutAnOutput) {
  ASSERT_EQ(Shell(bin_ + " generate --kind bhr --count 400 --seed 11 > " + Path("b.ndjson")).exit_code, 0);
  ASSERT_EQ(Shell(bin_ + " generate --kind crash --count 300 --seed 12 > " + Path("c.ndjson")).exit_code, 0);
  const std::string inputs = Path("b.ndjson") + " " + Path("c.ndjson");
  const CmdResult without = Shell(bin_ + " replay --threads 1 " + inputs);
  const CmdResult with = Shell(bin_ + " replay --threads 1 --output " + Path("out.json") + " " + inputs);
  ASSERT_EQ(without.exit_code, 0) << without.out;
  ASSERT_EQ(with.exit_code, 0) << with.out;
  auto after_first_line = [](const std::string& out) { return out.substr(out.find('\n') + 1); };
  EXPECT_NE(after_first_line(without.out).find("top hang signatures"), std::string::npos) << without.out;
  EXPECT_NE(after_first_line(without.out).find("top crash signatures"), std::string::npos) << without.out;
  EXPECT_EQ(after_first_line(with.out), after_first_line(without.out));
}

// Issue 15 "honest summary": the summary line's time covers the whole run, so it is at
// least the sum of the phases --timings reports (ingest, merge, final snapshot, alerts,
// output, freeing...), and its MB/s is the input's size over that time.
TEST_F(ReplayCli, SummaryTimeCoversTheWholeRunAndTimingsNameEveryPhase) {
  ASSERT_EQ(Shell(bin_ + " generate --kind main --profile dense --count 3000 --seed 8 > " + Path("m.ndjson"))
                .exit_code,
            0);
  ASSERT_EQ(Shell(bin_ + " generate --kind bhr --count 300 --seed 9 > " + Path("b.ndjson")).exit_code, 0);
  CmdResult r = Shell(bin_ + " replay --timings --threads 2 --output " + Path("out.json") + " " +
                      Path("m.ndjson") + " " + Path("b.ndjson") + " 2> " + Path("timings.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // "seismo replay: 3300 documents (9.5 MB) in 0.41 s — 8049 records/s, 23.2 MB/s"
  double mb = 0, seconds = 0, mb_per_s = 0;
  const size_t head = r.out.find("seismo replay: ");
  ASSERT_NE(head, std::string::npos) << r.out;
  const std::string line = r.out.substr(head, r.out.find('\n', head) - head);
  ASSERT_EQ(std::sscanf(line.c_str() + line.find('(') + 1, "%lf MB) in %lf s", &mb, &seconds), 2) << line;
  ASSERT_EQ(std::sscanf(line.c_str() + line.find(", ") + 2, "%lf MB/s", &mb_per_s), 1) << line;

  const std::string timings = Slurp(Path("timings.txt"));
  const std::vector<std::string> phases = {"load",   "setup",  "ingest",  "merge", "teardown",
                                           "alerts", "output", "summary", "free"};
  double sum = 0;
  size_t at = timings.find("{\"phases\":{");
  ASSERT_NE(at, std::string::npos) << timings;
  for (const std::string& phase : phases) {  // every phase, in order
    const std::string key = "\"" + phase + "\":";
    at = timings.find(key, at);
    ASSERT_NE(at, std::string::npos) << phase << " missing or out of order in " << timings;
    sum += std::strtod(timings.c_str() + at + key.size(), nullptr);
  }
  EXPECT_GT(sum, 0);
  EXPECT_GE(seconds + 0.005, sum) << line << "\n" << timings;  // printed to 2 decimals
  // MB/s is of the unrounded figures: within what rounding MB (1 decimal) and seconds (2)
  // leaves of them (a run of 0.05 s can be 0.045 or 0.055).
  EXPECT_GE(mb_per_s, (mb - 0.05) / (seconds + 0.005) - 0.1) << line;
  if (seconds > 0.005) EXPECT_LE(mb_per_s, (mb + 0.05) / (seconds - 0.005) + 0.1) << line;
}

TEST_F(ReplayCli, RejectsGoToTheDeadLetterFileWithReasonAndLine) {
  std::ofstream(Path("in.ndjson")) << R"({"type":"main","application":{"buildId":"20261117090501"},"payload":{"info":{"subsessionLength":60}}})"
                                   << "\n{broken\n\n[1]\n";
  std::ofstream(Path("c.toml")) << "[ingest]\ndead_letter_file = \"" << Path("dead.ndjson") << "\"\n";
  CmdResult r = Shell(bin_ + " replay --quiet --config " + Path("c.toml") + " --output - " + Path("in.ndjson"));
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find(R"("rejected":{"malformed_json":1,"not_object":1})"), std::string::npos) << r.out;
  std::string dead = Slurp(Path("dead.ndjson"));
  EXPECT_NE(dead.find(R"({"id":")" + Path("in.ndjson") + R"(:-1:2","reason":"malformed_json","source":")" +
                      Path("in.ndjson") + R"(","partition":-1,"offset":2,"document":"{broken"})"),
            std::string::npos)
      << dead;
  EXPECT_NE(dead.find(R"("reason":"not_object")"), std::string::npos);
}

TEST_F(ReplayCli, ExitCodes) {
  std::ofstream(Path("bad.toml")) << "[hangs]\nmin_ms = \"x\"\n";
  CmdResult bad = Shell(bin_ + " replay --config " + Path("bad.toml") + " x.ndjson 2>&1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find(Path("bad.toml") + ": hangs.min_ms: expected an integer"), std::string::npos) << bad.out;
  CmdResult missing = Shell(bin_ + " replay --quiet " + Path("missing.ndjson") + " 2>&1");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("missing.ndjson"), std::string::npos);
  EXPECT_EQ(Shell(bin_ + " replay 2>/dev/null").exit_code, 2);  // no input
}

}  // namespace
