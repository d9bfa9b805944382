#include "seismo/alert/sinks.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "curl_api.h"
#include "seismo/core/hash.h"

namespace seismo {

std::string AlertEventId(const AlertEvent& event) {
  std::string identity = AlertKeyString(event.alert.key);
  identity += '|';
  identity += AlertStateName(event.from);
  identity += '|';
  identity += AlertStateName(event.alert.state);
  identity += '|';
  identity += std::to_string(event.alert.since_ms);
  return fmt::format("{:016x}", Hash64(identity));
}

std::string AlertEventJson(const AlertEvent& event) {
  std::string json = AlertJson(event.alert);
  json.pop_back();  // the closing brace
  json += ",\"previous_state\":\"";
  json += AlertStateName(event.from);
  json += "\",\"event_id\":\"";
  json += AlertEventId(event);
  json += "\"}";
  return json;
}

std::string AlertKeyString(const AlertKey& k) {
  std::string out(AlertRuleName(k.rule));
  for (const std::string* s : {&k.channel, &k.os, &k.build, &k.signature, &k.scope}) {
    out += '|';
    out += *s;
  }
  return out;
}

// ------------------------------------------------------------------ file

Result<std::unique_ptr<FileSink>> FileSink::Open(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) return Status::IoError(path + ": " + std::strerror(errno));
  return std::unique_ptr<FileSink>(new FileSink(path, f));
}

FileSink::~FileSink() { std::fclose(file_); }

void FileSink::Publish(const AlertEvent&, const std::string& json) {
  if (std::fwrite(json.data(), 1, json.size(), file_) != json.size() || std::fputc('\n', file_) == EOF ||
      std::fflush(file_) != 0) {
    std::clearerr(file_);
    if (write_errors_.fetch_add(1, std::memory_order_relaxed) == 0) {
      spdlog::error("alerts: cannot write {}: {}", path_, std::strerror(errno));
    }
    return;
  }
  written_.fetch_add(1, std::memory_order_relaxed);
}

SinkDelivery FileSink::delivery() const {
  SinkDelivery d;
  d.sent = written_.load(std::memory_order_relaxed);
  d.failed = write_errors_.load(std::memory_order_relaxed);
  return d;
}

// ------------------------------------------------------------------ webhook

namespace {

using alert_internal::CurlApi;

size_t DiscardBody(char*, size_t size, size_t n, void*) { return size * n; }

// One POST on the worker's handle (its connection is kept and reused).
// `api` is nullptr when libcurl could not be loaded (`load_error` says why).
bool PostOnce(const CurlApi* api, const std::string& load_error, CURL* curl, const WebhookOptions& options,
              const std::string& body, std::string* error) {
  if (api == nullptr) {
    *error = "libcurl: " + load_error;
    return false;
  }
  if (curl == nullptr) {
    *error = "curl_easy_init failed";
    return false;
  }
  const CurlApi& c = *api;
  // A library older than the headers (loaded at run time: ADR 0043) may not know the option;
  // then nothing is posted rather than to any protocol a URL names.
  if (const CURLcode set = c.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https"); set != CURLE_OK) {
    *error = std::string("CURLOPT_PROTOCOLS_STR: ") + c.easy_strerror(set);
    return false;
  }
  curl_slist* headers = c.slist_append(nullptr, "Content-Type: application/json");
  c.easy_setopt(curl, CURLOPT_URL, options.url.c_str());
  c.easy_setopt(curl, CURLOPT_POST, 1L);
  c.easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  c.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  c.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  c.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
  c.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.timeout.count()));
  c.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM from a worker thread
  c.easy_setopt(curl, CURLOPT_WRITEFUNCTION, DiscardBody);
  const CURLcode rc = c.easy_perform(curl);
  long status = 0;
  c.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  c.easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);  // the list is freed; the handle lives on
  c.slist_free_all(headers);
  if (rc != CURLE_OK) {
    *error = c.easy_strerror(rc);
    return false;
  }
  if (status < 200 || status > 299) {
    *error = "HTTP " + std::to_string(status);
    return false;
  }
  return true;
}

}  // namespace

WebhookSink::WebhookSink(WebhookOptions options) : options_(std::move(options)) {
  worker_ = std::thread([this] { Run(); });
}

WebhookSink::~WebhookSink() { Stop(); }

void WebhookSink::Publish(const AlertEvent&, const std::string& json) {
  MutexLock lock(mu_);
  if (stop_) {
    ++stats_.dropped;
    return;
  }
  if (queue_.size() >= options_.queue_capacity) {
    queue_.pop_front();
    ++stats_.dropped;
  }
  queue_.push_back(json);
  ++stats_.enqueued;
  cv_.NotifyAll();
}

void WebhookSink::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    cv_.NotifyAll();
  }
  if (worker_.joinable()) worker_.join();
}

WebhookStats WebhookSink::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

SinkDelivery WebhookSink::delivery() const {
  MutexLock lock(mu_);
  SinkDelivery d;
  d.sent = stats_.delivered;
  d.failed = stats_.failed;
  d.retried = stats_.retries;
  d.dropped = stats_.dropped;
  return d;
}

bool WebhookSink::WaitIdle(std::chrono::milliseconds timeout) const {
  MutexLock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!queue_.empty() || busy_) {
    if (!cv_.WaitUntil(mu_, deadline)) return queue_.empty() && !busy_;
  }
  return true;
}

void WebhookSink::Run() {
  std::string load_error;
  const CurlApi* api = alert_internal::LoadCurl(&load_error);
  CURL* curl = api != nullptr ? api->easy_init() : nullptr;
  MutexLock lock(mu_);
  for (;;) {
    while (!stop_ && queue_.empty()) cv_.Wait(mu_);
    if (stop_) break;
    std::string body = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    bool delivered = false;
    std::string error;
    auto backoff = options_.initial_backoff;
    for (int attempt = 0; attempt <= options_.retries && !stop_; ++attempt) {
      if (attempt > 0) {
        // Interruptible backoff: Stop() cuts it short.
        const auto until = std::chrono::steady_clock::now() + backoff;
        while (!stop_ && cv_.WaitUntil(mu_, until)) {
        }
        if (stop_) break;
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(5));
        ++stats_.retries;
      }
      lock.Unlock();
      delivered = PostOnce(api, load_error, curl, options_, body, &error);
      lock.Lock();
      if (delivered) break;
      ++stats_.failed_attempts;
    }
    if (delivered) {
      ++stats_.delivered;
    } else {
      ++stats_.failed;
      stats_.last_error = error;
      if (stats_.failed == 1 || stats_.failed % 100 == 0) {
        spdlog::warn("alerts: webhook {} failed ({} so far): {}", options_.url, stats_.failed, error);
      }
    }
    busy_ = false;
    cv_.NotifyAll();
  }
  stats_.dropped += queue_.size();
  queue_.clear();
  busy_ = false;
  cv_.NotifyAll();
  lock.Unlock();
  if (curl != nullptr) api->easy_cleanup(curl);
}

// ------------------------------------------------------------------ kafka

void KafkaSink::Publish(const AlertEvent& event, const std::string& json) {
  Status s = produce_(AlertKeyString(event.alert.key), json);
  if (s.ok()) {
    produced_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint64_t failed = failed_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (failed == 1 || failed % 100 == 0) {
    spdlog::warn("alerts: kafka sink: {} ({} failed)", s.message(), failed);
  }
}

SinkDelivery KafkaSink::delivery() const {
  SinkDelivery d;
  d.sent = produced_.load(std::memory_order_relaxed);
  d.failed = failed_.load(std::memory_order_relaxed);
  return d;
}

}  // namespace seismo
