// A StateProvider whose answers a test sets; safe to read from server threads
// while the test thread changes it.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "seismo/query/provider.h"

namespace seismo::testing {

class FakeProvider final : public StateProvider {
 public:
  std::shared_ptr<const Snapshot> snapshot() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshot_;
  }
  RecordCounts counts() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }
  ServiceStatus status() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  std::string alerts_json() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return alerts_;
  }

  void SetSnapshot(std::shared_ptr<const Snapshot> s) {
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_ = std::move(s);
  }
  void SetCounts(const RecordCounts& c) {
    std::lock_guard<std::mutex> lock(mu_);
    counts_ = c;
  }
  void SetStatus(const ServiceStatus& s) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
  }
  void SetAlerts(std::string a) {
    std::lock_guard<std::mutex> lock(mu_);
    alerts_ = std::move(a);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> snapshot_;
  RecordCounts counts_;
  ServiceStatus status_;
  std::string alerts_ = "[]";
};

}  // namespace seismo::testing
