#include "integration/real_kafka.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace seismo::testing {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr int kAdminTimeoutMs = 30'000;

std::string ReadFirstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

// One admin request's result event (null on time-out), the queue freed.
struct AdminCall {
  explicit AdminCall(rd_kafka_t* rk) : queue(rd_kafka_queue_new(rk)) {}
  ~AdminCall() {
    if (event != nullptr) rd_kafka_event_destroy(event);
    rd_kafka_queue_destroy(queue);
  }
  AdminCall(const AdminCall&) = delete;
  AdminCall& operator=(const AdminCall&) = delete;

  Status Wait(std::string_view what) {
    event = rd_kafka_queue_poll(queue, kAdminTimeoutMs);
    if (event == nullptr) return Status::Unavailable(std::string(what) + ": no answer");
    if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable(std::string(what) + ": " + rd_kafka_event_error_string(event));
    }
    return Status::Ok();
  }

  rd_kafka_queue_t* queue;
  rd_kafka_event_t* event = nullptr;
};

std::map<int, std::unique_ptr<RealKafka>>& Clusters() {
  static auto* clusters = new std::map<int, std::unique_ptr<RealKafka>>();
  return *clusters;
}

// At exit: closes the admin handles and stops the clusters this process started (a normal
// exit; a killed test process leaves its cluster to `scripts/kafka stop`).
void CloseClusters() { Clusters().clear(); }

}  // namespace

int RunKafkaScript(const std::string& args, const fs::path& log) {
  const std::string command =
      "'" SEISMO_SOURCE_DIR "/scripts/kafka' " + args + " >> '" + log.string() + "' 2>&1 < /dev/null";
  const int rc = std::system(command.c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

std::string RealKafka::UniqueName(std::string_view base) {
  std::string name(base);
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    name += std::string(".") + info->test_suite_name() + "." + info->name();
  }
  name += "." + std::to_string(getpid());
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  }
  return name;
}

RealKafka* RealKafka::Get(int brokers) {
  auto& clusters = Clusters();
  if (auto it = clusters.find(brokers); it != clusters.end()) return it->second.get();

  fs::path dir;
  bool owned = false;
  if (const char* env = std::getenv("SEISMO_KAFKA_DIR"); env != nullptr && *env != '\0') {
    dir = env;
    const std::string n = ReadFirstLine(dir / "brokers");
    if (n != std::to_string(brokers)) {
      ADD_FAILURE() << "SEISMO_KAFKA_DIR=" << dir << " holds no running cluster of " << brokers
                    << " node(s) (brokers file: \"" << n
                    << "\"): did its CTest fixture (kafka_*_start) fail? See its output, or run "
                       "scripts/kafka start DIR --brokers "
                    << brokers;
      return nullptr;
    }
  } else {
    dir = fs::temp_directory_path() /
          ("seismo-kafka-" + std::to_string(getpid()) + "-" + std::to_string(brokers));
    fs::create_directories(dir);
    const fs::path log = dir.string() + ".log";
    const int rc = RunKafkaScript("start '" + dir.string() + "' --brokers " + std::to_string(brokers), log);
    if (rc != 0) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      ADD_FAILURE() << "this test needs a real Kafka broker and scripts/kafka start failed (exit " << rc
                    << "); Java and Maven come with scripts/setup --with-kafka. Its output:\n"
                    << text.str();
      (void)RunKafkaScript("stop '" + dir.string() + "'", log);
      return nullptr;
    }
    owned = true;
  }
  static const bool registered = [] { return std::atexit(CloseClusters) == 0; }();
  (void)registered;
  const std::string bootstrap = ReadFirstLine(dir / "bootstrap");
  if (bootstrap.empty()) {
    ADD_FAILURE() << "no bootstrap servers in " << (dir / "bootstrap") << ": no cluster there";
    return nullptr;
  }
  std::unique_ptr<RealKafka> cluster(new RealKafka(dir, bootstrap, brokers, owned));
  if (Status s = cluster->Connect(); !s.ok()) {
    ADD_FAILURE() << "the Kafka cluster in " << dir << " (" << bootstrap
                  << ") does not answer: " << s.message();
    return nullptr;
  }
  return (clusters[brokers] = std::move(cluster)).get();
}

RealKafka::RealKafka(fs::path dir, std::string bootstrap, int brokers, bool owned)
    : dir_(std::move(dir)), bootstrap_(std::move(bootstrap)), brokers_(brokers), owned_(owned) {}

RealKafka::~RealKafka() {
  if (admin_ != nullptr) rd_kafka_destroy(admin_);
  if (owned_) {
    (void)RunKafkaScript("stop '" + dir_.string() + "'", dir_.string() + ".log");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

Status RealKafka::Connect() {
  std::array<char, 512> err{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap_.c_str(), err.data(), err.size()) !=
          RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "log_level", "3", err.data(), err.size()) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(err.data());
  }
  admin_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err.data(), err.size());
  if (admin_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Internal(err.data());
  }
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  std::string last = "no metadata";
  while (std::chrono::steady_clock::now() < deadline) {
    const struct rd_kafka_metadata* md = nullptr;
    const rd_kafka_resp_err_t e = rd_kafka_metadata(admin_, 0, nullptr, &md, 5000);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const int seen = md->broker_cnt;
      rd_kafka_metadata_destroy(md);
      if (seen == brokers_) return Status::Ok();
      last = "the metadata shows " + std::to_string(seen) + " of " + std::to_string(brokers_) + " brokers";
    } else {
      last = rd_kafka_err2str(e);
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
  return Status::Unavailable(last);
}

