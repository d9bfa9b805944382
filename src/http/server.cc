#include "seismo/http/server.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>

#include "seismo/core/json_writer.h"
#include "seismo/core/thread_priority.h"
#include "seismo/http/access.h"
#include "seismo/query/api.h"
#include "seismo/query/metrics.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxStaticBytes = 16 * 1024 * 1024;

struct Reply {
  int code = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string headers;                    // extra header lines, each ending in \r\n
  std::string_view cache = "no-store";
};

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Headers and body in one write: nothing for Nagle's algorithm to hold back.
void Send(mg_connection* conn, const Reply& r, const std::string& cors) {
  std::string out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: {}\r\n"
      "X-Content-Type-Options: nosniff\r\nConnection: close\r\n{}{}\r\n",
      r.code, mg_get_response_code_text(conn, r.code), r.content_type, r.body.size(), r.cache, cors, r.headers);
  out += r.body;
  mg_write(conn, out.data(), out.size());
}

Reply JsonError(int code, std::string_view message) { return {code, "application/json", ErrorJson(message), {}}; }

// One SSE event; every line of `data` gets its own "data:" field.
std::string SseEvent(std::string_view event, std::string_view data) {
  std::string out = fmt::format("event: {}\n", event);
  size_t pos = 0;
  while (true) {
    size_t nl = data.find('\n', pos);
    out += "data: ";
    out += data.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    out += '\n';
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  out += '\n';
  return out;
}

// What the stream reports as "a new snapshot": the published state changed.
std::tuple<const Snapshot*, int64_t, uint64_t, uint64_t> SnapshotKey(const Snapshot* s, const RecordCounts& c) {
  return {s, s ? s->stream_time_ms : 0, s ? s->counters.deltas : 0, c.documents};
}

bool SameState(const std::tuple<const Snapshot*, int64_t, uint64_t, uint64_t>& a,
               const std::tuple<const Snapshot*, int64_t, uint64_t, uint64_t>& b) {
  // A republished snapshot with the same numbers is not news.
  return std::get<1>(a) == std::get<1>(b) && std::get<2>(a) == std::get<2>(b) && std::get<3>(a) == std::get<3>(b) &&
         (std::get<0>(a) == nullptr) == (std::get<0>(b) == nullptr);
}

// Everything but the API, /metrics and the health endpoints is a dashboard file.
bool IsStaticPath(std::string_view path) {
  return path != "/healthz" && path != "/readyz" && path != "/metrics" && path != "/api" &&
         !path.starts_with("/api/");
}

}  // namespace

void HttpServer::WakeListener() const {
  // A wildcard bind is reachable on loopback; otherwise connect to the bound host.
  const std::string host = host_.empty() || host_ == "0.0.0.0" ? "127.0.0.1" : host_;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  if (port_ <= 0 || ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) return;  // IPv6 etc.: wait it out
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return;
  (void)::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  ::close(fd);
}

HttpServer::HttpServer() = default;
HttpServer::~HttpServer() { Stop(); }

std::string HttpServer::url() const { return fmt::format("http://{}:{}", host_, port_); }

int HttpServer::OnRequest(mg_connection* conn) {
  auto* self = static_cast<HttpServer*>(mg_get_user_data(mg_get_context(conn)));
  return self->Handle(conn);
}

// A request CivetWeb refuses before OnRequest (malformed, over max_request_size, timed out)
// gets the API's JSON error. CivetWeb's own error page is not thread-safe: Debian builds it
// without REENTRANT_TIME, so the page's Date header comes from gmtime(), whose one static
// result every worker shares (two workers answering errors at once race on it).
int HttpServer::OnError(mg_connection* conn, int status, const char* message) {
  Send(conn, JsonError(status, message ? message : ""), "");
  return 0;  // answered: CivetWeb sends nothing more
}

void* HttpServer::OnThreadStart(const mg_context*, int) {
  // Every thread of the server (the one that accepts, the workers) answers clients: short
  // turns, so that under full ingest a request waits for a core for a tenth of a
  // millisecond, not for the turns of the threads ahead of it (ADR 0038).
  RequestShortSlice(kClientThreadSlice);
  return nullptr;
}

