// Event time on archives as they come (issue 13, ADR 0017): one document stamped years
// ahead — appended to a release timeline, or in its middle — changes no row of `seismo
// replay`, whatever the thread count and whatever the wall clock says; it is counted as
// future_time. The daemon's [sources] files give the same rows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/query/replay_output.h"
#include "seismo/signature/generator.h"
#include "support/wait_for.h"
#include "test_clock.h"
#include "test_scale.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;

// The issue's repro: a main ping with a creationDate in 2030 and no submission_timestamp.
constexpr char kPingFrom2030[] =
    R"({"type":"main","id":"from-2030","creationDate":"2030-01-01T00:00:00.000Z","clientId":"c-2030",)"
    R"("application":{"buildId":"20261001090000","channel":"release","name":"Firefox","version":"140.0",)"
    R"("displayVersion":"140.0"},"environment":{"system":{"os":{"name":"Windows_NT"}}},)"
    R"("payload":{"info":{"reason":"daily","subsessionLength":3600}}})";

using test::ManualClock;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The rows: usage, builds, hangs and crashes (what follows "records", up to "alerts").
std::string Rows(const std::string& output) {
  const size_t at = output.find("\"usage\":");
  if (at == std::string::npos) return "no rows in: " + output.substr(0, 200);
  return output.substr(at, output.find("\"alerts\":") - at);
}

std::string Records(const std::string& output) { return output.substr(0, output.find("\"usage\":")); }

class EventTime13 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("seismo-event-time-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    // A tenth of the default release timeline's pings (and all its crashes): ~34 000 documents.
    // Under a sanitizer (10-50x slower; each of the three tests runs in a process of its own
    // and generates it), a fiftieth of the pings and the timeline's first four days: ~7 800
    // documents, the same code paths (test_scale.h).
    const std::string scale = test::kSanitized ? "0.02" : "0.1";
    ASSERT_EQ(Run("generate --kind scenario --seed 1 --scale " + scale + " --output " +
                  Path("generated.ndjson") + " 2>/dev/null"),
              0);
    std::vector<std::string> lines;
    std::istringstream in(Slurp(Path("generated.ndjson")));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    lines.resize(test::Scaled(lines.size(), 4));
    std::ofstream timeline(Path("timeline.ndjson")), appended(Path("appended.ndjson")),
        middle(Path("middle.ndjson"));
    for (size_t i = 0; i < lines.size(); ++i) {
      timeline << lines[i] << '\n';
      appended << lines[i] << '\n';
      if (i == lines.size() / 2) middle << kPingFrom2030 << '\n';
      middle << lines[i] << '\n';
    }
    appended << kPingFrom2030 << '\n';
    documents_ = lines.size() + 1;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static std::string Path(const std::string& name) { return (dir_ / name).string(); }
  static int Run(const std::string& args) {
    return std::system((std::string(SEISMO_BINARY) + " " + args).c_str());
  }
  static std::string Replay(const std::string& input, int threads) {
    const std::string out = Path("out-" + std::to_string(threads) + ".json");
    EXPECT_EQ(
        Run("replay --quiet --threads " + std::to_string(threads) + " --output " + out + " " + Path(input)),
        0);
    return Slurp(out);
  }

  static fs::path dir_;
  static size_t documents_;
};

fs::path EventTime13::dir_;
size_t EventTime13::documents_ = 0;

TEST_F(EventTime13, OnePingFromTheFutureChangesNoRowOfAReplay) {
  const std::string base = Replay("timeline.ndjson", 1);
  ASSERT_NE(Rows(base).find("\"hangs\":[{"), std::string::npos) << "the timeline has hang rows";
  for (const char* input : {"appended.ndjson", "middle.ndjson"}) {
    for (int threads : {1, 4}) {
      SCOPED_TRACE(testing::Message() << input << ", " << threads << " threads");
      const std::string out = Replay(input, threads);
      EXPECT_EQ(Rows(out), Rows(base));
      EXPECT_EQ(out.substr(out.find("\"alerts\":")), base.substr(base.find("\"alerts\":")));
      EXPECT_NE(Records(out).find(R"("rejected":{"future_time":1})"), std::string::npos) << Records(out);
      EXPECT_NE(Records(out).find(R"("late_dropped":0)"), std::string::npos) << Records(out);
    }
  }
}

// In-process, with the wall clock faked years before and years after the data.
TEST_F(EventTime13, AReplayDoesNotDependOnTheWallClock) {
  auto signatures = SignatureGenerator::LoadDefault();
  ASSERT_TRUE(signatures);
  const std::string base = Replay("timeline.ndjson", 2);
  for (const char* now : {"2019-06-01T00:00:00Z", "2036-06-01T00:00:00Z"}) {
    for (size_t threads : {1u, 3u}) {
      SCOPED_TRACE(testing::Message() << "clock " << now << ", " << threads << " threads");
      ManualClock clock(ParseTimestamp(now)->ms);
      Config config;
      config.ingest.threads = threads;
      config.aggregate.shards = threads;
      ReplayOptions options;
      options.clock = &clock;
      auto result = RunReplay(config, {Path("middle.ndjson")}, signatures->get(), options);
      ASSERT_TRUE(result) << result.error().message();
      EXPECT_EQ(result->counts.rejected[static_cast<size_t>(RejectReason::kFutureTime)], 1u);
      EXPECT_EQ(Rows(ReplayOutputJson(*result->snapshot, result->counts)), Rows(base));
    }
  }
}

// The daemon reading the same archive from [sources] (clock faked years ahead) ends with
// replay's rows.
TEST_F(EventTime13, SourcesFilesInTheDaemonGiveTheReplaysRows) {
  auto signatures = SignatureGenerator::LoadDefault();
  ASSERT_TRUE(signatures);
  Config config;
  config.kafka.topics.clear();  // files only
  config.sources.files = {Path("appended.ndjson")};
  config.ingest.threads = 2;
  config.aggregate.shards = 2;
  ManualClock clock(ParseTimestamp("2036-06-01T00:00:00Z")->ms);
  Daemon daemon(config, signatures->get(), &clock);
  ASSERT_TRUE(daemon.Start().ok());
  test::WaitFor(
      [&] {
        return daemon.status().sources_done && daemon.counts().documents == documents_ &&
               daemon.status().queued_chunks == 0;
      },
      std::chrono::seconds(120), std::chrono::milliseconds(20));
  ASSERT_TRUE(
      daemon.Shutdown(std::chrono::steady_clock::now() + test::Patience(std::chrono::seconds(60))).ok());
  const std::string out = ReplayOutputJson(*daemon.snapshot(), daemon.counts());
  const std::string base = Replay("timeline.ndjson", 2);
  EXPECT_EQ(Rows(out), Rows(base));
  EXPECT_NE(Records(out).find(R"("rejected":{"future_time":1})"), std::string::npos) << Records(out);
}

}  // namespace
}  // namespace seismo
