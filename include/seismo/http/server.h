// HttpServer: the v1 API, /metrics, health, the SSE stream and the dashboard's
// static files on CivetWeb (the only place CivetWeb is used).
//
//   request ─> method (GET; OPTIONS preflight for allowed origins; else 405)
//           ─> /healthz (always open)
//           ─> static file: any path but /api/*, /metrics, /readyz (open: the
//              dashboard's files hold no data; the page asks for the token)
//           ─> bearer token (when configured; else 401)
//           ─> /readyz | /metrics | /api/v1/stream (SSE) | /api/v1/* (query::AnswerApi)
//
// Every answer is written in one write (headers and body together) and the
// sockets have TCP_NODELAY, so no answer waits on Nagle's algorithm (SPEC §10).
// Handlers only read: the provider's snapshot, counters and alerts.
// API answers are bounded (options.api.limits) and reserve their memory in a budget of
// options.answer_memory bytes for as long as they are built and sent; a request that
// does not fit is answered 503 with Retry-After at once (query/answer_budget.h).
//
// Default answers: the publisher hands each published snapshot to Published(); a thread
// of the server builds the dashboard's default answers for it (http/answer_warmer.h), and
// until they are built, requests for them are served from the previous snapshot that has
// them (ADR 0025). Every other request reads the newest snapshot.
//
// SSE: each /api/v1/stream client holds one worker thread; it polls every sse_poll and
// sends `event: snapshot` when the state the default answers show changes (stream time,
// documents or deltas: ViewSnapshot), `event: alert` when the alerts
// change, and a comment every sse_keepalive. At most max_sse_clients stream at
// once (503 beyond), so API requests always have threads left.
//
// Ownership: borrows the StateProvider, which must outlive Stop().
// Threading: Start/Stop/port from the owning thread; request handlers run on
// CivetWeb's worker threads. Stop wakes every SSE client and returns once
// CivetWeb has joined its threads; it is idempotent and run by the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "seismo/core/mutex.h"
#include "seismo/core/status.h"
#include "seismo/http/answer_warmer.h"
#include "seismo/http/latency.h"
#include "seismo/query/api.h"
#include "seismo/query/provider.h"
#include "seismo/query/status_json.h"

struct mg_context;
struct mg_connection;

namespace seismo {

struct HttpServerOptions {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free port
  std::string document_root;              // "" = DefaultStaticDir()
  std::string auth_token;                 // "" = no token (ReadTokenFile reads [http] auth_token_file)
  std::vector<std::string> cors_origins;  // exact origins, "*" = any
  // Limits ([http] keys of the same names): workers = connections served at
  // once (more wait in the backlog), of which at most max_sse_clients stream.
  int num_threads = 16;
  size_t max_request_size = 16 * 1024;    // bytes of request line and headers
  int request_timeout_ms = 10'000;        // an idle or slow request is closed after this
  int max_sse_clients = 8;
  std::chrono::milliseconds sse_poll{250};
  std::chrono::milliseconds sse_keepalive{15'000};
  ApiSettings api;                     // windows and bucket before the first snapshot; answer bounds
  uint64_t answer_memory = 32u << 20;  // bytes all API answers in flight may hold (503 beyond)
  int warm_nice = 0;                   // nice steps the warm-up thread runs below the process ([ingest] nice)
};

class HttpServer {
 public:
  HttpServer();
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the worker threads. Fails when the address cannot be
  // bound or the options are invalid. Call once.
  Status Start(const HttpServerOptions& options, const StateProvider& provider);
  void Stop();

  // The publisher calls it once it has published `snap`: the warm-up thread builds its
  // default answers (http/answer_warmer.h), never on the caller's thread. Any thread;
  // ignored before Start and after Stop.
  void Published(const std::shared_ptr<const Snapshot>& snap);
  // The newest snapshot whose default answers are built (null before the first), and how
  // many warm-up rounds have finished.
  std::shared_ptr<const Snapshot> warmed() const;
  // The newest snapshot over which the views in use were all built (AnswerWarmer).
  std::shared_ptr<const Snapshot> views_warmed() const;
  uint64_t warm_rounds() const { return warm_counts().rounds; }
  AnswerWarmer::Counts warm_counts() const;  // and what they carried from the round before

  int port() const { return port_; }  // the bound port (the real one when 0 was asked)
  std::string url() const;            // "http://127.0.0.1:<port>"

 private:
  static int OnRequest(mg_connection* conn);
  static int OnLog(const mg_connection* conn, const char* message);
  static int OnError(mg_connection* conn, int status, const char* message);
  static void* OnThreadStart(const mg_context* ctx, int thread_type);
  int Handle(mg_connection* conn);
  int HandleStream(mg_connection* conn, const std::string& cors);
  void WakeListener() const;  // a throw-away connection to the listening port
  int ServeStatic(mg_connection* conn, std::string_view path, const std::string& cors);
  // What SSE announces: the newest snapshot whose default answers are built, which is what
  // the dashboard's views then read (the provider's snapshot when nothing is warmed).
  std::shared_ptr<const Snapshot> ViewSnapshot() const;

  // Set by Start before the workers exist, then read-only.
  HttpServerOptions options_;
  const StateProvider* provider_ = nullptr;
  std::filesystem::path root_;  // canonical document root
  std::string host_;
  int port_ = 0;
  mg_context* ctx_ = nullptr;

  LatencyRecorder latency_;  // atomics
  AnswerCache<ApiAnswer> answers_;  // its own lock
  std::unique_ptr<AnswerBudget> budget_;  // set by Start; its own lock
  // Made by Start (before the workers exist); Published may run on the publisher thread
  // before Start, so it reads the warmer through `warmer_`, stored once the warmer exists.
  std::unique_ptr<AnswerWarmer> warmer_owner_;
  std::atomic<AnswerWarmer*> warmer_{nullptr};
  std::atomic<int> sse_clients_{0};

  Mutex mu_;
  CondVar cv_;  // notified on Stop (SSE loops wait on it)
  bool stopping_ GUARDED_BY(mu_) = false;
  std::string start_error_ GUARDED_BY(mu_);  // CivetWeb's last error message during Start
};

}  // namespace seismo
