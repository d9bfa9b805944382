#include "seismo/http/health_listener.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

#include "seismo/core/thread_priority.h"
#include "seismo/http/access.h"
#include "seismo/query/status_json.h"

namespace seismo {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr size_t kMaxRequestBytes = 8 * 1024;

struct Connection {
  int fd = -1;
  SteadyClock::time_point deadline;
  std::string in;   // the request so far
  std::string out;  // the answer still to send
  bool done = false;
};

std::string Response(int code, std::string_view reason, std::string_view type, std::string_view body) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n"
      "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n{}",
      code, reason, type, body.size(), body);
}

// The value of header `name` (case-insensitive) in `head`, or "".
std::string HeaderValue(std::string_view head, std::string_view name) {
  for (size_t pos = head.find("\r\n"); pos != std::string_view::npos; pos = head.find("\r\n", pos + 2)) {
    std::string_view line = head.substr(pos + 2, head.find("\r\n", pos + 2) - pos - 2);
    if (line.size() <= name.size() || line[name.size()] != ':') continue;
    if (!std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      continue;
    }
    std::string_view v = line.substr(name.size() + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return std::string(v);
  }
  return "";
}

}  // namespace

HealthListener::~HealthListener() { Stop(); }

std::string HealthListener::url() const { return fmt::format("http://{}:{}", host_, port_); }

Status HealthListener::Start(const HealthListenerOptions& options, const StateProvider& provider) {
  if (thread_.joinable()) return Status::Internal("health listener: already started");
  options_ = options;
  provider_ = &provider;
  if (options_.max_connections < 1) options_.max_connections = 1;
  const size_t colon = options_.listen.rfind(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument(fmt::format("health_listen '{}' is not host:port", options_.listen));
  }
  std::string host = options_.listen.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  if (host.empty()) host = "0.0.0.0";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  int port = 0;
  try {
    port = std::stoi(options_.listen.substr(colon + 1));
  } catch (...) {
    port = -1;
  }
  if (port < 0 || port > 65535 || ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument(
        fmt::format("health_listen '{}' is not an IPv4 host:port", options_.listen));
  }
  addr.sin_port = htons(static_cast<uint16_t>(port));
  host_ = host;
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0)
    return Status::IoError(fmt::format("health listener: socket: {}", std::strerror(errno)));
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, SOMAXCONN) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return Status::Unavailable(fmt::format("health listener: cannot listen on {}: {}", options_.listen, why));
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  stopping_.store(false);
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void HealthListener::Stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  thread_.join();
  ::close(wake_fd_);
  ::close(listen_fd_);
  wake_fd_ = listen_fd_ = -1;
}

void HealthListener::Run() {
  pthread_setname_np(pthread_self(), "seismo-health");  // for operators' tools, and tests
  RequestShortSlice(kClientThreadSlice);                // as the HTTP server's threads (ADR 0038)
  std::deque<Connection> conns;  // in accept order: the oldest first
  std::vector<pollfd> fds;
  auto answer = [&](Connection& c) {
    const size_t end = c.in.find("\r\n\r\n");
    const std::string_view head(c.in.data(), end);
    const std::string_view line = head.substr(0, head.find("\r\n"));
    const size_t sp1 = line.find(' ');
    const size_t sp2 = line.find(' ', sp1 == std::string_view::npos ? line.size() : sp1 + 1);
    const std::string_view method = line.substr(0, sp1);
    std::string_view path = sp1 == std::string_view::npos || sp2 == std::string_view::npos
                                ? std::string_view()
                                : line.substr(sp1 + 1, sp2 - sp1 - 1);
    path = path.substr(0, path.find('?'));
    if (path != "/healthz" && path != "/readyz") {
      c.out = Response(404, "Not Found", "application/json", R"({"error":"not found"})");
    } else if (method != "GET") {
      c.out = Response(405, "Method Not Allowed", "application/json", R"({"error":"method not allowed"})");
    } else if (path == "/healthz") {
      c.out = Response(200, "OK", "text/plain; charset=utf-8", "ok\n");
    } else if (!options_.auth_token.empty() &&
               !BearerMatches(HeaderValue(head, "Authorization").c_str(), options_.auth_token)) {
      c.out = Response(401, "Unauthorized", "application/json", R"({"error":"unauthorized"})");
    } else {
      const ServiceStatus s = provider_->status();
      const bool ready = IsReady(s);
      c.out = Response(ready ? 200 : 503, ready ? "OK" : "Service Unavailable", "application/json",
                       ReadyzJson(s));
    }
  };
  auto send_some = [](Connection& c) {
    while (!c.out.empty()) {
      const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // POLLOUT later
      c.done = true;                                                   // the client went away
      return;
    }
    c.done = true;  // answered
  };
  // What has come in, answered once the request is whole (or too large).
  auto read_some = [&](Connection& c) {
    char buf[2048];
    const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      c.done = true;
      return;
    }
    if (n < 0) return;
    c.in.append(buf, static_cast<size_t>(n));
    if (c.in.size() > kMaxRequestBytes) {
      c.out = Response(431, "Request Header Fields Too Large", "application/json",
                       R"({"error":"request too large"})");
      send_some(c);
    } else if (c.in.find("\r\n\r\n") != std::string::npos) {
      answer(c);
      send_some(c);
    }
  };
  while (!stopping_.load()) {
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    SteadyClock::time_point next = SteadyClock::now() + std::chrono::seconds(1);
    for (const Connection& c : conns) {
      fds.push_back({c.fd, static_cast<short>(c.out.empty() ? POLLIN : POLLOUT), 0});
      next = std::min(next, c.deadline);
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next - SteadyClock::now()).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait, 0) + 1)) < 0 &&
        errno != EINTR) {
      break;
    }
    if (fds[0].revents != 0) break;  // Stop()
    for (size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      const short ev = fds[i + 2].revents;
      if (ev == 0) continue;
      if (!c.out.empty()) {
        send_some(c);
      } else {
        read_some(c);
      }
    }
    // Answered, gone, or out of time: closed.
    const SteadyClock::time_point now = SteadyClock::now();
    for (Connection& c : conns) {
      if (c.done || now >= c.deadline) {
        ::close(c.fd);
        c.fd = -1;
      }
    }
    conns.erase(std::remove_if(conns.begin(), conns.end(), [](const Connection& c) { return c.fd < 0; }),
                conns.end());
    // New connections, the oldest making room: a new probe always gets a slot. Each is read
    // as it is accepted (a probe's request is usually in by then, and is answered at once),
    // and a turn accepts at most a quarter of the slots, so a connection has turns to be
    // read before a flood behind it could push it out; the rest wait in the backlog.
    if (fds[1].revents != 0) {
      const size_t per_turn = std::max<size_t>(1, options_.max_connections / 4);
      for (size_t accepted = 0; accepted < per_turn; ++accepted) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;  // EAGAIN: none left (or out of descriptors: try again next turn)
        if (conns.size() >= options_.max_connections) {
          ::close(conns.front().fd);
          conns.pop_front();
        }
        conns.push_back({fd, SteadyClock::now() + options_.header_timeout, {}, {}, false});
        read_some(conns.back());
      }
    }
  }
  for (const Connection& c : conns) ::close(c.fd);
}

}  // namespace seismo
