// `seismo demo`: the simulated population (DemoPopulation) under config/demo.toml fires
// exactly the planted alerts at the daemon's cadence, the simulated clock keeps event
// times behind the wall clock, and the real command serves those alerts and stops cleanly.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "seismo/aggregate/shard_state.h"
#include "seismo/alert/engine.h"
#include "seismo/app/config.h"
#include "seismo/sim/demo.h"
#include "integration/daemon_process.h"
#include "unit/http/http_client.h"
#include "test_clock.h"
#include "test_scale.h"

extern char** environ;

namespace seismo {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kNow = 1'795'860'600'000;  // 2026-11-28T10:10:00Z, a fixed "wall clock"
constexpr double kDefaultSpeed = 3600;

Config DemoConfig() {
  auto c = LoadConfig(std::string(SEISMO_SOURCE_DIR) + "/config/demo.toml");
  EXPECT_TRUE(c) << c.error().message();
  return c ? *c : Config{};
}

// (rule, channel, build, signature)
using Key = std::tuple<std::string, std::string, std::string, std::string>;

struct Timeline {
  std::set<Key> ever_pending_or_firing;
  std::map<Key, int64_t> first_firing_ms;  // stream time
};

// Plays every channel's records in event-time order into one ShardState and runs the alert
// engine every `interval × speed` of simulated time, as the daemon does at that speed.
Timeline Play(const DemoPopulation& p, const Config& config, double speed, int64_t until_ms) {
  const AggregateOptions ao = ToAggregateOptions(config);
  Symbols symbols;
  ShardState state(ao, &symbols);
  DeltaEncoder encoder(&symbols);
  std::vector<Delta> deltas;
  AlertEngine engine(config.alerts);
  const int64_t every = static_cast<int64_t>(static_cast<double>(config.alerts.interval.count()) * speed);
  int64_t next_round = p.start_ms() + every;
  std::vector<size_t> cursor(p.channels().size(), 0);
  Timeline out;
  auto round = [&](int64_t t) {
    state.AdvanceTo(EventTime{t});
    engine.Evaluate(*MergeSnapshots({state.Snapshot()}, symbols, ao.bucket_ms, ao.windows_ms, ao.retention_ms));
    for (const Alert& a : engine.Alerts()) {
      const Key k{std::string(AlertRuleName(a.key.rule)), a.key.channel, a.key.build, a.key.signature};
      out.ever_pending_or_firing.insert(k);
      if (a.state == AlertState::kFiring) out.first_firing_ms.emplace(k, t);
    }
  };
  for (;;) {
    // The channel whose next record is earliest.
    size_t best = cursor.size();
    int64_t best_ms = INT64_MAX;
    for (size_t c = 0; c < cursor.size(); ++c) {
      const auto& records = p.channels()[c]->records();
      if (cursor[c] < records.size() && records[cursor[c]].time.ms < best_ms) {
        best = c;
        best_ms = records[cursor[c]].time.ms;
      }
    }
    while (next_round <= std::min(best_ms, until_ms)) {
      round(next_round);
      next_round += every;
    }
    if (best == cursor.size() || best_ms > until_ms) break;
    const ScenarioRecord& rec = p.channels()[best]->records()[cursor[best]++];
    deltas.clear();
    encoder.Encode(rec.doc, rec.time, deltas);
    for (const Delta& d : deltas) state.Apply(d);
  }
  return out;
}

TEST(DemoPopulation, FiresExactlyThePlantedCrashSpikeAndHangRegressionSoonAfterTheBadRelease) {
  const Config config = DemoConfig();
  for (uint64_t seed = 1; seed <= test::Scaled(3, 3); ++seed) {
    DemoOptions o;
    o.seed = seed;
    o.now_ms = kNow;
    const DemoPopulation p(o);
    const DemoTruth& t = p.truth();
    ASSERT_EQ(t.channel, "release");
    // Through the compressed phase and the first six real-time hours.
    const Timeline tl = Play(p, config, kDefaultSpeed, kNow + 6 * kHour);
    const Key spike{"crash_signature_spike", "release", t.bad_build_id, t.spike_signature};
    const Key hang{"hang_spike", "release", t.bad_build_date, t.hang_signature};
    std::set<Key> firing;
    for (const auto& [k, at] : tl.first_firing_ms) firing.insert(k);
    EXPECT_EQ(firing, (std::set<Key>{spike, hang})) << "seed " << seed;
    EXPECT_EQ(tl.ever_pending_or_firing, (std::set<Key>{spike, hang}))
        << "seed " << seed << ": not even pending";
    // At --speed 3600 a simulated hour is a wall second: both fire within 12 s of the release.
    for (const Key& k : {spike, hang}) {
      ASSERT_TRUE(tl.first_firing_ms.count(k)) << std::get<0>(k) << " seed " << seed;
      EXPECT_LE(tl.first_firing_ms.at(k) - p.bad_release_ms(), 12 * kHour)
          << std::get<0>(k) << " seed " << seed;
    }
  }
}

TEST(DemoPopulation, HistoryStartsDaysBeforeNowAndEveryDocumentHasItsEventTime) {
  DemoOptions o;
  o.now_ms = kNow;
  const DemoPopulation p(o);
  EXPECT_EQ(p.bad_release_ms(), kNow - kNow % kHour - o.compressed_after_hours * kHour);
  EXPECT_GE(p.bad_release_ms() - p.start_ms(), 72 * kHour) << "three earlier release builds have history";
  // At the default speed the bad release arrives within about two minutes.
  EXPECT_LE(static_cast<double>(p.bad_release_ms() - p.start_ms()) / kDefaultSpeed, 110'000.0);
  EXPECT_EQ(p.channels().size(), 3u);
  std::set<std::string> channels;
  uint64_t documents = 0, untimed = 0;
  for (const auto& s : p.channels()) {
    channels.insert(s->options().channel);
    int64_t last = INT64_MIN;
    s->ForEachDocument([&](std::string&& doc) {
      ++documents;
      const std::optional<EventTime> t = DemoDocumentTime(doc);
      if (!t) {
        ++untimed;
        return;
      }
      EXPECT_GE(t->ms, p.start_ms());
      EXPECT_LE(t->ms, p.end_ms());
      EXPECT_GE(t->ms, last) << "documents come in event-time order";
      last = t->ms;
    });
  }
  EXPECT_EQ(channels, (std::set<std::string>{"beta", "nightly", "release"}));
  EXPECT_GT(documents, 50'000u);
  EXPECT_EQ(untimed, 0u);
  EXPECT_EQ(DemoDocumentTime(R"({"type":"main","submission_timestamp":"2026-11-20T10:00:00.000Z"})")->ms,
            1'795'168'800'000);
  EXPECT_EQ(DemoDocumentTime(R"({"uuid":"x","submitted_timestamp":"2026-11-20T10:00:00.000Z"})")->ms,
            1'795'168'800'000);
  EXPECT_FALSE(DemoDocumentTime(R"({"type":"main"})"));
}

TEST(SimClock, RunsSpeedTimesFasterThenFollowsTheWallClockAndNeverPassesIt) {
  test::ManualClock wall(kNow);
  const SimClock sim(kNow - 10 * kHour, 3600, &wall);
  EXPECT_EQ(sim.Now(), kNow - 10 * kHour);
  EXPECT_EQ(sim.WallMsUntil(kNow - 8 * kHour), 2000);
  wall.Set(kNow + 1000);  // one wall second = one simulated hour
  EXPECT_EQ(sim.Now(), kNow - 9 * kHour);
  EXPECT_EQ(sim.WallMsUntil(kNow - 9 * kHour), 0);
  EXPECT_EQ(sim.WallMsUntil(kNow - 8 * kHour), 1000);
  wall.Set(kNow + 21'000);  // compressed time would be 11 h ahead of the wall clock by now
  EXPECT_EQ(sim.Now(), wall.Now().ms);
  EXPECT_EQ(sim.WallMsUntil(wall.Now().ms + 5000), 5000) << "after catching up, simulated time is real time";
}

// The real command: planted alerts on /api/v1/alerts, nothing else, SIGTERM exits 0.
TEST(DemoCommand, ServesThePlantedAlertsAndStopsCleanlyOnSigterm) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("seismo_demo_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "out").string(), log = (dir / "log").string();
  std::vector<std::string> args = {SEISMO_BINARY, "demo", "--port", "0", "--speed", "20000"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const testing::ChildGuard guard(pid);
  ASSERT_EQ(posix_spawn(&pid, SEISMO_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  auto slurp = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };

  // The URL is the first line of stdout.
  int port = 0;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (port == 0 && std::chrono::steady_clock::now() < deadline) {
    const std::string text = slurp(out);
    const size_t colon = text.rfind(':'), nl = text.find('\n');
    if (nl != std::string::npos && colon != std::string::npos && colon < nl)
      port = std::stoi(text.substr(colon + 1));
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_GT(port, 0) << slurp(log);
  EXPECT_EQ(slurp(out), "http://127.0.0.1:" + std::to_string(port) + "/\n");

  // At 20000× the bad release comes after ~19 s; both planted alerts fire within seconds.
  std::set<std::string> firing, others;
  simdjson::dom::parser parser;
  deadline = std::chrono::steady_clock::now() + 90s;
  while (firing.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(500ms);
    const testing::HttpResponse r = testing::HttpGet(port, "/api/v1/alerts");
    if (r.status != 200) continue;
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(r.body).get(root), simdjson::SUCCESS);
    firing.clear();
    for (simdjson::dom::element a : root["alerts"].get_array()) {
      // A field's text, or "null" (a build-level rule's alert has no signature): an alert
      // nobody planted is named below, not thrown as a type error.
      auto text = [&a](const char* field) {
        std::string_view v;
        return a[field].get(v) == simdjson::SUCCESS ? std::string(v) : std::string("null");
      };
      const std::string what = text("rule") + " " + text("channel") + " " + text("signature");
      const bool planted = what == "crash_signature_spike release mozilla::scenario::Crash05" ||
                           what == "hang_spike release scenario::Hang03";
      if (!planted) others.insert(what + " (" + text("state") + ")");
      if (planted && text("state") == "firing") firing.insert(what);
    }
  }
  EXPECT_EQ(firing.size(), 2u) << slurp(log);
  EXPECT_TRUE(others.empty()) << *others.begin();

  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  pid = 0;
  EXPECT_TRUE(WIFEXITED(status)) << slurp(log);
  EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(log);
  // Every document the simulator produced was consumed: "stopped: N documents produced, N consumed".
  const std::string text = slurp(log);
  const size_t at = text.find("stopped: ");
  ASSERT_NE(at, std::string::npos) << text;
  std::istringstream line(text.substr(at + 9));
  uint64_t produced = 0, consumed = 0;
  std::string documents, produced_word;
  line >> produced >> documents >> produced_word >> consumed;
  EXPECT_GT(produced, 30'000u);
  EXPECT_EQ(consumed, produced) << text.substr(at, 200);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seismo
