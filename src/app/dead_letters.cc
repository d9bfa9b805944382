#include "seismo/app/dead_letters.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <vector>

#include "seismo/ingest/kafka_producer.h"

namespace seismo {
namespace {

class KafkaDeadLetters final : public DeadLetterSink {
 public:
  KafkaDeadLetters(std::unique_ptr<KafkaProducer> producer, std::string topic)
      : producer_(std::move(producer)), topic_(std::move(topic)) {}
  ~KafkaDeadLetters() override { (void)producer_->Flush(std::chrono::seconds(10)); }

  void Write(const DeadLetter& letter) override {
    Status s = producer_->Produce(topic_, RejectReasonName(letter.reason), FormatDeadLetter(letter));
    if (!s.ok() && failed_.fetch_add(1, std::memory_order_relaxed) % 1000 == 0) {
      spdlog::error("dead letters: cannot produce to {}: {}", topic_, s.message());
    }
  }
  // Not enqueued (queue full for a second) plus enqueued and then not delivered.
  uint64_t failures() const override {
    producer_->Poll(std::chrono::milliseconds(0));  // delivery reports due since the last letter
    return failed_.load(std::memory_order_relaxed) + producer_->stats().failed;
  }

 private:
  std::unique_ptr<KafkaProducer> producer_;
  std::string topic_;
  std::atomic<uint64_t> failed_{0};
};

class Tee final : public DeadLetterSink {
 public:
  explicit Tee(std::vector<std::unique_ptr<DeadLetterSink>> sinks) : sinks_(std::move(sinks)) {}
  void Write(const DeadLetter& letter) override {
    for (auto& sink : sinks_) sink->Write(letter);
  }
  uint64_t failures() const override {
    uint64_t n = 0;
    for (const auto& sink : sinks_) n += sink->failures();
    return n;
  }

 private:
  std::vector<std::unique_ptr<DeadLetterSink>> sinks_;
};

}  // namespace

Result<std::unique_ptr<DeadLetterSink>> OpenDeadLetters(const Config& config) {
  std::vector<std::unique_ptr<DeadLetterSink>> sinks;
  if (!config.ingest.dead_letter_file.empty()) {
    auto file = OpenDeadLetterFile(config.ingest.dead_letter_file);
    if (!file) return file.error();
    sinks.push_back(std::move(*file));
  }
  if (!config.ingest.dead_letter_topic.empty()) {
    KafkaProducerOptions o;
    o.brokers = config.kafka.brokers;
    o.properties = config.kafka.properties;
    o.enqueue_timeout = std::chrono::seconds(1);
    auto producer = KafkaProducer::Create(o);
    if (!producer) return producer.error();
    sinks.push_back(std::make_unique<KafkaDeadLetters>(std::move(*producer), config.ingest.dead_letter_topic));
  }
  if (sinks.empty()) return std::unique_ptr<DeadLetterSink>();
  if (sinks.size() == 1) return std::move(sinks.front());
  return std::unique_ptr<DeadLetterSink>(std::make_unique<Tee>(std::move(sinks)));
}

}  // namespace seismo
