// A minimal blocking HTTP/1.1 client over a raw loopback socket, for tests of
// the real server: one request per connection (the server closes after each
// answer), and an SSE reader that waits for events with a deadline.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace seismo::testing {

struct HttpResponse {
  int status = 0;  // 0 = no answer
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

inline int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

inline std::string RequestText(std::string_view method, std::string_view target,
                               const std::vector<std::string>& headers) {
  std::string req = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& h : headers) req += h + "\r\n";
  return req + "\r\n";
}

inline HttpResponse ParseResponse(const std::string& raw) {
  HttpResponse r;
  size_t end = raw.find("\r\n\r\n");
  if (raw.size() < 12 || end == std::string::npos) return r;
  r.status = std::atoi(raw.c_str() + 9);
  size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    size_t nl = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, nl - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      size_t v = line.find_first_not_of(' ', colon + 1);
      r.headers[name] = v == std::string::npos ? "" : line.substr(v);
    }
    pos = nl + 2;
  }
  r.body = raw.substr(end + 4);
  return r;
}

// Reads until the server closes the connection or `timeout` passes without data.
inline std::string ReadUntilClose(int fd, std::chrono::milliseconds timeout) {
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string raw;
  char buf[65536];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) raw.append(buf, static_cast<size_t>(n));
  return raw;
}

// Sends one request and reads until the server closes the connection (status 0
// when no answer came within `timeout`).
inline HttpResponse HttpGet(int port, std::string_view target, const std::vector<std::string>& headers = {},
                            std::string_view method = "GET",
                            std::chrono::milliseconds timeout = std::chrono::milliseconds(20'000)) {
  int fd = ConnectLoopback(port);
  if (fd < 0) return {};
  std::string raw;
  if (SendAll(fd, RequestText(method, target, headers))) raw = ReadUntilClose(fd, timeout);
  ::close(fd);
  return ParseResponse(raw);
}

// Reads a Server-Sent Events stream.
class SseClient {
 public:
  SseClient(int port, const std::vector<std::string>& headers = {}) : fd_(ConnectLoopback(port)) {
    if (fd_ >= 0) SendAll(fd_, RequestText("GET", "/api/v1/stream", headers));
  }
  ~SseClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  SseClient(const SseClient&) = delete;
  SseClient& operator=(const SseClient&) = delete;

  // Waits until the text received so far contains `needle` `times` times;
  // false at the deadline or when the server closed the stream.
  bool WaitFor(std::string_view needle, size_t times, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (Count(needle) < times) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !ReadSome(static_cast<int>(left.count()))) return false;
    }
    return true;
  }
  // True when the server closes the connection before the deadline.
  bool WaitForClose(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      if (!ReadSome(static_cast<int>(left.count()))) return closed_;
    }
  }
  size_t Count(std::string_view needle) const {
    size_t n = 0;
    for (size_t p = text_.find(needle); p != std::string::npos; p = text_.find(needle, p + 1)) ++n;
    return n;
  }
  const std::string& text() const { return text_; }

 private:
  bool ReadSome(int timeout_ms) {
    if (fd_ < 0 || closed_) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    text_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  bool closed_ = false;
  std::string text_;
};

}  // namespace seismo::testing
