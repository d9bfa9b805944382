// The real HTTP server on a free loopback port, fed by a fake StateProvider:
// routing, headers, token, CORS, static-file confinement, SSE, Stop with open
// streams, and no Nagle stalls.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "seismo/http/server.h"
#include "unit/http/http_client.h"
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
  EXPECT_EQ(ready.body, R"({"ready":true,"restored":true,"consuming":true,"sources_done":true})");
  s.restored = false;
  provider_.SetStatus(s);
  EXPECT_EQ(Get("/readyz").status, 503);
}

TEST_F(HttpServerTest, TokenProtectsEverythingButHealthz) {
  options_.auth_token = "s3cret";
  Start();
  for (const char* path : {"/api/v1/status", "/api/v1/hangs", "/metrics", "/readyz", "/", "/js/app.js"}) {
    HttpResponse none = Get(path);
    EXPECT_EQ(none.status, 401) << path;
    EXPECT_EQ(none.body, R"({"error":"unauthorized"})") << path;
    EXPECT_EQ(none.header("www-authenticate"), "Bearer") << path;
    EXPECT_EQ(Get(path, {"Authorization: Bearer wrong"}).status, 401) << path;
    EXPECT_EQ(Get(path, {"Authorization: Bearer s3cret2"}).status, 401) << path;
    EXPECT_EQ(Get(path, {"Authorization: Bearer s3cret"}).status, path == std::string("/readyz") ? 503 : 200)
        << path;
  }
  EXPECT_EQ(Get("/healthz").status, 200);
  SseClient denied(server_.port());
  EXPECT_TRUE(denied.WaitFor("401 Unauthorized", 1, 2s)) << denied.text();
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

TEST_F(HttpServerTest, OversizedRequestIsRefused) {
  options_.max_request_size = 4096;
  Start();
  HttpResponse r = Get("/api/v1/status", {"X-Padding: " + std::string(8192, 'a')});
  EXPECT_NE(r.status, 200);
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

TEST_F(HttpServerTest, SequentialRequestsDoNotStallOnNagle) {
  Start();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) ASSERT_EQ(Get("/api/v1/crashes/top").status, 200);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // 50 requests with a 40 ms delayed-ACK stall each would take 2 s.
  EXPECT_LT(elapsed, 1s) << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms";
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
