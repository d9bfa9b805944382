// HealthListener: /healthz and /readyz on a port of their own, answered by one
// thread that never waits on a client (SPEC §7, ADR 0018).
//
// CivetWeb gives every connection a worker thread from the moment it is
// accepted until its request is read (up to request_timeout_ms), so clients
// that connect and then send slowly or nothing — more of them than there are
// workers — starve every endpoint of the main port, the health endpoints with
// them, and an orchestrator restarts a healthy daemon. Here, instead:
//
//   accept (at most max_connections/4 a turn) ──> slot (at most max_connections; when
//     full the oldest is closed) ──> read at once
//     poll() over all slots ──> bytes in ──> "GET <path> HTTP/1.x\r\n...\r\n\r\n"
//     ──> answer in one write ──> close
//   each slot closed at header_timeout after it was accepted, answered or not
//
// A silent client holds a slot, never the thread; a new probe always gets a
// slot (the oldest goes) and is answered as soon as its request is in, and a flood
// behind it cannot push it out before it has been read.
//
// Answers: GET /healthz -> 200 "ok\n"; GET /readyz -> ReadyzJson (200 when
// IsReady, else 503), behind the bearer token when one is configured, as on
// the main port; other paths 404, other methods 405; a request over 8 KiB 431.
//
// Ownership: borrows the StateProvider, which must outlive Stop().
// Threading: Start/Stop/port from the owning thread; one thread of its own
// calls provider.status(). Stop is idempotent and run by the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>

#include "seismo/core/status.h"
#include "seismo/query/provider.h"

namespace seismo {

struct HealthListenerOptions {
  std::string listen;      // host:port (IPv4); port 0 picks a free port
  std::string auth_token;  // "" = none; else /readyz needs "Authorization: Bearer <token>"
  size_t max_connections = 64;
  std::chrono::milliseconds header_timeout{2'000};  // accept to answered, at most
};

class HealthListener {
 public:
  HealthListener() = default;
  ~HealthListener();
  HealthListener(const HealthListener&) = delete;
  HealthListener& operator=(const HealthListener&) = delete;

  // Binds and starts the thread. Fails when the address cannot be bound.
  Status Start(const HealthListenerOptions& options, const StateProvider& provider);
  void Stop();

  int port() const { return port_; }  // the bound port (the real one when 0 was asked); 0 before Start
  std::string url() const;            // "http://<host>:<port>"

 private:
  void Run();

  HealthListenerOptions options_;
  const StateProvider* provider_ = nullptr;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop() wakes the poll
  std::string host_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace seismo