int HttpServer::OnLog(const mg_connection* conn, const char* message) {
  const mg_context* ctx = conn ? mg_get_context(conn) : nullptr;
  auto* self = ctx ? static_cast<HttpServer*>(mg_get_user_data(ctx)) : nullptr;
  if (self) {
    MutexLock lock(self->mu_);
    self->start_error_ = message;
  }
  spdlog::warn("http: {}", message);
  return 1;
}

Status HttpServer::Start(const HttpServerOptions& options, const StateProvider& provider) {
  if (ctx_) return Status::Internal("http: already started");
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  options_ = options;
  provider_ = &provider;
  budget_ = std::make_unique<AnswerBudget>(options_.answer_memory);
  warmer_owner_ = std::make_unique<AnswerWarmer>(options_.api, answers_, *budget_, options_.warm_nice);
  // release: pairs with Published()' acquire; the warmer is whole before it is seen.
  warmer_.store(warmer_owner_.get(), std::memory_order_release);
  if (options_.num_threads < 2) options_.num_threads = 2;
  options_.max_sse_clients = std::clamp(options_.max_sse_clients, 0, options_.num_threads / 2);

  const std::string root = options_.document_root.empty() ? DefaultStaticDir() : options_.document_root;
  std::error_code ec;
  root_ = fs::canonical(root, ec);
  if (ec || !fs::is_directory(root_, ec)) {
    if (!options_.document_root.empty()) return Status::InvalidArgument(fmt::format("http: static_dir {}: not a directory", root));
    spdlog::warn("http: no dashboards directory at {}; static files answer 404", root);
    root_.clear();
  }
  // The dashboard's libraries are built into vendor/ by scripts/setup (npm), never fetched.
  if (!root_.empty() && !fs::is_directory(root_ / "vendor", ec)) {
    spdlog::warn(
        "http: {} has no vendor/ directory: the dashboard's charts cannot load (scripts/setup builds it)",
        root_.string());
  }
  const size_t colon = options_.listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == options_.listen.size()) {
    return Status::InvalidArgument(fmt::format("http: listen '{}' is not host:port", options_.listen));
  }
  host_ = options_.listen.substr(0, colon);

  const std::string threads = std::to_string(options_.num_threads);
  const std::string request_size = std::to_string(options_.max_request_size);
  const std::string timeout = std::to_string(options_.request_timeout_ms);
  // Explicit document_root and no listing (SPEC §10); every request is
  // answered by OnRequest, CivetWeb never serves files itself.
  const std::string doc_root = root_.empty() ? root : root_.string();
  const char* mg_options[] = {"listening_ports",    options_.listen.c_str(),
                              "document_root",      doc_root.c_str(),
                              "enable_directory_listing", "no",
                              "tcp_nodelay",        "1",
                              "enable_keep_alive",  "no",
                              "num_threads",        threads.c_str(),
                              "max_request_size",   request_size.c_str(),
                              "request_timeout_ms", timeout.c_str(),
                              nullptr};
  mg_callbacks callbacks{};
  callbacks.begin_request = &HttpServer::OnRequest;
  callbacks.log_message = &HttpServer::OnLog;
  callbacks.http_error = &HttpServer::OnError;
  callbacks.init_thread = &HttpServer::OnThreadStart;
  ctx_ = mg_start(&callbacks, this, mg_options);
  if (!ctx_) {
    MutexLock lock(mu_);
    return Status::Unavailable(fmt::format("http: cannot listen on {}{}{}", options_.listen,
                                           start_error_.empty() ? "" : ": ", start_error_));
  }
  mg_server_port ports[4] = {};
  const int n = mg_get_server_ports(ctx_, 4, ports);
  if (n < 1) {
    Stop();
    return Status::Internal("http: CivetWeb reports no listening port");
  }
  port_ = ports[0].port;
  return Status::Ok();
}

