// Receiver: a tiny HTTP receiver on 127.0.0.1 for webhook tests. It accepts
// connections, reads one request each (headers + Content-Length body),
// answers `status`, closes the connection and records the body.
// Threading: its own accept thread; bodies() and requests() from any thread.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace seismo::testing {

class Receiver {
 public:
  explicit Receiver(int status) : status_(status) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~Receiver() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<std::string> bodies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  int requests() const { return requests_.load(); }

 private:
  void Run() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[4096];
      size_t body_at = std::string::npos, need = 0;
      while (true) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<size_t>(n));
        if (body_at == std::string::npos && (body_at = req.find("\r\n\r\n")) != std::string::npos) {
          body_at += 4;
          auto cl = req.find("Content-Length: ");
          need = cl == std::string::npos ? 0 : std::stoul(req.substr(cl + 16));
        }
        if (body_at != std::string::npos && req.size() - body_at >= need) break;
      }
      ++requests_;
      if (body_at != std::string::npos) {
        EXPECT_EQ(req.rfind("POST /hook", 0), 0u);
        EXPECT_NE(req.find("Content-Type: application/json"), std::string::npos);
        std::lock_guard<std::mutex> lock(mu_);
        bodies_.push_back(req.substr(body_at));
      }
      std::string resp =
          "HTTP/1.1 " + std::to_string(status_) + " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!write(c, resp.data(), resp.size());
      close(c);
    }
  }

  int status_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  mutable std::mutex mu_;
  std::vector<std::string> bodies_;
  std::thread thread_;
};

}  // namespace seismo::testing
