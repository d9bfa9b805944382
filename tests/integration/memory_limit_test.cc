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
#include <zstd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "integration/daemon_process.h"
#include "seismo/shard/dead_letter.h"
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

// `seismo run` over `dir`/seismo.toml, whose [sources] files it reads; stopped with SIGTERM a
// while after it has read them. Returns the peak resident memory; the exit status goes to
// `status`, the log to `dir`/run.log and the output to `dir`/run.json.
uint64_t RunOverSourceFiles(const fs::path& dir, int& status) {
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
  const int spawned = posix_spawn(&pid, SEISMO_BINARY, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "posix_spawn: " << spawned;
    return 0;
  }

  // The file has been read once every document was handed to the pipeline; the
  // publisher and the alert thread then work on the full state for a while.
  auto deadline = std::chrono::steady_clock::now() + seconds(kSanitized ? 600 : 180);
  while (Slurp(log).find("sources: read") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_NE(Slurp(log).find("sources: read"), std::string::npos) << Slurp(log);
  std::this_thread::sleep_for(seconds(3));
  kill(pid, SIGTERM);
  rusage usage{};
  EXPECT_EQ(wait4(pid, &status, 0, &usage), pid);
  pid = 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
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
      << "[http]\nlisten = \"127.0.0.1:0\"\nanswer_memory = 4194304\n[alerts]\ninterval = \"1s\"\n";
  int status = 0;
  const uint64_t peak = RunOverSourceFiles(dir, status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Slurp(dir / "run.log");
  const std::string output = (dir / "run.json").string();
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

// The line reader is inside the limit too (SPEC §7): one 1.5 GiB line in a .zst of a few
// tens of KB is rejected as too_large, and read past without being held — the peak resident
// memory stays under a 256 MiB limit (it was 3.7 GB), and the documents around it count.
TEST(MemoryLimit, AHugeLineInASmallZstdFileIsRejectedWithoutBeingHeld) {
  constexpr uint64_t kLineBytes = 3ull << 29;  // 1.5 GiB
  constexpr uint64_t kLineLimit = 256ull << 20;
  const fs::path dir = fs::temp_directory_path() / ("seismo-memory-line-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string good =
      R"({"type":"main","submission_timestamp":"2026-11-20T10:00:00Z","application":{"buildId":"20261117090501",)"
      R"("channel":"release","name":"Firefox","version":"146.0"},"payload":{"info":{"subsessionLength":3600}}})";
  {
    // good line, the huge line ({"pad":"xxxx...), good line; streamed through zstd 1 MiB at a time.
    std::ofstream out(dir / "corpus.ndjson.zst", std::ios::binary);
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
    std::string buffer(ZSTD_CStreamOutSize(), '\0');
    auto feed = [&](std::string_view bytes, ZSTD_EndDirective mode) {
      ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
      for (bool done = false; !done;) {
        ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
        const size_t left = ZSTD_compressStream2(cctx, &o, &in, mode);
        ASSERT_FALSE(ZSTD_isError(left)) << ZSTD_getErrorName(left);
        out.write(buffer.data(), static_cast<std::streamsize>(o.pos));
        done = mode == ZSTD_e_end ? left == 0 : in.pos == in.size;
      }
    };
    feed(good + "\n{\"pad\":\"", ZSTD_e_continue);
    const std::string pad(1 << 20, 'x');
    for (uint64_t written = 8; written < kLineBytes; written += pad.size()) {  // 8: {"pad":"
      feed(std::string_view(pad).substr(0, std::min<uint64_t>(pad.size(), kLineBytes - written)),
           ZSTD_e_continue);
    }
    feed("\n" + good + "\n", ZSTD_e_end);
    ZSTD_freeCCtx(cctx);
  }
  std::cout << "compressed: " << fs::file_size(dir / "corpus.ndjson.zst") / 1024 << " KB\n";
  std::ofstream(dir / "seismo.toml")
      << "[kafka]\ntopics = []\n[sources]\nfiles = [\"" << (dir / "corpus.ndjson.zst").string()
      << "\"]\n[ingest]\nthreads = 2\nqueue_chunks = 4\nmax_document_bytes = 1048576\n"
      << "dead_letter_file = \"" << (dir / "dead.ndjson").string() << "\"\n"
      << "[aggregate]\nshards = 2\nmemory_limit = " << kLineLimit << "\n"
      << "[http]\nlisten = \"127.0.0.1:0\"\nanswer_memory = 4194304\n";
  int status = 0;
  const uint64_t peak = RunOverSourceFiles(dir, status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Slurp(dir / "run.log");
  std::cout << "peak resident memory " << (peak >> 20) << " MiB of a " << (kLineLimit >> 20)
            << " MiB limit\n";
  if (!kSanitized) EXPECT_LT(peak, kLineLimit);

  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.load((dir / "run.json").string());
  EXPECT_EQ(root["records"]["main"].get_uint64().value(), 2u);
  EXPECT_EQ(root["records"]["rejected"]["too_large"].get_uint64().value(), 1u);
  simdjson::dom::element letter = parser.load((dir / "dead.ndjson").string());
  EXPECT_EQ(letter["reason"].get_string().value(), "too_large");
  EXPECT_EQ(letter["offset"].get_int64().value(), 2);  // the line number
  EXPECT_EQ(letter["document_bytes"].get_uint64().value(), kLineBytes);
  EXPECT_TRUE(letter["truncated"].get_bool().value());
  EXPECT_EQ(letter["document"].get_string().value().size(), kMaxDeadLetterDocumentBytes);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seismo
