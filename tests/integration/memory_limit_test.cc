// aggregate.memory_limit under adversarial cardinality (ADR 0010): the real
// `seismo run` reads documents whose every dimension is new — a thread name, a
// channel, an OS, a build, a stack, a crash id and a signature per document — and
// its peak resident memory stays under the limit while every total in its
// output stays exact.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "integration/daemon_process.h"
#include "test_scale.h"

extern char** environ;

namespace seismo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

using test::kSanitized;  // a sanitizer's shadow memory and quarantine inflate RSS: not checked then
constexpr size_t kDocsPerKind = test::Scaled(120'000, 6);

constexpr uint64_t kLimit = 160ull << 20;

using testing::Slurp;

struct Expected {
  int64_t usage_ms = 0;
  int64_t hangs = 0;
  int64_t crashes = 0;
};

// Every document unlike any other in each dimension the aggregates key on.
Expected WriteCorpus(const fs::path& file) {
  Expected e;
  std::ofstream out(file);
  auto app = [](size_t i) {
    return "\"application\":{\"buildId\":\"20261117" + std::to_string(100000 + i % 800000) +
           "\",\"channel\":\"c" + std::to_string(i) + "\",\"name\":\"Firefox\",\"version\":\"v" +
           std::to_string(i) + "\"},\"environment\":{\"system\":{\"os\":{\"name\":\"os" + std::to_string(i) +
           "\"}}}";
  };
  for (size_t i = 0; i < kDocsPerKind; ++i) {
    const std::string ts = "\"submission_timestamp\":\"2026-11-20T10:00:00Z\"";
    out << "{\"type\":\"main\"," << ts << "," << app(i) << ",\"payload\":{\"info\":{\"reason\":\"daily\","
        << "\"subsessionLength\":" << 60 + i % 100 << "}}}\n";
    e.usage_ms += static_cast<int64_t>(60 + i % 100) * 1000;
    out << "{\"type\":\"bhr\"," << ts << "," << app(i) << ",\"payload\":{\"timeSinceLastPing\":60000,"
        << "\"hangs\":[{\"duration\":200,\"thread\":\"T" << i << "\",\"process\":\"p" << i << "\","
        << "\"stack\":[\"root" << i << "\",\"leaf" << i << "\"]}]}}\n";
    e.usage_ms += 60000;
    e.hangs += 1;
    out << "{\"uuid\":\"u" << i << "\",\"submitted_timestamp\":\"2026-11-20T10:00:00Z\",\"build\":\"20261117"
        << 100000 + i % 800000 << "\",\"release_channel\":\"c" << i << "\",\"os_name\":\"os" << i
        << "\",\"install_time\":" << i << ",\"json_dump\":{\"crash_info\":{\"crashing_thread\":0},"
        << "\"threads\":[{\"frames\":[{\"function\":\"Crash" << i << "()\"}]}]}}\n";
    e.crashes += 1;
  }
  return e;
}

TEST(MemoryLimit, AdversarialCardinalityStaysUnderTheLimitWithExactTotals) {
  const fs::path dir = fs::temp_directory_path() / ("seismo-memory-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Expected expected = WriteCorpus(dir / "corpus.ndjson");
  std::ofstream(dir / "seismo.toml")
      << "[kafka]\ntopics = []\n[sources]\nfiles = [\"" << (dir / "corpus.ndjson").string()
      << "\"]\n[ingest]\nthreads = 2\nqueue_chunks = 4\nmax_document_bytes = 1048576\n"
      << "[aggregate]\nshards = 2\nmemory_limit = " << kLimit << "\n"
      << "[http]\nlisten = \"127.0.0.1:0\"\n[alerts]\ninterval = \"1s\"\n";
  const std::string config = (dir / "seismo.toml").string(), output = (dir / "run.json").string(),
                    log = (dir / "run.log").string();
  std::vector<std::string> args = {SEISMO_BINARY, "run", "--config", config, "--output", output};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const testing::ChildGuard guard(pid);
  ASSERT_EQ(posix_spawn(&pid, SEISMO_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  // The file has been read once every document was handed to the pipeline; the
  // publisher and the alert thread then work on the full state for a while.
  auto deadline = std::chrono::steady_clock::now() + seconds(kSanitized ? 600 : 180);
  while (Slurp(log).find("sources: read") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_NE(Slurp(log).find("sources: read"), std::string::npos) << Slurp(log);
  std::this_thread::sleep_for(seconds(3));
  kill(pid, SIGTERM);
  int status = 0;
  rusage usage{};
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  pid = 0;
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Slurp(log);
  const uint64_t peak = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  std::cout << "peak resident memory " << (peak >> 20) << " MiB of a " << (kLimit >> 20) << " MiB limit\n";
  if (!kSanitized) EXPECT_LT(peak, kLimit);

  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.load(output);
  double usage_hours = 0;
  for (auto row : root["usage"].get_array()) usage_hours += row["usage_hours"].get_double();
  EXPECT_NEAR(usage_hours, static_cast<double>(expected.usage_ms) / 3.6e6, 1e-6 * usage_hours);
  int64_t hangs = 0, crashes = 0;
  size_t hang_rows = 0, crash_rows = 0;
  for (auto row : root["hangs"].get_array()) {
    hangs += row["hang_count"].get_int64();
    ++hang_rows;
  }
  for (auto row : root["crashes"].get_array()) {
    crashes += row["count"].get_int64();
    ++crash_rows;
  }
  EXPECT_EQ(hangs, expected.hangs);
  EXPECT_EQ(crashes, expected.crashes);
  EXPECT_LT(hang_rows, kDocsPerKind / 2) << "nothing was folded";
  EXPECT_LT(crash_rows, kDocsPerKind / 2) << "nothing was folded";
  EXPECT_GT(root["records"]["folded_series"].get_uint64().value(), 0u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seismo
