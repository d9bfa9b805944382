// A real Daemon reading `seismo generate` files through [sources], served by
// the real HTTP server: the API's numbers equal `seismo replay` of the same
// files.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <thread>
#include <tuple>

#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/http/server.h"
#include "seismo/signature/generator.h"
#include "support/wait_for.h"
#include "test_scale.h"
#include "unit/http/http_client.h"
#include "unit/query/query_fixture.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using namespace seismo::testing;
using namespace std::chrono_literals;

class HttpDaemon : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("seismo_http_daemon_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (auto [kind, n, seed] :
         {std::tuple{"main", 800, 21}, std::tuple{"bhr", 800, 22}, std::tuple{"crash", 600, 23}}) {
      const std::string file = (dir_ / (std::string(kind) + ".ndjson")).string();
      const std::string cmd = std::string(SEISMO_BINARY) + " generate --kind " + kind + " --count " +
                              std::to_string(n) + " --seed " + std::to_string(seed) + " --output " + file;
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      files_.push_back(file);
      documents_ += static_cast<uint64_t>(n);
    }
    std::string cmd =
        std::string(SEISMO_BINARY) + " replay --quiet --output " + (dir_ / "replay.json").string();
    for (const auto& f : files_) cmd += " " + f;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    replay_ = parser_.load((dir_ / "replay.json").string());
    auto signatures = LoadSignatures(FilesOnly());
    ASSERT_TRUE(signatures.has_value());
    signatures_ = std::move(*signatures);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The fixture's files through [sources], no Kafka, two threads and two shards.
  Config FilesOnly() const {
    Config config;
    config.kafka.topics.clear();
    config.sources.files = files_;
    config.ingest.threads = 2;
    config.aggregate.shards = 2;
    return config;
  }

  static std::unique_ptr<Json> GetJson(int port, const std::string& target) {
    HttpResponse r = HttpGet(port, target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return std::make_unique<Json>(r.body);
  }

  fs::path dir_;
  std::vector<std::string> files_;
  uint64_t documents_ = 0;
  simdjson::dom::parser parser_;
  simdjson::dom::element replay_;
  std::unique_ptr<SignatureGenerator> signatures_;  // the lists built in, for FilesOnly() daemons
};