Status RealKafka::CreateTopic(const std::string& name, int partitions, int replication,
                              const std::map<std::string, std::string>& configs) {
  std::array<char, 512> err{};
  rd_kafka_NewTopic_t* topic =
      rd_kafka_NewTopic_new(name.c_str(), partitions, replication, err.data(), err.size());
  if (topic == nullptr) return Status::InvalidArgument(err.data());
  for (const auto& [k, v] : configs) {
    if (rd_kafka_NewTopic_set_config(topic, k.c_str(), v.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_NewTopic_destroy(topic);
      return Status::InvalidArgument("topic config " + k);
    }
  }
  AdminCall call(admin_);
  rd_kafka_CreateTopics(admin_, &topic, 1, nullptr, call.queue);
  rd_kafka_NewTopic_destroy(topic);
  if (Status s = call.Wait("create topic " + name); !s.ok()) return s;
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(call.event), &n);
  if (n != 1) return Status::Internal("create topic " + name + ": no result");
  if (rd_kafka_topic_result_error(results[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("create topic " + name + ": " +
                               rd_kafka_topic_result_error_string(results[0]));
  }
  // Created means the controller knows it; wait until every partition has a leader.
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    bool ready = true;
    for (int p = 0; p < partitions && ready; ++p) {
      auto leader = Leader(name, p);
      ready = leader && *leader >= 0;
    }
    if (ready) return Status::Ok();
    std::this_thread::sleep_for(milliseconds(100));
  }
  return Status::Unavailable("topic " + name + " has partitions without a leader");
}

Status RealKafka::SetTopicConfig(const std::string& name, const std::map<std::string, std::string>& configs) {
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, name.c_str());
  for (const auto& [k, v] : configs) (void)rd_kafka_ConfigResource_set_config(resource, k.c_str(), v.c_str());
  AdminCall call(admin_);
  rd_kafka_AlterConfigs(admin_, &resource, 1, nullptr, call.queue);
  rd_kafka_ConfigResource_destroy(resource);
  if (Status s = call.Wait("alter configs of " + name); !s.ok()) return s;
  size_t n = 0;
  const rd_kafka_ConfigResource_t** results =
      rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(call.event), &n);
  if (n != 1 || rd_kafka_ConfigResource_error(results[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("alter configs of " + name + ": " +
                               (n == 1 ? rd_kafka_ConfigResource_error_string(results[0]) : "no result"));
  }
  return Status::Ok();
}

Result<std::pair<int64_t, int64_t>> RealKafka::Watermarks(const std::string& topic, int32_t partition) {
  // query_watermark_offsets needs a consumer handle; a plain one joins no group.
  std::array<char, 512> err{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  (void)rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap_.c_str(), err.data(), err.size());
  (void)rd_kafka_conf_set(conf, "log_level", "3", err.data(), err.size());
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err.data(), err.size());
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Internal(err.data());
  }
  int64_t low = -1, high = -1;
  const rd_kafka_resp_err_t e =
      rd_kafka_query_watermark_offsets(rk, topic.c_str(), partition, &low, &high, kAdminTimeoutMs);
  rd_kafka_destroy(rk);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Unavailable(rd_kafka_err2str(e));
  return std::make_pair(low, high);
}

Result<int32_t> RealKafka::Leader(const std::string& topic, int32_t partition) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(admin_, topic.c_str(), nullptr);
  const struct rd_kafka_metadata* md = nullptr;
  const rd_kafka_resp_err_t e = rd_kafka_metadata(admin_, 0, t, &md, 10'000);
  rd_kafka_topic_destroy(t);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Unavailable(rd_kafka_err2str(e));
  int32_t leader = -1;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic& mt = md->topics[i];
    if (topic != mt.topic || mt.err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    for (int p = 0; p < mt.partition_cnt; ++p) {
      if (mt.partitions[p].id == partition && mt.partitions[p].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        leader = mt.partitions[p].leader;
      }
    }
  }
  rd_kafka_metadata_destroy(md);
  return leader;
}

Status RealKafka::KillNode(int node) {
  if (RunKafkaScript("kill '" + dir_.string() + "' " + std::to_string(node), dir_ / "test-actions.log") !=
      0) {
    return Status::Internal("scripts/kafka kill failed (see " + (dir_ / "test-actions.log").string() + ")");
  }
  return Status::Ok();
}

Status RealKafka::RestartNode(int node) {
  if (RunKafkaScript("restart '" + dir_.string() + "' " + std::to_string(node), dir_ / "test-actions.log") !=
      0) {
    return Status::Internal("scripts/kafka restart failed (see " + (dir_ / "test-actions.log").string() +
                            ")");
  }
  return Status::Ok();
}

bool RealKafka::NodeRunning(int node) const {
  const std::string pid = ReadFirstLine(dir_ / ("node" + std::to_string(node)) / "pid");
  return !pid.empty() && ::kill(-std::stoi(pid), 0) == 0;
}

Status RealKafka::EnsureAllNodesRunning() {
  for (int node = 1; node <= brokers_; ++node) {
    if (NodeRunning(node)) continue;
    if (Status s = RestartNode(node); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace seismo::testing
