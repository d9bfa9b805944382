// Secrets in documents never reach an answer (SPEC §6.3, §7): frames that are URLs (with a
// session token), e-mail addresses and home-directory paths, in legacy and bhr hang stacks and
// in a crash's function names, go through a real Daemon and the real HTTP server; no answer
// of /api/v1/hangs, the flame graph (tree and collapsed), /api/v1/crashes/top, the run's
// output or its checkpoint holds any of them, while the placeholders that replaced them do
// come back, with the counts intact.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "integration/daemon_process.h"
#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/checkpoint/checkpoint.h"
#include "seismo/http/server.h"
#include "seismo/signature/generator.h"
#include "support/wait_for.h"
#include "unit/http/http_client.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::HttpGet;

// What must never come back: the token, the bank's host, the user's name and mail domain.
const std::vector<std::string> kSecrets = {"SECRET123", "bank.example.com", "alice", "example.com",
                                           "session="};

const std::string kApp =
    R"("submission_timestamp":"2026-11-20T10:00:00Z","application":{"buildId":"20261117090501",)"
    R"("channel":"release","name":"Firefox","version":"146.0"},"environment":{"system":{"os":{"name":"Linux"}}})";

std::vector<std::string> Documents() {
  return {
      // Legacy hangs: a URL frame and an e-mail frame (the innermost: the signature).
      R"({"type":"main",)" + kApp +
          R"(,"payload":{"info":{"reason":"shutdown","subsessionLength":3600},"threadHangStats":[{"name":"Gecko",)"
          R"("hangs":[{"stack":["https://bank.example.com/account?session=SECRET123:42","alice@example.com"],)"
          R"("histogram":{"values":{"255":2}}},)"
          R"({"stack":["start","/home/alice/secret-project/libx.so","https://bank.example.com/account?session=SECRET123:42"],)"
          R"("histogram":{"values":{"511":1}}}]}]}})",
      // bhr: a module under the user's home, a Windows profile path, a URL in a label.
      R"({"type":"bhr",)" + kApp +
          R"(,"payload":{"timeSinceLastPing":3600000,"modules":[["/home/alice/lib/libfoo.so","ABC"]],"hangs":[)"
          R"({"duration":300,"thread":"Gecko","process":"default","stack":["C:\\Users\\alice\\plugin.dll",[0,"1f"],)"
          R"J("load (https://bank.example.com/account?session=SECRET123:42)"]}]}})J",
      // A processed crash whose crashing frame names a URL and an address.
      R"({"uuid":"c1","build":"20261117090501","release_channel":"release","product":"Firefox","version":"146.0",)"
      R"("submitted_timestamp":"2026-11-20T10:00:00Z","json_dump":{"system_info":{"os":"Linux"},)"
      R"("crash_info":{"crashing_thread":0},"threads":[{"frames":[)"
      R"({"function":"https://bank.example.com/account?session=SECRET123"},{"function":"mail_alice@example.com"}]}]}})",
  };
}

TEST(Scrubbing, UrlsAddressesAndUserNamesFromDocumentsNeverReachAnAnswer) {
  const fs::path dir = fs::temp_directory_path() / ("seismo-scrub-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "docs.ndjson");
    for (const std::string& d : Documents()) out << d << "\n";
  }
  Config config;
  config.kafka.topics.clear();  // files only
  config.sources.files = {(dir / "docs.ndjson").string()};
  config.checkpoint.dir = (dir / "ckpt").string();
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

  // Ready once the file is read; every document in a published snapshot (three hang series:
  // two legacy stacks and one bhr stack).
  auto published = [&] {
    auto snap = daemon.snapshot();
    return snap && snap->table(Table::kHangs).size() == 3 && snap->table(Table::kCrashes).size() == 1;
  };
  test::WaitFor([&] { return HttpGet(port, "/readyz").status == 200 && published(); }, 60s);
  ASSERT_TRUE(published());
  ASSERT_EQ(daemon.counts().by_kind, (std::array<uint64_t, 3>{1, 1, 1}));

  std::string everything;
  for (const char* target :
       {"/api/v1/hangs?window=all&source=main", "/api/v1/hangs?window=all&source=bhr",
        "/api/v1/hangs?window=all&source=main&by=thread", "/api/v1/hangs/flamegraph?window=all&source=main",
        "/api/v1/hangs/flamegraph?window=all&source=bhr",
        "/api/v1/hangs/flamegraph?window=all&format=collapsed",
        "/api/v1/hangs/flamegraph?window=all&source=bhr&format=collapsed", "/api/v1/crashes/top?window=all",
        "/api/v1/builds?window=all", "/api/v1/status", "/metrics"}) {
    const testing::HttpResponse r = HttpGet(port, target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    for (const std::string& secret : kSecrets) {
      EXPECT_EQ(r.body.find(secret), std::string::npos) << target << " holds " << secret << ": " << r.body;
    }
    everything += r.body;
  }
  // The frames are still there, in their place, by their placeholders.
  for (const char* placeholder : {"https://<host>/<path>:42", "\"signature\":\"<email>\"",
                                  "/home/<user>/secret-project/libx.so", "/home/<user>/lib/libfoo.so+0x1f",
                                  "C:\\\\Users\\\\<user>\\\\plugin.dll", "load (https://<host>/<path>:42)"}) {
    EXPECT_NE(everything.find(placeholder), std::string::npos) << placeholder << " missing";
  }
  const std::string top = HttpGet(port, "/api/v1/crashes/top?window=all").body;
  EXPECT_NE(top.find("\"signature\":\"https://<host>/<path>\""), std::string::npos) << top;
  server.Stop();
  daemon.Stop();

  // Nor do the output and the checkpoint hold them.
  const std::string output =
      ReplayOutputJson(*daemon.snapshot(), daemon.counts(), daemon.alerts_json());
  const std::string checkpoint = testing::Slurp(dir / "ckpt" / std::string(kCheckpointFile));
  ASSERT_FALSE(checkpoint.empty());
  for (const std::string& secret : kSecrets) {
    EXPECT_EQ(output.find(secret), std::string::npos) << secret << " in the output: " << output;
    EXPECT_EQ(checkpoint.find(secret), std::string::npos) << secret << " in the checkpoint";
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace seismo
