// The real HTTP server on a free loopback port, fed by a fake StateProvider:
// routing, headers, token, CORS, static-file confinement, every 400 case, alert
// filters, connection and request limits, TCP_NODELAY, SSE and Stop with open streams.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "seismo/http/server.h"
#include "seismo/query/api.h"
#include "support/wait_for.h"
#include "unit/core/thread_slice.h"
#include "unit/http/http_client.h"
#include "unit/query/bad_params.h"
#include "unit/query/fake_provider.h"
#include "unit/query/query_fixture.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using namespace seismo::testing;
using namespace std::chrono_literals;

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::path(::testing::TempDir()) / ("seismo_http_" + std::to_string(::getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_ / "root/js");
    std::ofstream(base_ / "root/index.html") << "<html>dashboard</html>";
    std::ofstream(base_ / "root/js/app.js") << "console.log(1);";
    std::ofstream(base_ / "secret.txt") << "TOPSECRET";
    fs::create_directory_symlink(base_, base_ / "root/up");
    World w;
    w.Usage("bhr", "Linux", kHour, 0);
    w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "A"}, 2'000'000, 1, 0);
    w.BuildUsage("Linux", kHour, 1, 0, 0);
    w.Crash("X", "parent", "parent", "a", 0);
    provider_.SetSnapshot(w.Build());
    options_.listen = "127.0.0.1:0";
    options_.document_root = (base_ / "root").string();
    options_.sse_poll = 20ms;
  }
  void TearDown() override {
    server_.Stop();
    fs::remove_all(base_);
  }
  void Start() { ASSERT_TRUE(server_.Start(options_, provider_).ok()); }
  HttpResponse Get(std::string_view target, const std::vector<std::string>& headers = {}) {
    return HttpGet(server_.port(), target, headers);
  }

  fs::path base_;
  FakeProvider provider_;
  HttpServerOptions options_;
  HttpServer server_;
};

TEST_F(HttpServerTest, PortZeroBindsAFreePortAndTheAddressIsThenTaken) {
  Start();
  EXPECT_GT(server_.port(), 0);
  EXPECT_EQ(server_.url(), "http://127.0.0.1:" + std::to_string(server_.port()));
  HttpServer second;
  HttpServerOptions o = options_;
  o.listen = "127.0.0.1:" + std::to_string(server_.port());
  Status s = second.Start(o, provider_);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot listen"), std::string::npos) << s.message();
}

