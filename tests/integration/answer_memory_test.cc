// Answers inside aggregate.memory_limit (SPEC §7, issue 19, ADR 0025): the real `seismo run`
// holds a hang whose stack has 10^6 frames, and 16 clients at once ask for the largest
// answers there are (the flame graph as a tree and as collapsed text, the hangs with their
// stacks). The daemon's resident memory stays under the limit, every answer is bounded
// (200 within http.max_answer_bytes, or 503 with a JSON error when the answer budget is
// spent), the flame graph's total is still exact, and /healthz answers all along.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/daemon_process.h"
#include "support/wait_for.h"
#include "test_scale.h"
#include "unit/http/http_client.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr size_t kFrames = 1'000'000;
constexpr uint64_t kLimit = 512ull << 20;
constexpr size_t kMaxAnswerBytes = 1 << 20;
constexpr int kClients = 16;

// Resident memory of `pid` now (VmRSS) or at its peak (VmHWM), in bytes; 0 when unknown.
uint64_t ProcMemory(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

// Two main pings of an hour each whose legacy threadHangStats hold one hang each (a bhr
// stack is cut at 300 frames; a legacy one is not): two hangs of 255 ms on a 10^6-frame
// stack, and one of 511 ms on main;Tick. The flame graph's root holds 1021 ms, 3 hangs.
void WriteCorpus(const fs::path& file) {
  const std::string app =
      R"("submission_timestamp":"2026-11-20T10:00:00Z","application":{"buildId":"20261117090501",)"
      R"("channel":"nightly","name":"Firefox","version":"147.0a1"})";
  auto ping = [&](const std::string& stack, const std::string& histogram) {
    return R"({"type":"main",)" + app +
           R"(,"payload":{"info":{"reason":"daily","subsessionLength":3600},"threadHangStats":[{"name":"Gecko",)"
           R"("hangs":[{"stack":[)" +
           stack + R"(],"histogram":{"values":)" + histogram + "}}]}]}}\n";
  };
  std::string deep;
  for (size_t i = 0; i < kFrames; ++i) deep += (i ? ",\"f" : "\"f") + std::to_string(i % 1000) + '"';
  std::ofstream out(file);
  out << ping(deep, R"({"255":2})") << ping(R"("main","Tick")", R"({"511":1})");
}

TEST(AnswerMemory, SixteenLargestAnswersAtOnceStayInsideTheLimitAndHealthzAnswers) {
  const fs::path dir = fs::temp_directory_path() / ("seismo-answer-memory-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  WriteCorpus(dir / "corpus.ndjson");
  std::ofstream(dir / "seismo.toml")
      << "[kafka]\ntopics = []\n[sources]\nfiles = [\"" << (dir / "corpus.ndjson").string()
      << "\"]\n[ingest]\nthreads = 2\nqueue_chunks = 4\nmax_document_bytes = 16777216\n"
      << "[aggregate]\nshards = 2\nmemory_limit = " << kLimit << "\n"
      << "[http]\nlisten = \"127.0.0.1:0\"\nhealth_listen = \"off\"\nnum_threads = 24\n"
      << "max_answer_bytes = " << kMaxAnswerBytes << "\n";
  testing::DaemonProcess daemon(dir);
  ASSERT_NO_FATAL_FAILURE(daemon.Start());
  const int port = daemon.http_port();
  ASSERT_GT(port, 0) << daemon.log();

  // Both pings in the published snapshot, then the load: wait for all four series (the
  // build's usage, the main-ping usage hangs are divided by, and the two stacks). A published
  // snapshot holds a document whole or not at all (ADR 0032).
  const bool counted = test::WaitFor(
      [&] {
        const auto builds = testing::HttpGet(port, "/api/v1/builds?window=all");
        const auto status = testing::HttpGet(port, "/api/v1/status");
        return builds.status == 200 && builds.body.find("\"usage_hours\":2") != std::string::npos &&
               status.body.find("\"series\":4,") != std::string::npos;
      },
      seconds(120));
  ASSERT_TRUE(counted) << daemon.log() << testing::HttpGet(port, "/api/v1/status").body;
  const uint64_t rss_before = ProcMemory(daemon.pid(), "VmRSS");

  const std::vector<std::string> targets = {"/api/v1/hangs/flamegraph?window=all",
                                            "/api/v1/hangs/flamegraph?window=all&format=collapsed",
                                            "/api/v1/hangs?window=all&limit=1000"};
  std::atomic<int> ok{0}, refused{0}, other{0};
  std::atomic<size_t> largest{0};
  std::atomic<bool> done{false};
  std::vector<std::string> trees(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      const std::string& target = targets[static_cast<size_t>(i) % targets.size()];
      const auto r = testing::HttpGet(port, target, {}, "GET", test::Patience(milliseconds(120'000)));
      if (r.status == 200) {
        ++ok;
        size_t seen = largest.load();
        while (r.body.size() > seen && !largest.compare_exchange_weak(seen, r.body.size())) {
        }
        if (i % targets.size() == 0) trees[static_cast<size_t>(i)] = r.body;
      } else if (r.status == 503 && r.body.find("\"error\"") != std::string::npos) {
        ++refused;
      } else {
        ++other;
      }
    });
  }
  // Meanwhile: /healthz on the same port, and the resident memory.
  milliseconds slowest_healthz{0};
  int healthz_failures = 0, healthz_probes = 0;
  uint64_t rss_peak_seen = 0;
  std::thread watcher([&] {
    while (!done.load()) {
      rss_peak_seen = std::max(rss_peak_seen, ProcMemory(daemon.pid(), "VmRSS"));
      const auto start = std::chrono::steady_clock::now();
      const auto r = testing::HttpGet(port, "/healthz", {}, "GET", test::Patience(milliseconds(60'000)));
      const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
      ++healthz_probes;
      if (r.status != 200) ++healthz_failures;
      slowest_healthz = std::max(slowest_healthz, took);
      std::this_thread::sleep_for(milliseconds(5));
    }
  });
  for (auto& c : clients) c.join();
  done = true;
  watcher.join();
  const uint64_t hwm = ProcMemory(daemon.pid(), "VmHWM");
  std::cout << "resident memory " << (rss_before >> 20) << " MiB before the requests, peak " << (hwm >> 20)
            << " MiB (" << (rss_peak_seen >> 20) << " MiB sampled) of a " << (kLimit >> 20) << " MiB limit; "
            << ok << " answered, " << refused << " refused (503); largest answer " << largest.load()
            << " bytes; slowest /healthz " << slowest_healthz.count() << " ms of " << healthz_probes << "\n";

  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(healthz_failures, 0);
  EXPECT_LE(largest.load(), kMaxAnswerBytes);
  if (!test::kSanitized) {
    EXPECT_LT(hwm, kLimit);
    EXPECT_LT(slowest_healthz, test::Patience(milliseconds(2'000)));
  }
  // The bounded tree still holds every millisecond, and so does the deep stack's chain.
  for (const std::string& body : trees) {
    if (body.empty()) continue;
    simdjson::dom::parser parser;
    ASSERT_EQ(parser.allocate(body.size(), 1 << 20), simdjson::SUCCESS);  // as deep as the bound lets it
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(body).get(root), simdjson::SUCCESS) << body.substr(0, 200);
    EXPECT_DOUBLE_EQ(root["hang_ms"].get_double().value(), 1021.0);
    EXPECT_EQ(root["hang_count"].get_int64().value(), 3);
    EXPECT_TRUE(root["truncated"].get_bool().value());
    EXPECT_EQ(root["children"].at(0)["name"].get_string().value(), "main");  // 511 ms, heaviest first
    simdjson::dom::element f0 = root["children"].at(1);
    EXPECT_EQ(f0["name"].get_string().value(), "f0");
    EXPECT_DOUBLE_EQ(f0["hang_ms"].get_double().value(), 510.0);
    break;
  }
  EXPECT_EQ(daemon.Signal(SIGTERM, test::Patience(seconds(60))), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seismo