TEST_F(HttpDaemon, ApiNumbersEqualReplayOfTheSameFiles) {
  const Config config = FilesOnly();
  SystemClock clock;
  Daemon daemon(config, signatures_.get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  HttpServer server;
  ASSERT_TRUE(server.Start(options, daemon).ok());
  const int port = server.port();

  // Expected from replay: crash counts by signature, bhr hang ms by (process, thread, signature), usage.
  std::map<std::string, int64_t> crashes;
  int64_t crash_total = 0;
  for (auto row : replay_["crashes"].get_array()) {
    crashes[std::string(std::string_view(row["signature"]))] += int64_t(row["count"]);
    crash_total += int64_t(row["count"]);
  }
  std::map<std::tuple<std::string, std::string, std::string>, double> hangs;
  for (auto row : replay_["hangs"].get_array()) {
    if (std::string_view(row["source"]) != "bhr") continue;
    hangs[{std::string(std::string_view(row["process"])), std::string(std::string_view(row["thread"])),
           std::string(std::string_view(row["signature"]))}] += double(row["hang_ms"]);
  }
  double bhr_usage = 0;
  for (auto row : replay_["usage"].get_array()) {
    if (std::string_view(row["source"]) == "bhr") bhr_usage += double(row["usage_hours"]);
  }
  double build_usage = 0;
  int64_t build_pings = 0;
  for (auto row : replay_["builds"].get_array()) {
    build_usage += double(row["usage_hours"]);
    build_pings += int64_t(row["pings"]);
  }
  ASSERT_GT(crash_total, 0);
  ASSERT_GT(hangs.size(), 0u);

  // Ready once every file is read; the numbers once a snapshot holds everything.
  test::WaitFor(
      [&] {
        if (HttpGet(port, "/readyz").status != 200) return false;
        auto top = GetJson(port, "/api/v1/crashes/top?window=all&limit=1");
        return top->root["total"].get_int64().value() == crash_total;
      },
      60s, 100ms);
  auto status = GetJson(port, "/api/v1/status");
  EXPECT_EQ(status->root["documents"].get_uint64().value(), documents_);
  EXPECT_EQ(status->root["records"]["main"].get_int64().value(), int64_t(replay_["records"]["main"]));
  EXPECT_EQ(status->root["records"]["bhr"].get_int64().value(), int64_t(replay_["records"]["bhr"]));
  EXPECT_EQ(status->root["records"]["crash"].get_int64().value(), int64_t(replay_["records"]["crash"]));

  auto top = GetJson(port, "/api/v1/crashes/top?window=all&limit=1000");
  EXPECT_EQ(top->root["total"].get_int64().value(), crash_total);
  auto rows = top->root["rows"].get_array().value();
  EXPECT_EQ(rows.size(), std::min<size_t>(crashes.size(), 1000));
  int64_t previous = INT64_MAX;
  for (auto row : rows) {
    const std::string sig(row["signature"].get_string().value());
    const int64_t count = row["count"].get_int64().value();
    EXPECT_EQ(count, crashes[sig]) << sig;
    EXPECT_LE(count, previous);
    previous = count;
  }

  auto h = GetJson(port, "/api/v1/hangs?window=all&source=bhr&limit=1000");
  EXPECT_NEAR(h->root["usage_hours"].get_double().value(), bhr_usage, 1e-6 * bhr_usage);
  size_t compared = 0;
  for (auto row : h->root["rows"].get_array()) {
    std::tuple<std::string, std::string, std::string> key{std::string(row["process"].get_string().value()),
                                                          std::string(row["thread"].get_string().value()),
                                                          std::string(row["signature"].get_string().value())};
    const double ms = row["hang_ms"].get_double().value();
    EXPECT_NEAR(ms, hangs[key], 1e-6 * ms + 1e-9) << std::get<2>(key);
    ++compared;
  }
  EXPECT_EQ(compared, std::min<size_t>(hangs.size(), 1000));

  auto builds = GetJson(port, "/api/v1/builds?window=all&limit=1000");
  double api_usage = 0;
  int64_t api_pings = 0;
  for (auto row : builds->root["builds"].get_array()) {
    api_usage += row["usage_hours"].get_double().value();
    api_pings += row["pings"].get_int64().value();
  }
  EXPECT_NEAR(api_usage, build_usage, 1e-6 * build_usage);
  EXPECT_EQ(api_pings, build_pings);

  // seismo_snapshot_age_seconds: since the publisher built the served snapshot (every 500 ms; a
  // loaded machine may delay a publish by seconds, never by days). It was the Unix time.
  const std::string metrics = HttpGet(port, "/metrics").body;
  const std::string age_sample = "\nseismo_snapshot_age_seconds ";
  const size_t age_at = metrics.find(age_sample);
  ASSERT_NE(age_at, std::string::npos) << metrics;
  const double age = std::stod(metrics.substr(age_at + age_sample.size()));
  EXPECT_GE(age, 0.0);
  EXPECT_LT(age, 60.0);

  server.Stop();
  daemon.Stop();
}

// The server starts before the daemon: while a checkpoint is restored /healthz answers,
// /readyz says 503 with restored=false and the API shows no numbers yet; once the daemon
// has restored and read its files, /readyz says 200 and the restored counts are served.
// The publisher publishes a snapshot, then hands it to the server, whose warm-up thread
// builds the dashboard's default answers (ADR 0025): a published document is in the API
// at once, and a request for a default answer is a cache hit whether or not the newest
// snapshot's are built yet (served from the newest warmed snapshot until they are).
TEST_F(HttpDaemon, DefaultAnswersAreAlwaysServedFromTheCache) {
  const Config config = FilesOnly();
  SystemClock clock;
  Daemon daemon(config, signatures_.get(), &clock);
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  HttpServer server;
  std::atomic<int> hooked{0}, not_yet_visible{0};
  daemon.SetPublishHook([&](const std::shared_ptr<const Snapshot>& snap) {
    if (daemon.snapshot() != snap) ++not_yet_visible;
    server.Published(snap);
    ++hooked;
  });
  ASSERT_TRUE(daemon.Start().ok());
  ASSERT_TRUE(server.Start(options, daemon).ok());
  const int port = server.port();
  int64_t crash_total = 0;
  for (auto row : replay_["crashes"].get_array()) crash_total += int64_t(row["count"]);
  ASSERT_GT(crash_total, 0);
  // The answers served from the cache so far, from /metrics.
  auto cache_hits = [&] {
    const std::string text = HttpGet(port, "/metrics").body;
    const std::string name = "\nseismo_http_answer_cache_hits_total ";
    const size_t at = text.find(name);
    return at == std::string::npos ? int64_t{-1} : std::stoll(text.substr(at + name.size()));
  };
  ASSERT_TRUE(test::WaitFor(
      [&] {
        if (HttpGet(port, "/readyz").status != 200) return false;
        const std::string body = HttpGet(port, "/api/v1/crashes/top?window=all&limit=1").body;
        return body.find("\"total\":" + std::to_string(crash_total)) != std::string::npos;
      },
      60s, 20ms));
  ASSERT_TRUE(test::WaitFor([&] { return server.warm_rounds() > 0; }, 60s, 20ms));
  // Every answer the dashboard asks for first, served from the cache: the cache's hits grow
  // by one per request, and nothing is built on request.
  const std::vector<std::string> defaults = {"/api/v1/builds",
                                             "/api/v1/hangs",
                                             "/api/v1/hangs?by=thread",
                                             "/api/v1/hangs/timeseries",
                                             "/api/v1/hangs/flamegraph",
                                             "/api/v1/crashes/top",
                                             "/api/v1/crashes/timeseries"};
  for (const std::string& target : defaults) {
    const int64_t hits = cache_hits();
    const HttpResponse r = HttpGet(port, target);
    EXPECT_EQ(r.status, 200) << target;
    EXPECT_EQ(cache_hits(), hits + 1) << target << " was not built ahead";
  }
  // A view with a filter, asked for once, is kept as in use (ADR 0035) and built ahead over
  // the snapshots after (AnswerWarmer.BuildsTheViewsInUseOverEachWarmedSnapshot checks the
  // answers); /status is not a view.
  const uint64_t seen = server.warm_counts().views_seen;
  ASSERT_EQ(HttpGet(port, "/api/v1/status").status, 200);
  EXPECT_EQ(server.warm_counts().views_seen, seen);
  ASSERT_EQ(HttpGet(port, "/api/v1/hangs?by=thread&os=Linux").status, 200);
  EXPECT_EQ(server.warm_counts().views_seen, seen + 1);
  const uint64_t built = server.warm_counts().views_built;
  EXPECT_TRUE(test::WaitFor([&] { return server.warm_counts().views_built > built; }, 60s, 20ms));
  daemon.SetPublishHook(nullptr);
  server.Stop();
  daemon.Stop();
  EXPECT_GT(hooked.load(), 0);
  EXPECT_EQ(not_yet_visible.load(), 0) << "a snapshot waited for its answers before it was published";
}

// A snapshot the publisher replaced is freed on the daemon's release thread, whoever held it
// last (core/deferred_release.h): here the test thread, as an HTTP request would.
TEST_F(HttpDaemon, ReplacedSnapshotsAreFreedOnTheReleaseThread) {
  SystemClock clock;
  Daemon daemon(FilesOnly(), signatures_.get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  std::shared_ptr<const Snapshot> held;
  ASSERT_TRUE(test::WaitFor([&] { return (held = daemon.snapshot()) != nullptr; }, 60s, 5ms));
  ASSERT_TRUE(test::WaitFor([&] { return daemon.snapshot() != held; }, 60s, 5ms));
  const uint64_t before = daemon.ReleasedSnapshotsForTesting();
  held.reset();  // the last hold, or the publisher's is (it lets go of it after the swap)
  EXPECT_TRUE(test::WaitFor([&] { return daemon.ReleasedSnapshotsForTesting() > before; }, 60s, 5ms));
  daemon.Stop();
}

TEST_F(HttpDaemon, NotReadyWhileTheCheckpointIsRestored) {
  Config config;
  config.kafka.topics.clear();  // files only
  config.sources.files = files_;
  config.checkpoint.dir = (dir_ / "ckpt").string();
  auto signatures = LoadSignatures(config);
  ASSERT_TRUE(signatures.has_value());
  SystemClock clock;
  {
    Daemon first(config, signatures->get(), &clock);  // leaves a checkpoint behind
    ASSERT_TRUE(first.Start().ok());
    test::WaitFor([&] { return first.counts().documents >= documents_; }, 30s);
    ASSERT_EQ(first.counts().documents, documents_);
    first.Stop();
  }

  Daemon daemon(config, signatures->get(), &clock);
  // The restore is held half way until the checks below are done.
  std::promise<void> inside, release;
  std::shared_future<void> released = release.get_future().share();
  daemon.SetRestoreHookForTesting([&inside, released] {
    inside.set_value();
    released.wait();
  });
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  HttpServer server;
  ASSERT_TRUE(server.Start(options, daemon).ok());
  const int port = server.port();
  std::thread starter([&] { EXPECT_TRUE(daemon.Start().ok()); });
  struct Releaser {  // a failed assertion must not leave the restore waiting
    std::promise<void>& p;
    std::thread& t;
    void Release() {
      if (!t.joinable()) return;
      p.set_value();
      t.join();
    }
    ~Releaser() { Release(); }
  } releaser{release, starter};
  ASSERT_EQ(inside.get_future().wait_for(60s), std::future_status::ready) << "the restore never started";
  EXPECT_EQ(HttpGet(port, "/healthz").status, 200);
  HttpResponse ready = HttpGet(port, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_NE(ready.body.find("\"restored\":false"), std::string::npos) << ready.body;
  HttpResponse status = HttpGet(port, "/api/v1/status");
  EXPECT_EQ(status.status, 200);
  EXPECT_NE(status.body.find("\"documents\":0"), std::string::npos) << status.body;
  releaser.Release();

  test::WaitFor([&] { return HttpGet(port, "/readyz").status == 200; }, 5s);
  ready = HttpGet(port, "/readyz");
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(daemon.counts().documents, documents_) << "restored; the files are not read again";
  status = HttpGet(port, "/api/v1/status");
  EXPECT_NE(status.body.find("\"documents\":" + std::to_string(documents_)), std::string::npos)
      << status.body;
  server.Stop();
  daemon.Stop();
}

// Durability failures are counted and served: every checkpoint fails (its directory cannot
// be created), every dead letter fails (the file is /dev/full, the Kafka cluster unreachable),
// and both counters show it in /api/v1/status and /metrics while the daemon keeps counting.
TEST_F(HttpDaemon, CheckpointAndDeadLetterFailuresAreCountedAndServed) {
  const std::string bad = (dir_ / "bad.ndjson").string();
  std::ofstream(bad) << "{\"type\":\"main\"\n[]\nnot json\n";
  std::ofstream(dir_ / "not-a-dir") << "x";
  Config config;
  config.kafka.topics.clear();           // files only
  config.kafka.brokers = "127.0.0.1:1";  // nothing listens there
  config.kafka.properties = {{"message.timeout.ms", "300"}};
  config.sources.files = {files_[0], bad};
  config.ingest.dead_letter_file = "/dev/full";
  config.ingest.dead_letter_topic = "seismo.dead";
  config.checkpoint.dir = (dir_ / "not-a-dir" / "ckpt").string();
  config.checkpoint.interval = 50ms;
  auto signatures = LoadSignatures(config);
  ASSERT_TRUE(signatures.has_value());
  SystemClock clock;
  Daemon daemon(config, signatures->get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  HttpServer server;
  ASSERT_TRUE(server.Start(options, daemon).ok());
  const int port = server.port();
  // Three rejects, each failing at both destinations.
  test::WaitFor(
      [&] { return daemon.status().dead_letter_failures >= 6 && daemon.status().checkpoint_failures >= 2; },
      30s);
  auto status = GetJson(port, "/api/v1/status");
  EXPECT_EQ(status->root["dead_letter_failures"].get_uint64().value(), 6u);
  const uint64_t checkpoint_failures = status->root["checkpoint_failures"].get_uint64().value();
  EXPECT_GE(checkpoint_failures, 2u);
  EXPECT_TRUE(status->root["last_checkpoint"].is_null());
  EXPECT_EQ(status->root["documents"].get_uint64().value(), 800u + 3u) << "still counting";
  const std::string metrics = HttpGet(port, "/metrics").body;
  EXPECT_NE(metrics.find("seismo_dead_letter_failures_total 6\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("seismo_checkpoint_failures_total "), std::string::npos);
  EXPECT_EQ(metrics.find("seismo_checkpoint_failures_total 0\n"), std::string::npos);
  server.Stop();
  daemon.Stop();
}

}  // namespace
}  // namespace seismo
