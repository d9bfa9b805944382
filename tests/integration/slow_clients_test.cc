// Slow clients cannot take /healthz and /readyz off the air (SPEC §7, ADR 0018): the real
// HTTP server and health listener on free ports, with many more idle, half-open and
// slowloris connections than the server has workers, on both ports. The main port is
// starved (that is the attack working); health probes on the health listener are answered
// promptly all along; once the slow clients go, the API answers again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "seismo/http/health_listener.h"
#include "seismo/http/server.h"
#include "unit/core/thread_slice.h"
#include "unit/http/http_client.h"
#include "unit/query/fake_provider.h"

namespace seismo {
namespace {

using namespace seismo::testing;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// A connection that may still be in the kernel's backlog: never waits for the handshake.
int ConnectNonBlocking(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));  // EINPROGRESS
  return fd;
}

// One request within `budget`, connect included: the status, or 0 when no answer came in time.
int ProbeWithin(int port, std::string_view target, std::chrono::milliseconds budget) {
  const auto deadline = SteadyClock::now() + budget;
  const int fd = ConnectNonBlocking(port);
  if (fd < 0) return 0;
  auto left = [&] { return static_cast<int>(std::max<int64_t>(0, (deadline - SteadyClock::now()) / 1ms)); };
  pollfd p{fd, POLLOUT, 0};
  std::string raw;
  if (::poll(&p, 1, left()) == 1 && (p.revents & POLLOUT) != 0) {
    const std::string req = RequestText("GET", target, {});
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      p = {fd, POLLIN, 0};
      while (::poll(&p, 1, left()) == 1) {
        const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        raw.append(buf, static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  return ParseResponse(raw).status;
}

// Idle connections (nothing sent), half-open requests (headers never finished) and
// slowloris connections (a header byte every 200 ms from a thread), against one port.
class SlowClients {
 public:
  SlowClients(int port, int idle, int half_open, int slowloris) {
    for (int i = 0; i < idle; ++i) fds_.push_back(ConnectNonBlocking(port));
    for (int i = 0; i < half_open + slowloris; ++i) {
      const int fd = ConnectNonBlocking(port);
      fds_.push_back(fd);
      (i < half_open ? half_open_ : slowloris_).push_back(fd);
    }
    // Half-open: as soon as each is connected, the start of a request that never ends.
    for (int fd : half_open_) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 200) == 1) {
        (void)::send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n", 32, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
    }
    dribbler_ = std::thread([this] {
      const std::string header = "GET /readyz HTTP/1.1\r\nX-a: " + std::string(10'000, 'b');
      for (size_t at = 0; !stop_.load() && at < header.size(); ++at) {
        for (int fd : slowloris_) (void)::send(fd, &header[at], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        for (int i = 0; i < 20 && !stop_.load(); ++i) std::this_thread::sleep_for(10ms);
      }
    });
  }
  ~SlowClients() {
    stop_.store(true);
    dribbler_.join();
    for (int fd : fds_) ::close(fd);
  }

 private:
  std::vector<int> fds_, half_open_, slowloris_;
  std::atomic<bool> stop_{false};
  std::thread dribbler_;
};

TEST(SlowClients, HealthProbesAreAnsweredPromptlyWhileSlowClientsHoldEveryWorker) {
  FakeProvider provider;
  ServiceStatus ready;
  ready.consuming = ready.sources_done = true;
  provider.SetStatus(ready);
  HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  options.num_threads = 4;
  options.max_sse_clients = 1;
  options.request_timeout_ms = 60'000;  // a held worker stays held for the whole test
  HttpServer server;
  ASSERT_TRUE(server.Start(options, provider).ok());
  HealthListener health;
  ASSERT_TRUE(health.Start({"127.0.0.1:0", ""}, provider).ok());
  ASSERT_GT(health.port(), 0);
  ASSERT_NE(health.port(), server.port());

  // What a probe costs here, now: the budget under attack is a multiple of it (2 s at least).
  const auto before = SteadyClock::now();
  for (int i = 0; i < 5; ++i) ASSERT_EQ(ProbeWithin(health.port(), "/healthz", 10s), 200);
  const auto budget = std::max<std::chrono::milliseconds>(
      2s, std::chrono::duration_cast<std::chrono::milliseconds>((SteadyClock::now() - before) / 5 * 50));
  ASSERT_EQ(ProbeWithin(server.port(), "/api/v1/status", 10s), 200);

  {
    // 300 slow clients on the main port (4 workers), 300 on the health listener (64 slots).
    SlowClients main_port(server.port(), 100, 100, 100);
    SlowClients health_port(health.port(), 100, 100, 100);
    // The attack works: the main port has no worker left, for its own /healthz either.
    EXPECT_EQ(ProbeWithin(server.port(), "/healthz", 1s), 0) << "the main port answered: nothing was tested";
    // The health listener answers every probe, each within the budget.
    for (int i = 0; i < 20; ++i) {
      const auto sent = SteadyClock::now();
      EXPECT_EQ(ProbeWithin(health.port(), i % 2 == 0 ? "/healthz" : "/readyz", budget), 200)
          << "probe " << i;
      EXPECT_LE(SteadyClock::now() - sent, budget) << "probe " << i;
    }
    // Readiness is the daemon's, not a constant.
    ServiceStatus not_ready = ready;
    not_ready.not_ready_reason = "waiting for an operator";
    provider.SetStatus(not_ready);
    EXPECT_EQ(ProbeWithin(health.port(), "/readyz", budget), 503);
    provider.SetStatus(ready);
  }  // the slow clients go

  // Their workers are freed as their connections close: the API answers again.
  const auto deadline = SteadyClock::now() + 30s;
  int status = 0;
  while ((status = ProbeWithin(server.port(), "/api/v1/status", 2s)) != 200 &&
         SteadyClock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(status, 200);
  EXPECT_EQ(ProbeWithin(server.port(), "/healthz", 10s), 200);
  health.Stop();
  server.Stop();
}

// A probe that sends its request as soon as it is connected is answered even when a flood
// of connections, many more than the listener has slots, arrives right behind it: a
// connection is read as it is accepted, and a turn accepts only part of the slots, so the
// newest cannot push out one whose request is already in.
TEST(SlowClients, AProbeIsAnsweredThoughAFloodOfConnectionsFollowsIt) {
  FakeProvider provider;
  HealthListener health;
  HealthListenerOptions o{"127.0.0.1:0", ""};
  o.max_connections = 8;
  ASSERT_TRUE(health.Start(o, provider).ok());
  for (int round = 0; round < 20; ++round) {
    const int probe = ConnectNonBlocking(health.port());
    ASSERT_GE(probe, 0);
    pollfd p{probe, POLLOUT, 0};
    ASSERT_EQ(::poll(&p, 1, 10'000), 1);
    const std::string req = RequestText("GET", "/healthz", {});
    ASSERT_EQ(::send(probe, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
    std::vector<int> flood;
    for (int i = 0; i < 200; ++i) flood.push_back(ConnectNonBlocking(health.port()));
    std::string raw;
    char buf[4096];
    p = {probe, POLLIN, 0};
    while (::poll(&p, 1, 10'000) == 1) {
      const ssize_t n = ::recv(probe, buf, sizeof(buf), 0);
      if (n <= 0) break;
      raw.append(buf, static_cast<size_t>(n));
    }
    EXPECT_EQ(ParseResponse(raw).status, 200) << "round " << round;
    ::close(probe);
    for (int fd : flood) ::close(fd);
  }
  health.Stop();
}

// The health listener's thread asks for the kernel's shortest turn, as the HTTP server's
// threads do (ADR 0038): a probe is answered at once though every core is busy.
TEST(SlowClients, TheHealthListenerAsksForTheShortestTurn) {
  if (!testing::ThreadSliceNs(static_cast<int>(::gettid()))) GTEST_SKIP() << "this kernel shows no se.slice";
  FakeProvider provider;
  HealthListener health;
  const std::set<int> before = testing::ThreadIds();
  ASSERT_TRUE(health.Start(HealthListenerOptions{"127.0.0.1:0", ""}, provider).ok());
  EXPECT_EQ(HttpGet(health.port(), "/healthz").status, 200);  // its thread runs: it answered
  // Its thread by its name: a sanitizer's runtime may start a thread of its own meanwhile.
  std::vector<int> started;
  for (const int tid : testing::ThreadIds()) {
    if (!before.contains(tid) && testing::ThreadName(tid) == "seismo-health") started.push_back(tid);
  }
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(testing::ThreadSliceNs(started[0]), uint64_t{100'000});
  health.Stop();
}

// The health listener's own rules: the token guards /readyz (not /healthz), other paths and
// methods are refused, a request that never ends is closed at the header timeout, and a
// request over 8 KiB is refused.
TEST(SlowClients, TheHealthListenerAnswersOnlyHealthAndClosesWhatNeverEnds) {
  FakeProvider provider;
  ServiceStatus ready;
  ready.consuming = ready.sources_done = true;
  provider.SetStatus(ready);
  HealthListener health;
  HealthListenerOptions o{"127.0.0.1:0", "s3cret"};
  o.header_timeout = 300ms;
  ASSERT_TRUE(health.Start(o, provider).ok());
  const int port = health.port();
  HttpResponse h = HttpGet(port, "/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "ok\n");
  EXPECT_EQ(h.header("cache-control"), "no-store");
  EXPECT_EQ(HttpGet(port, "/readyz").status, 401);
  HttpResponse r = HttpGet(port, "/readyz", {"Authorization: Bearer s3cret"});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"ready":true,"restored":true,"consuming":true,"sources_done":true,"reason":null})");
  EXPECT_EQ(HttpGet(port, "/api/v1/status").status, 404);
  EXPECT_EQ(HttpGet(port, "/healthz", {}, "POST").status, 405);
  EXPECT_EQ(HttpGet(port, "/healthz", {"X-Pad: " + std::string(9000, 'a')}).status, 431);

  const int fd = ConnectLoopback(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "GET /healthz HTTP/1.1\r\n"));  // never finished
  const auto sent = SteadyClock::now();
  EXPECT_EQ(ReadUntilClose(fd, 10s), "");  // closed without an answer
  EXPECT_LT(SteadyClock::now() - sent, 10s);
  ::close(fd);
  health.Stop();
}

}  // namespace
}  // namespace seismo
