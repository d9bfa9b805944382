// The byte pin (issue 15): `seismo replay --output` over a fixed corpus that
// `seismo generate` makes, of every kind, must give the bytes pinned in
// tests/data/replay_pin.txt (SHA-256), with 1 and 2 threads, from plain and
// .zst input. The pin was taken before the hot path's redesign, so the redesign
// shows it changed no byte. The corpus's own SHA-256 is pinned too, so a failure
// says whether the generator or replay changed.
//
// A deliberate change of output bytes (made for another issue) updates the pin
// in its own commit, saying why:
//   SEISMO_UPDATE_PIN=1 build/tests/unit_app --gtest_filter='ReplayPin.*'
// rewrites tests/data/replay_pin.txt.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace seismo {
namespace {

namespace fs = std::filesystem;

const fs::path kPinFile = fs::path(SEISMO_SOURCE_DIR) / "tests/data/replay_pin.txt";

// The corpus: one file per entry, made by `seismo generate <args>`. Small enough that
// the whole test takes seconds in Release and under ASan.
struct CorpusFile {
  const char* name;
  const char* args;
  int keep_every = 1;  // keep lines 1, 1 + k, 1 + 2k, ... of the output
};
const CorpusFile kCorpus[] = {
    {"main", "--kind main --count 150 --seed 101"},
    {"main-dense", "--kind main --profile dense --count 150 --seed 102"},
    {"main-padded", "--kind main --count 10 --pad-kb 8 --seed 103"},
    {"bhr", "--kind bhr --count 40 --seed 104"},  // native frames, up to 51 hangs a ping
    {"bhr-dense", "--kind bhr --profile dense --count 60 --seed 105"},
    {"crash", "--kind crash --count 100 --seed 106"},  // Socorro processed crashes
    {"crash-dense", "--kind crash --profile dense --count 60 --seed 107"},
    {"crash-ping", "--kind crash-ping --count 100 --seed 108"},
    // A release timeline with plants, one document in 20 of it (a twentieth of the rates'
    // evidence: the gpu regression still fires).
    {"scenario",
     "--kind scenario --plant crash_spike,new_signature,hang_spike,burst,gpu_regression --seed 3 --scale "
     "0.05",
     20},
};

// What is replayed: every synthetic kind in one run, and the scenario in another (its
// timeline is months before the synthetic documents' and would leave its builds out of
// the alert windows).
struct ReplayCase {
  const char* name;
  std::vector<std::string> files;
};
const std::vector<ReplayCase>& Cases() {
  static const std::vector<ReplayCase> cases = {
      {"kinds",
       {"main", "main-dense", "main-padded", "bhr", "bhr-dense", "crash", "crash-dense", "crash-ping"}},
      {"scenario", {"scenario"}},
  };
  return cases;
}

struct Shell {
  int exit_code = -1;
  std::string out;
};

Shell RunShell(const std::string& command) {
  Shell r;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string Sha256(const fs::path& file) {
  Shell r = RunShell("sha256sum '" + file.string() + "'");
  return r.exit_code == 0 ? r.out.substr(0, 64) : "sha256sum failed: " + r.out;
}

// "corpus NAME SHA" and "output CASE SHA" lines; '#' starts a comment.
std::map<std::string, std::string> ReadPins() {
  std::map<std::string, std::string> pins;
  std::ifstream in(kPinFile);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string what, name, sha;
    fields >> what >> name >> sha;
    pins[what + " " + name] = sha;
  }
  return pins;
}

void WritePins(const std::map<std::string, std::string>& pins) {
  std::ofstream out(kPinFile);
  out << "# SHA-256 of `seismo replay --output` over a fixed generated corpus, and of the corpus\n"
         "# (tests/unit/app/replay_pin_test.cc). Taken before issue 15's redesign of the hot path,\n"
         "# which must change no byte. A deliberate change of output bytes, made for another issue,\n"
         "# updates this file in its own commit saying why:\n"
         "#   SEISMO_UPDATE_PIN=1 build/tests/unit_app --gtest_filter='ReplayPin.*'\n";
  for (const auto& [key, sha] : pins) out << key << " " << sha << "\n";
}

std::string HowToUpdate() {
  return "If this change of bytes is deliberate (another issue changes the output on purpose), update\n"
         "the pin and commit tests/data/replay_pin.txt in its own commit, saying why the bytes changed:\n"
         "  SEISMO_UPDATE_PIN=1 build/tests/unit_app --gtest_filter='ReplayPin.*'\n"
         "A change meant to keep every byte (issue 15's redesign, a refactoring) must not update it.\n";
}

class ReplayPin : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-replay-pin-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (HasFailure()) {
      std::printf("The corpus and outputs are kept in %s\n", dir_.c_str());
    } else {
      fs::remove_all(dir_);
    }
  }

  // Generates one corpus file (plain and .zst); false on failure.
  bool Generate(const CorpusFile& f) {
    const fs::path all = dir_ / (std::string(f.name) + ".all.ndjson");
    const fs::path path = File(f.name);
    Shell g =
        RunShell(std::string(SEISMO_BINARY) + " generate " + f.args + " -o '" + all.string() + "' 2>&1");
    if (g.exit_code != 0) {
      ADD_FAILURE() << "seismo generate " << f.args << " failed:\n" << g.out;
      return false;
    }
    std::ifstream in(all, std::ios::binary);
    std::ofstream out(path, std::ios::binary);
    std::string line;
    for (size_t i = 0; std::getline(in, line); ++i) {
      if (i % static_cast<size_t>(f.keep_every) == 0) out << line << '\n';
    }
    out.close();
    Shell z = RunShell("zstd -q -f '" + path.string() + "' -o '" + path.string() + ".zst' 2>&1");
    if (z.exit_code != 0) {
      ADD_FAILURE() << "zstd failed:\n" << z.out;
      return false;
    }
    return true;
  }

  fs::path File(const std::string& name) const { return dir_ / (name + ".ndjson"); }

  fs::path dir_;
};

