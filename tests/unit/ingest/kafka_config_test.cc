// Unit tests of the Kafka plumbing that needs no broker: configuration
// building, log rate limiting, argument validation of the clients.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "ingest/kafka_config.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/mock_cluster.h"

namespace seismo {
namespace {

std::string GetProperty(rd_kafka_conf_t* conf, const char* name) {
  char value[256];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(conf, name, value, &size) != RD_KAFKA_CONF_OK) return "<unset>";
  return value;
}

TEST(BuildKafkaConfTest, UserPropertiesOverrideDefaults) {
  auto conf = BuildKafkaConf({{"fetch.wait.max.ms", "100"}, {"client.id", "a"}},
                             {{"fetch.wait.max.ms", "7"}});
  ASSERT_TRUE(conf.has_value()) << conf.error().message();
  EXPECT_EQ(GetProperty(conf->get(), "fetch.wait.max.ms"), "7");
  EXPECT_EQ(GetProperty(conf->get(), "client.id"), "a");
}

TEST(BuildKafkaConfTest, UnknownPropertyIsInvalidArgumentNamingIt) {
  auto conf = BuildKafkaConf({}, {{"no.such.property", "1"}});
  ASSERT_FALSE(conf.has_value());
  EXPECT_EQ(conf.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(conf.error().message().find("no.such.property"), std::string::npos);
}

TEST(BuildKafkaConfTest, BadValueIsInvalidArgument) {
  auto conf = BuildKafkaConf({}, {{"fetch.wait.max.ms", "not-a-number"}});
  ASSERT_FALSE(conf.has_value());
  EXPECT_EQ(conf.error().code(), StatusCode::kInvalidArgument);
}

TEST(LogRateLimiterTest, AllowsBurstPerKeyThenCountsSuppressed) {
  LogRateLimiter limiter(std::chrono::milliseconds(50), 2);
  uint64_t suppressed = 0;
  EXPECT_TRUE(limiter.Allow("a", &suppressed));
  EXPECT_TRUE(limiter.Allow("a", &suppressed));
  EXPECT_FALSE(limiter.Allow("a", &suppressed));
  EXPECT_FALSE(limiter.Allow("a", &suppressed));
  EXPECT_TRUE(limiter.Allow("b", &suppressed));  // keys are independent
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_TRUE(limiter.Allow("a", &suppressed));
  EXPECT_EQ(suppressed, 2u);  // reported once, when the next window opens
  EXPECT_TRUE(limiter.Allow("a", &suppressed));
  EXPECT_EQ(suppressed, 0u);
}

TEST(KafkaConsumerCreateTest, RejectsMissingBrokersGroupOrTopics) {
  KafkaConsumerOptions options{"127.0.0.1:1", "g", {"t"}, {}};
  auto no_brokers = options;
  no_brokers.brokers.clear();
  auto no_group = options;
  no_group.group_id.clear();
  auto no_topics = options;
  no_topics.topics.clear();
  for (const auto& bad : {no_brokers, no_group, no_topics}) {
    auto consumer = KafkaConsumer::Create(bad, nullptr);
    ASSERT_FALSE(consumer.has_value());
    EXPECT_EQ(consumer.error().code(), StatusCode::kInvalidArgument);
  }
}

TEST(KafkaConsumerCreateTest, RejectsUnknownProperty) {
  KafkaConsumerOptions options{"127.0.0.1:1", "g", {"t"}, {{"bogus.key", "1"}}};
  auto consumer = KafkaConsumer::Create(options, nullptr);
  ASSERT_FALSE(consumer.has_value());
  EXPECT_NE(consumer.error().message().find("bogus.key"), std::string::npos);
}

TEST(KafkaConsumerCreateTest, CloseWithoutBrokerDoesNotHang) {
  KafkaConsumerOptions options{"127.0.0.1:1", "g", {"t"}, {}};
  auto consumer = KafkaConsumer::Create(options, nullptr);
  ASSERT_TRUE(consumer.has_value()) << consumer.error().message();
  EXPECT_TRUE((*consumer)->Poll(10, std::chrono::milliseconds(50)).empty());
  const Status close = (*consumer)->Close();  // may report, never blocks forever
  EXPECT_TRUE(close.ok() || close.code() == StatusCode::kUnavailable) << close.message();
  EXPECT_TRUE((*consumer)->Poll(10, std::chrono::milliseconds(10)).empty());
}

TEST(KafkaProducerCreateTest, RejectsNonPositiveInFlightBound) {
  KafkaProducerOptions options;
  options.brokers = "127.0.0.1:1";
  options.max_in_flight = 0;
  auto producer = KafkaProducer::Create(options);
  ASSERT_FALSE(producer.has_value());
  EXPECT_EQ(producer.error().code(), StatusCode::kInvalidArgument);
}

TEST(KafkaProducerTest, UnreachableBrokerCountsFailedDeliveries) {
  KafkaProducerOptions options;
  options.brokers = "127.0.0.1:1";
  options.properties = {{"message.timeout.ms", "300"}};
  auto producer = KafkaProducer::Create(options);
  ASSERT_TRUE(producer.has_value()) << producer.error().message();
  ASSERT_TRUE((*producer)->Produce("t", "k", "v").ok());
  ASSERT_TRUE((*producer)->Produce("t", "", "w").ok());
  EXPECT_TRUE((*producer)->Flush(std::chrono::seconds(5)).ok());
  const KafkaProducerStats stats = (*producer)->stats();
  EXPECT_EQ(stats.enqueued, 2u);
  EXPECT_EQ(stats.failed, 2u);
  EXPECT_EQ(stats.acknowledged, 0u);
  EXPECT_EQ(stats.in_flight, 0u);
  EXPECT_FALSE(stats.last_error.empty());
}

TEST(KafkaProducerTest, FullQueueTimesOutInsteadOfDropping) {
  KafkaProducerOptions options;
  options.brokers = "127.0.0.1:1";
  options.max_in_flight = 2;
  options.enqueue_timeout = std::chrono::milliseconds(100);
  options.close_timeout = std::chrono::milliseconds(0);
  options.properties = {{"message.timeout.ms", "10000"}};
  auto producer = KafkaProducer::Create(options);
  ASSERT_TRUE(producer.has_value()) << producer.error().message();
  ASSERT_TRUE((*producer)->Produce("t", "", "1").ok());
  ASSERT_TRUE((*producer)->Produce("t", "", "2").ok());
  const Status third = (*producer)->Produce("t", "", "3");
  EXPECT_EQ(third.code(), StatusCode::kUnavailable);
  EXPECT_EQ((*producer)->stats().enqueued, 2u);
  EXPECT_EQ((*producer)->stats().in_flight, 2u);
}

TEST(MockClusterTest, StartsBrokersOnLoopbackAndCreatesTopics) {
  auto cluster = MockCluster::Create(2);
  ASSERT_TRUE(cluster.has_value()) << cluster.error().message();
  const std::string& servers = (*cluster)->bootstrap_servers();
  EXPECT_NE(servers.find("127.0.0.1:"), std::string::npos);
  EXPECT_NE(servers.find(','), std::string::npos);  // two brokers
  EXPECT_TRUE((*cluster)->CreateTopic("t", 3).ok());
  EXPECT_FALSE((*cluster)->CreateTopic("t", 3).ok());  // already exists
  EXPECT_FALSE((*cluster)->CreateTopic("", 3).ok());
  EXPECT_FALSE((*cluster)->CreateTopic("u", 0).ok());
  EXPECT_TRUE((*cluster)->SetBrokerDown(1).ok());
  EXPECT_TRUE((*cluster)->SetBrokerUp(1).ok());
  EXPECT_TRUE((*cluster)->SetGroupCoordinator("g", 2).ok());
  EXPECT_FALSE(MockCluster::Create(0).has_value());
}

}  // namespace
}  // namespace seismo