void HttpServer::Stop() {
  if (warmer_owner_) warmer_owner_->Stop();  // after its round in progress; the cache and budget stay
  if (!ctx_) return;
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  // CivetWeb's accept loop notices the stop flag only when poll() returns,
  // which without traffic takes up to 2 s: poke it with connections until
  // mg_stop (which sets the flag, then joins every thread) returns.
  std::atomic<bool> stopped{false};
  std::thread waker([this, &stopped] {
    while (!stopped.load(std::memory_order_acquire)) {  // pairs with the release store below
      WakeListener();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  mg_stop(ctx_);  // joins the workers; SSE loops have been woken above
  stopped.store(true, std::memory_order_release);
  waker.join();
  ctx_ = nullptr;
}

int HttpServer::Handle(mg_connection* conn) {
  const auto start = std::chrono::steady_clock::now();
  const mg_request_info* ri = mg_get_request_info(conn);
  const std::string_view method = ri->request_method ? ri->request_method : "";
  const std::string_view path = ri->local_uri_raw ? ri->local_uri_raw : "";

  std::string cors;
  const char* origin = mg_get_header(conn, "Origin");
  const bool cors_ok = origin && OriginAllowed(options_.cors_origins, origin);
  if (cors_ok) {
    const bool any = std::find(options_.cors_origins.begin(), options_.cors_origins.end(), "*") !=
                     options_.cors_origins.end();
    cors = any ? "Access-Control-Allow-Origin: *\r\n" : fmt::format("Access-Control-Allow-Origin: {}\r\nVary: Origin\r\n", origin);
  }

  Reply r;
  std::shared_ptr<const AnswerBudget::Hold> hold;  // an API answer's memory, until it is sent
  if (method == "OPTIONS" && cors_ok) {
    r = {204, "text/plain", "", "Access-Control-Allow-Methods: GET\r\nAccess-Control-Allow-Headers: Authorization\r\n"
                                "Access-Control-Max-Age: 600\r\n"};
  } else if (method != "GET") {
    r = JsonError(405, "method not allowed");
    r.headers = "Allow: GET\r\n";
  } else if (path == "/healthz") {
    r = {200, "text/plain; charset=utf-8", "ok\n", {}};
  } else if (IsStaticPath(path)) {
    // The dashboard's files hold no data: served without the token, so a browser
    // can load the page that then asks for the token (ADR 0004).
    const int code = ServeStatic(conn, path, cors);
    latency_.Record(LatencyRecorder::RouteOf(path),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return code;
  } else if (!options_.auth_token.empty() &&
             !BearerMatches(mg_get_header(conn, "Authorization"), options_.auth_token)) {
    r = JsonError(401, "unauthorized");
    r.headers = "WWW-Authenticate: Bearer\r\n";
  } else if (path == "/readyz") {
    const ServiceStatus s = provider_->status();
    r = {IsReady(s) ? 200 : 503, "application/json", ReadyzJson(s), {}};
  } else if (path == "/metrics") {
    HttpStats stats{latency_.Copy(), static_cast<uint64_t>(sse_clients_.load(std::memory_order_relaxed)),
                    budget_->in_use(), budget_->refused(), answers_.hits()};
    auto snap = provider_->snapshot();
    r = {200, "text/plain; version=0.0.4; charset=utf-8",
         MetricsText(snap.get(), provider_->counts(), provider_->status(), provider_->alerts_json(), stats, WallMs()),
         {}};
  } else if (path == "/api/v1/stream") {
    return HandleStream(conn, cors);
  } else {
    ApiAnswer a = AnswerApi(path, ri->query_string ? ri->query_string : "", *provider_, options_.api,
                            WallMs(), &answers_, budget_.get(), warmed(), views_warmed());
    r = {a.status, std::move(a.content_type), std::move(a.body), a.status == 503 ? "Retry-After: 1\r\n" : ""};
    hold = std::move(a.hold);
    // A view a client uses: built ahead over the next snapshots while it is in use (ADR 0035).
    if (a.status == 200) {
      if (AnswerWarmer* w = warmer_.load(std::memory_order_acquire))
        w->Requested(path, ri->query_string ? ri->query_string : "");
    }
  }
  Send(conn, r, cors);
  hold.reset();  // the answer is sent: its memory is free
  latency_.Record(LatencyRecorder::RouteOf(path),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return r.code;
}

void HttpServer::Published(const std::shared_ptr<const Snapshot>& snap) {
  // acquire: pairs with Start()'s release.
  if (AnswerWarmer* w = warmer_.load(std::memory_order_acquire)) w->Offer(snap);
}

std::shared_ptr<const Snapshot> HttpServer::views_warmed() const {
  AnswerWarmer* w = warmer_.load(std::memory_order_acquire);
  return w ? w->views_warmed() : nullptr;
}

std::shared_ptr<const Snapshot> HttpServer::warmed() const {
  AnswerWarmer* w = warmer_.load(std::memory_order_acquire);
  return w ? w->warmed() : nullptr;
}

AnswerWarmer::Counts HttpServer::warm_counts() const {
  AnswerWarmer* w = warmer_.load(std::memory_order_acquire);
  return w ? w->counts() : AnswerWarmer::Counts{};
}

std::shared_ptr<const Snapshot> HttpServer::ViewSnapshot() const {
  std::shared_ptr<const Snapshot> snap = warmed();
  return snap ? snap : provider_->snapshot();
}

int HttpServer::ServeStatic(mg_connection* conn, std::string_view path, const std::string& cors) {
  std::optional<fs::path> file = root_.empty() ? std::nullopt : ResolveStaticFile(root_, path);
  std::string body;
  if (file) {
    std::ifstream in(*file, std::ios::binary);
    std::error_code ec;
    const auto size = fs::file_size(*file, ec);
    if (!in || ec || size > kMaxStaticBytes) {
      file.reset();
    } else {
      std::ostringstream ss;
      ss << in.rdbuf();
      body = ss.str();
    }
  }
  if (!file) {
    Send(conn, JsonError(404, "not found"), cors);
    return 404;
  }
  Reply r{200, mg_get_builtin_mime_type(file->c_str()), std::move(body), {}, "no-cache"};
  Send(conn, r, cors);
  return 200;
}

int HttpServer::HandleStream(mg_connection* conn, const std::string& cors) {
  if (sse_clients_.fetch_add(1, std::memory_order_relaxed) >= options_.max_sse_clients) {
    sse_clients_.fetch_sub(1, std::memory_order_relaxed);
    Send(conn, JsonError(503, "too many stream clients"), cors);
    return 503;
  }
  struct Release {
    std::atomic<int>& n;
    ~Release() { n.fetch_sub(1, std::memory_order_relaxed); }
  } release{sse_clients_};

  std::shared_ptr<const Snapshot> snap = ViewSnapshot();
  RecordCounts counts = provider_->counts();
  std::string alerts = provider_->alerts_json();
  auto last = SnapshotKey(snap.get(), counts);
  std::string out = fmt::format(
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n"
      "X-Accel-Buffering: no\r\n{}\r\nretry: 2000\n\n",
      cors);
  out += SseEvent("snapshot", SnapshotEventJson(snap.get(), counts));
  if (mg_write(conn, out.data(), out.size()) <= 0) return 200;
  auto last_write = std::chrono::steady_clock::now();

  MutexLock lock(mu_);
  for (;;) {
    const auto deadline = std::chrono::steady_clock::now() + options_.sse_poll;
    while (!stopping_ && cv_.WaitUntil(mu_, deadline)) {
    }
    if (stopping_) break;
    lock.Unlock();
    out.clear();
    snap = ViewSnapshot();
    counts = provider_->counts();
    auto key = SnapshotKey(snap.get(), counts);
    if (!SameState(key, last)) {
      last = key;
      out += SseEvent("snapshot", SnapshotEventJson(snap.get(), counts));
    }
    std::string now_alerts = provider_->alerts_json();
    if (now_alerts != alerts) {
      alerts = std::move(now_alerts);
      out += SseEvent("alert", "{\"alerts\":" + alerts + "}");
    }
    const auto now = std::chrono::steady_clock::now();
    if (out.empty() && now - last_write >= options_.sse_keepalive) out = ": keep-alive\n\n";
    if (!out.empty()) {
      if (mg_write(conn, out.data(), out.size()) <= 0) return 200;  // the client went away
      last_write = now;
    }
    lock.Lock();
  }
  return 200;
}

}  // namespace seismo