TEST_F(ReplayPin, ReplayOutputOfTheGeneratedCorpusIsByteForByteThePinnedOne) {
  const std::map<std::string, std::string> pins = ReadPins();
  std::map<std::string, std::string> actual;
  for (const CorpusFile& f : kCorpus) {
    ASSERT_TRUE(Generate(f));
    actual["corpus " + std::string(f.name)] = Sha256(File(f.name));
  }
  // Each case four ways; all four must give the same bytes.
  std::map<std::string, std::vector<std::string>> variants;  // case -> "threads 1, .zst: <sha>" lines
  for (const ReplayCase& c : Cases()) {
    std::string first;
    for (int threads : {1, 2}) {
      for (const char* suffix : {"", ".zst"}) {
        std::string inputs;
        for (const std::string& f : c.files) inputs += " '" + File(f).string() + suffix + "'";
        const std::string variant =
            std::string(c.name) + "-t" + std::to_string(threads) + (*suffix ? "-zst" : "");
        const fs::path out = dir_ / (variant + ".json");
        Shell r = RunShell(std::string(SEISMO_BINARY) + " replay --quiet --threads " +
                           std::to_string(threads) + " --output '" + out.string() + "'" + inputs + " 2>&1");
        ASSERT_EQ(r.exit_code, 0) << variant << ":\n" << r.out;
        const std::string sha = Sha256(out);
        variants[c.name].push_back(variant + " " + sha);
        if (first.empty()) first = sha;
        EXPECT_EQ(sha, first)
            << variant << " differs from " << c.name
            << "-t1: replay's output depends on the thread count or the input's compression";
      }
    }
    actual["output " + std::string(c.name)] = first;
  }

  if (std::getenv("SEISMO_UPDATE_PIN") != nullptr) {
    WritePins(actual);
    GTEST_SKIP() << "SEISMO_UPDATE_PIN is set: rewrote " << kPinFile.string()
                 << ". Commit it on its own, saying why the bytes changed.";
  }
  ASSERT_FALSE(pins.empty()) << kPinFile.string() << " is missing or empty.\n" << HowToUpdate();
  bool corpus_changed = false;
  for (const auto& [key, sha] : actual) {
    auto pinned = pins.find(key);
    const std::string expected = pinned == pins.end() ? "(not pinned)" : pinned->second;
    if (sha == expected) continue;
    const bool corpus = key.rfind("corpus ", 0) == 0;
    corpus_changed = corpus_changed || corpus;
    std::string detail;
    if (!corpus) {
      for (const std::string& v : variants[key.substr(7)]) detail += "\n  " + v;
    }
    ADD_FAILURE() << key << ": SHA-256 " << sha << ", pinned " << expected << detail << "\n"
                  << (corpus
                          ? "`seismo generate` no longer makes the pinned corpus: the generator changed (its "
                            "outputs for a seed are part of the pin).\n"
                          : "`seismo replay --output` changed bytes on the pinned corpus.\n")
                  << HowToUpdate();
  }
  for (const auto& [key, sha] : pins) {
    EXPECT_TRUE(actual.count(key)) << key << " is pinned but no longer made by the test.\n" << HowToUpdate();
  }
  if (corpus_changed) std::printf("The outputs' pins hold only for the pinned corpus.\n");
}

}  // namespace
}  // namespace seismo