// Every thread of the server (the one that accepts, the workers) asks for the kernel's
// shortest turn, so that with every core busy a request waits for one for a tenth of a
// millisecond, not for the turns of the threads ahead of it (ADR 0038).
TEST_F(HttpServerTest, EveryServerThreadAsksForTheShortestTurn) {
  if (!ThreadSliceNs(static_cast<int>(::gettid()))) GTEST_SKIP() << "this kernel shows no se.slice";
  const std::set<int> before = ThreadIds();
  Start();
  EXPECT_EQ(Get("/healthz").status, 200);
  // CivetWeb starts its threads without waiting for them, and each names itself before it
  // asks for its turn: wait until all are named and have asked.
  const auto server_threads = [&] {
    std::vector<int> tids;
    for (const int tid : ThreadIds()) {
      if (!before.contains(tid) && ThreadName(tid).starts_with("civetweb")) tids.push_back(tid);
    }
    return tids;
  };
  const size_t expected =
      static_cast<size_t>(options_.num_threads) + 1;  // the workers and the one that accepts
  EXPECT_TRUE(test::WaitFor(
      [&] {
        const std::vector<int> tids = server_threads();
        return tids.size() == expected && std::all_of(tids.begin(), tids.end(), [](int tid) {
                 return ThreadSliceNs(tid) == uint64_t{100'000};
               });
      },
      10s, 5ms));
  const std::vector<int> tids = server_threads();
  EXPECT_EQ(tids.size(), expected);
  for (const int tid : tids) EXPECT_EQ(ThreadSliceNs(tid), uint64_t{100'000}) << ThreadName(tid);
}

TEST_F(HttpServerTest, ApiAnswersJsonWithNoStore) {
  Start();
  HttpResponse r = Get("/api/v1/crashes/top?window=1h");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("cache-control"), "no-store");
  EXPECT_EQ(r.header("content-length"), std::to_string(r.body.size()));
  Json j(r.body);
  EXPECT_EQ(j.root["rows"].at(0)["signature"].get_string().value(), "X");
  EXPECT_EQ(j.root["rows"].at(0)["rate_per_1000h"].get_double().value(), 1000.0);

  HttpResponse hangs = Get("/api/v1/hangs?signature=A&os=Linux");
  Json h(hangs.body);
  EXPECT_EQ(h.root["rows"].at(0)["hang_ms_per_hour"].get_double().value(), 2000.0);

  HttpResponse flame = Get("/api/v1/hangs/flamegraph?format=collapsed");
  EXPECT_EQ(flame.status, 200);
  EXPECT_EQ(flame.header("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(flame.body, "root;A 2000\n");
}

TEST_F(HttpServerTest, ErrorsAre400And404And405) {
  Start();
  HttpResponse bad = Get("/api/v1/hangs?window=3h");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body, R"J({"error":"window: unknown window '3h' (one of 1h, 24h, 7d, all)"})J");
  HttpResponse unknown = Get("/api/v1/crashes/bottom");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body, R"({"error":"not found"})");
  EXPECT_EQ(unknown.header("content-type"), "application/json");
  HttpResponse post = HttpGet(server_.port(), "/api/v1/status", {}, "POST");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("allow"), "GET");
  EXPECT_EQ(HttpGet(server_.port(), "/api/v1/status", {}, "DELETE").status, 405);
}

TEST_F(HttpServerTest, HealthAndReadiness) {
  Start();
  HttpResponse h = Get("/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "ok\n");
  ServiceStatus s;
  s.restored = true;
  s.consuming = true;
  s.sources_done = false;
  provider_.SetStatus(s);
  EXPECT_EQ(Get("/readyz").status, 503);
  s.sources_done = true;
  provider_.SetStatus(s);
  HttpResponse ready = Get("/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body,
            R"({"ready":true,"restored":true,"consuming":true,"sources_done":true,"reason":null})");
  s.restored = false;
  provider_.SetStatus(s);
  EXPECT_EQ(Get("/readyz").status, 503);
}

TEST_F(HttpServerTest, TokenGuardsApiMetricsReadinessAndStream) {
  options_.auth_token = "s3cret";
  Start();
  for (const char* path : {"/api/v1/status", "/api/v1/hangs", "/api/v1/alerts", "/api/v1/nothing", "/api",
                           "/metrics", "/readyz"}) {
    HttpResponse none = Get(path);
    EXPECT_EQ(none.status, 401) << path;
    EXPECT_EQ(none.body, R"({"error":"unauthorized"})") << path;
    EXPECT_EQ(none.header("www-authenticate"), "Bearer") << path;
    EXPECT_EQ(Get(path, {"Authorization: Bearer wrong"}).status, 401) << path;
    EXPECT_EQ(Get(path, {"Authorization: Bearer s3cret2"}).status, 401) << path;
    const int with_token = Get(path, {"Authorization: Bearer s3cret"}).status;
    const std::string p(path);
    EXPECT_EQ(with_token, p == "/readyz" ? 503 : p == "/api/v1/nothing" || p == "/api" ? 404 : 200) << path;
  }
  EXPECT_EQ(Get("/healthz").status, 200);
  SseClient denied(server_.port());
  EXPECT_TRUE(denied.WaitFor("401 Unauthorized", 1, 2s)) << denied.text();
  EXPECT_EQ(denied.Count("event: snapshot"), 0u);
  SseClient allowed(server_.port(), {"Authorization: Bearer s3cret"});
  EXPECT_TRUE(allowed.WaitFor("event: snapshot", 1, 3s)) << allowed.text();
}

// The dashboard's files hold no data; the page they make asks for the token.
TEST_F(HttpServerTest, DashboardFilesAreServedWithoutTheToken) {
  options_.auth_token = "s3cret";
  Start();
  HttpResponse index = Get("/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.body, "<html>dashboard</html>");
  HttpResponse js = Get("/js/app.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.body, "console.log(1);");
  EXPECT_EQ(Get("/nothing.html").status, 404);
  for (const char* path : {"/../secret.txt", "/%2e%2e/secret.txt", "/up/secret.txt"}) {
    HttpResponse r = Get(path);
    EXPECT_NE(r.status, 200) << path;
    EXPECT_EQ(r.body.find("TOPSECRET"), std::string::npos) << path;
  }
  // The API stays closed, also when reached through a static-looking path.
  EXPECT_EQ(Get("/api/v1/status").status, 401);
  for (const char* path : {"/js/../api/v1/status", "/%61pi/v1/status", "/api%2fv1/status"}) {
    HttpResponse r = Get(path);
    EXPECT_NE(r.status, 200) << path;
    EXPECT_EQ(r.body.find("version"), std::string::npos) << path;
  }
}

TEST_F(HttpServerTest, EveryBadParameterIs400NamingIt) {
  Start();
  const std::vector<BadCase> cases = LoadBadParams();
  for (const BadCase& c : cases) {
    HttpResponse r = Get(c.path + "?" + c.query);
    EXPECT_EQ(r.status, 400) << c.path << "?" << c.query;
    EXPECT_EQ(r.header("content-type"), "application/json") << c.path << "?" << c.query;
    EXPECT_EQ(r.body, ErrorJson(c.error)) << c.path << "?" << c.query;
  }
}

TEST_F(HttpServerTest, AlertsAreFilteredByDimensionRuleAndState) {
  provider_.SetAlerts(
      R"([{"state":"firing","rule":"burst","channel":"release","os":"Linux","build":null,"signature":"A"},)"
      R"({"state":"pending","rule":"crash_signature_spike","channel":"beta","os":"all","build":"20261117090501",)"
      R"("build_id":"20261117090501","signature":"B"}])");
  Start();
  auto signatures = [&](const std::string& query) {
    HttpResponse r = Get("/api/v1/alerts" + query);
    EXPECT_EQ(r.status, 200) << query << ": " << r.body;
    Json j(r.body);
    std::vector<std::string> out;
    for (auto a : j.root["alerts"].get_array()) out.emplace_back(a["signature"].get_string().value());
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(signatures(""), (V{"A", "B"}));
  EXPECT_EQ(signatures("?channel=beta"), V{"B"});
  EXPECT_EQ(signatures("?state=firing"), V{"A"});
  EXPECT_EQ(signatures("?os=Linux"), (V{"A", "B"}));  // B is over all OSes
  EXPECT_EQ(signatures("?os=Darwin"), V{"B"});
  EXPECT_EQ(signatures("?signature=B&rule=crash_signature_spike"), V{"B"});
  EXPECT_EQ(signatures("?build_id=20261110090501"), V{"A"});  // A (burst) spans every build
  EXPECT_EQ(signatures("?channel=nightly"), V{});
}

TEST_F(HttpServerTest, CorsOnlyForConfiguredOrigins) {
  options_.cors_origins = {"http://dash.example"};
  Start();
  HttpResponse ok = Get("/api/v1/status", {"Origin: http://dash.example"});
  EXPECT_EQ(ok.header("access-control-allow-origin"), "http://dash.example");
  EXPECT_EQ(ok.header("vary"), "Origin");
  HttpResponse other = Get("/api/v1/status", {"Origin: http://evil.example"});
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.header("access-control-allow-origin"), "");
  HttpResponse none = Get("/api/v1/status");
  EXPECT_EQ(none.header("access-control-allow-origin"), "");
  HttpResponse preflight = HttpGet(server_.port(), "/api/v1/status", {"Origin: http://dash.example"}, "OPTIONS");
  EXPECT_EQ(preflight.status, 204);
  EXPECT_EQ(preflight.header("access-control-allow-headers"), "Authorization");
  EXPECT_EQ(HttpGet(server_.port(), "/api/v1/status", {"Origin: http://evil.example"}, "OPTIONS").status, 405);
}

TEST_F(HttpServerTest, StaticFilesAreServedFromTheRootOnly) {
  Start();
  HttpResponse index = Get("/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.body, "<html>dashboard</html>");
  EXPECT_EQ(index.header("content-type"), "text/html");
  HttpResponse js = Get("/js/app.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.body, "console.log(1);");
  for (const char* path : {"/../secret.txt", "/js/../../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt",
                           "/js/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt", "/%2e%2e%2fsecret.txt",
                           "/js/..%5c..%5csecret.txt", "/up/secret.txt", "//etc/passwd", "/../../../../etc/passwd",
                           "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/js/", "/js", "/nothing.html",
                           "/index.html/../../secret.txt"}) {
    HttpResponse r = Get(path);
    EXPECT_TRUE(r.status == 404 || r.status == 403 || r.status == 400) << path << " -> " << r.status;
    EXPECT_EQ(r.body.find("TOPSECRET"), std::string::npos) << path;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << path;
    EXPECT_EQ(r.body.find("app.js"), std::string::npos) << path << " (directory listing)";
  }
}

TEST_F(HttpServerTest, RequestsOverMaxRequestSizeAreRefused) {
  options_.max_request_size = 4096;
  Start();
  HttpResponse fits = Get("/api/v1/status", {"X-Padding: " + std::string(3000, 'a')});
  EXPECT_EQ(fits.status, 200);
  HttpResponse big = Get("/api/v1/status", {"X-Padding: " + std::string(5000, 'a')});
  EXPECT_NE(big.status, 200);
  EXPECT_EQ(big.body.find("\"version\""), std::string::npos) << big.body;
}

// What CivetWeb refuses before any handler runs (here: requests over max_request_size) is
// answered by the server like every other error, JSON with no-store, also from several
// workers at once. (CivetWeb's own error page dates itself with gmtime(), whose one static
// result every worker shares: TSan reported it as a race between two workers.)
TEST_F(HttpServerTest, RequestsRefusedBeforeAnyHandlerAreAnsweredAsJsonFromEveryWorkerAtOnce) {
  constexpr int kWorkers = 8;
  options_.num_threads = kWorkers;
  options_.max_sse_clients = 1;
  options_.max_request_size = 4096;
  Start();
  std::vector<int> fds;
  for (int i = 0; i < kWorkers; ++i) {
    fds.push_back(ConnectLoopback(server_.port()));
    ASSERT_GE(fds.back(), 0);
  }
  // Every worker holds one connection; the oversized requests then arrive together.
  const std::string big = RequestText("GET", "/api/v1/status", {"X-Padding: " + std::string(5000, 'a')});
  for (int fd : fds) EXPECT_TRUE(SendAll(fd, big));
  for (int fd : fds) {
    HttpResponse r = ParseResponse(ReadUntilClose(fd, 20s));
    ::close(fd);
    EXPECT_EQ(r.status, 400);  // CivetWeb's verdict on a header that does not fit
    EXPECT_EQ(r.header("content-type"), "application/json");
    EXPECT_EQ(r.header("cache-control"), "no-store");
    EXPECT_EQ(r.body.rfind("{\"error\":", 0), 0u) << "[" << r.body << "]";
  }
  EXPECT_EQ(Get("/healthz").status, 200);
}

// num_threads workers serve that many connections at once; the next one waits
// (in the backlog) until a worker is free.
TEST_F(HttpServerTest, ConnectionsBeyondNumThreadsWaitForAFreeWorker) {
  options_.num_threads = 2;
  options_.max_sse_clients = 1;
  Start();
  int idle[2] = {ConnectLoopback(server_.port()), ConnectLoopback(server_.port())};  // each holds a worker
  ASSERT_GE(idle[0], 0);
  ASSERT_GE(idle[1], 0);
  EXPECT_EQ(HttpGet(server_.port(), "/healthz", {}, "GET", 700ms).status, 0)
      << "answered with every worker busy";
  ::close(idle[0]);
  EXPECT_EQ(Get("/healthz").status, 200);
  ::close(idle[1]);
}

TEST_F(HttpServerTest, IncompleteRequestsAreClosedAfterRequestTimeout) {
  options_.request_timeout_ms = 300;
  Start();
  int fd = ConnectLoopback(server_.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"));  // no blank line: never complete
  pollfd p{fd, POLLIN, 0};
  char buf[256];
  bool closed = false;
  const auto deadline = std::chrono::steady_clock::now() + 8s;  // the default timeout would be 10 s
  while (!closed && std::chrono::steady_clock::now() < deadline) {
    if (::poll(&p, 1, 200) > 0 && ::recv(fd, buf, sizeof(buf), 0) <= 0) closed = true;
  }
  ::close(fd);
  EXPECT_TRUE(closed) << "the server kept an incomplete request open";
  EXPECT_EQ(Get("/healthz").status, 200);
}

// request_timeout is a deadline for the whole request, not for each read: a slowloris client
// that sends one more header byte every 100 ms is closed once it has run out, and its worker
// is free again.
TEST_F(HttpServerTest, ASlowlorisRequestIsClosedAtRequestTimeoutHoweverItKeepsSending) {
  options_.request_timeout_ms = 1000;
  options_.num_threads = 2;
  options_.max_sse_clients = 1;
  Start();
  int fd = ConnectLoopback(server_.port());
  ASSERT_GE(fd, 0);
  const std::string request = "GET /healthz HTTP/1.1\r\nX-Slow: " + std::string(200, 'a');
  const auto start = std::chrono::steady_clock::now();
  bool closed = false;
  for (size_t i = 0; i < request.size() && !closed; ++i) {  // 20 s of bytes at this pace
    if (::send(fd, &request[i], 1, MSG_NOSIGNAL) != 1) closed = true;
    pollfd p{fd, POLLIN, 0};
    char buf[256];
    if (::poll(&p, 1, 100) > 0 && ::recv(fd, buf, sizeof(buf), 0) <= 0) closed = true;
  }
  const auto held = std::chrono::steady_clock::now() - start;
  ::close(fd);
  EXPECT_TRUE(closed) << "the server read a slowloris request for 20 s";
  EXPECT_LT(held, 10s) << "closed long after request_timeout";
  EXPECT_EQ(Get("/healthz").status, 200);
}

TEST_F(HttpServerTest, MetricsCountRequestLatencies) {
  Start();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Get("/api/v1/hangs").status, 200);
  HttpResponse m = Get("/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(m.body.find("seismo_http_request_duration_seconds_count{path=\"/api/v1/hangs\"} 3\n"), std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("# TYPE seismo_rejected_total counter"), std::string::npos);
}

// What keeps answers from waiting on Nagle's algorithm (SPEC §10): TCP_NODELAY
// on every accepted socket, and each answer complete (Content-Length) on a
// connection the server closes, so a client never waits for more bytes.
TEST_F(HttpServerTest, AcceptedSocketsHaveNoDelayAndAnswersEndTheirConnection) {
  Start();
  const int client = ConnectLoopback(server_.port());
  ASSERT_GE(client, 0);
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  ASSERT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&local), &len), 0);
  // The server runs in this process: find its end of the connection.
  int server_end = -1;
  for (int attempt = 0; attempt < 100 && server_end < 0; ++attempt) {
    for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
      const int fd = std::atoi(entry.path().filename().c_str());
      sockaddr_in peer{};
      sockaddr_in self{};
      socklen_t pl = sizeof(peer);
      socklen_t sl = sizeof(self);
      if (fd == client || ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0 ||
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &sl) != 0 || peer.sin_family != AF_INET) {
        continue;
      }
      if (peer.sin_port == local.sin_port && ntohs(self.sin_port) == server_.port()) server_end = fd;
    }
    if (server_end < 0) std::this_thread::sleep_for(20ms);
  }
  ASSERT_GE(server_end, 0) << "the accepted socket was not found";
  int nodelay = 0;
  socklen_t nl = sizeof(nodelay);
  ASSERT_EQ(::getsockopt(server_end, IPPROTO_TCP, TCP_NODELAY, &nodelay, &nl), 0);
  EXPECT_NE(nodelay, 0) << "TCP_NODELAY is off on the accepted socket";

  ASSERT_TRUE(SendAll(client, RequestText("GET", "/api/v1/crashes/top", {})));
  HttpResponse r = ParseResponse(ReadUntilClose(client, 10s));
  ::close(client);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_EQ(r.header("content-length"), std::to_string(r.body.size()));
  EXPECT_NE(r.body.find("\"rows\""), std::string::npos);
}

TEST_F(HttpServerTest, StreamSendsSnapshotAndAlertEvents) {
  Start();
  SseClient sse(server_.port());
  ASSERT_TRUE(sse.WaitFor("event: snapshot", 1, 3s)) << sse.text();
  EXPECT_NE(sse.text().find("Content-Type: text/event-stream"), std::string::npos);
  EXPECT_NE(sse.text().find("data: {\"stream_time\":\"2026-11-20T12:00:00.000Z\",\"documents\":0}"),
            std::string::npos)
      << sse.text();
  // The same numbers republished are not news.
  auto same = std::make_shared<Snapshot>(*provider_.snapshot());
  provider_.SetSnapshot(same);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(sse.Count("event: snapshot"), 1u);
  // A new stream time is.
  auto next = std::make_shared<Snapshot>(*same);
  next->stream_time_ms += 60'000;
  provider_.SetSnapshot(next);
  ASSERT_TRUE(sse.WaitFor("event: snapshot", 2, 3s)) << sse.text();
  EXPECT_NE(sse.text().find("2026-11-20T12:01:00.000Z"), std::string::npos);
  provider_.SetAlerts(R"([{"state":"firing"}])");
  ASSERT_TRUE(sse.WaitFor("event: alert", 1, 3s)) << sse.text();
  EXPECT_NE(sse.text().find(R"(data: {"alerts":[{"state":"firing"}]})"), std::string::npos);
}

TEST_F(HttpServerTest, StreamKeepsAliveWithComments) {
  options_.sse_keepalive = 50ms;
  Start();
  SseClient sse(server_.port());
  EXPECT_TRUE(sse.WaitFor(": keep-alive", 2, 3s)) << sse.text();
}

TEST_F(HttpServerTest, StopEndsOpenStreamsQuickly) {
  options_.sse_poll = 250ms;
  options_.sse_keepalive = 15s;
  Start();
  SseClient a(server_.port());
  SseClient b(server_.port());
  ASSERT_TRUE(a.WaitFor("event: snapshot", 1, 3s));
  ASSERT_TRUE(b.WaitFor("event: snapshot", 1, 3s));
  const auto start = std::chrono::steady_clock::now();
  server_.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_TRUE(a.WaitForClose(2s));
  EXPECT_TRUE(b.WaitForClose(2s));
}

TEST_F(HttpServerTest, StreamClientsAreCapped) {
  options_.num_threads = 4;
  options_.max_sse_clients = 1;
  Start();
  SseClient first(server_.port());
  ASSERT_TRUE(first.WaitFor("event: snapshot", 1, 3s));
  SseClient second(server_.port());
  EXPECT_TRUE(second.WaitFor("503", 1, 3s)) << second.text();
  EXPECT_EQ(Get("/api/v1/status").status, 200);  // API requests still have threads
}

}  // namespace
}  // namespace seismo
