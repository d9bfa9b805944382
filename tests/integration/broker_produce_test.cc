// End to end with the real binary: `seismo broker` in a child process,
// `seismo produce` loading NDJSON into it, and an in-process KafkaConsumer
// reading everything back. Every wait is bounded; children still running at
// the end of a test are killed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "seismo/ingest/kafka_consumer.h"

extern char** environ;

namespace seismo {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "seismo_bp_" + std::to_string(getpid()) + "_" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A child process running SEISMO_BINARY with `args`: stdout on a pipe we
// read, stderr to a file, stdin from a file or /dev/null.
class Child {
 public:
  static std::unique_ptr<Child> Spawn(const std::vector<std::string>& args,
                                      const std::string& stdin_path = "/dev/null") {
    auto child = std::unique_ptr<Child>(new Child());
    child->stderr_path_ = TempPath("stderr_" + std::to_string(++counter_));
    int out[2];
    if (pipe(out) != 0) return nullptr;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addclose(&actions, out[1]);
    posix_spawn_file_actions_addopen(&actions, 2, child->stderr_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv_storage = {SEISMO_BINARY};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&child->pid_, SEISMO_BINARY, &actions, nullptr, argv.data(),
                               environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    child->stdout_fd_ = out[0];
    if (rc != 0) {
      child->pid_ = -1;
      return nullptr;
    }
    return child;
  }

  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_fd_ >= 0) close(stdout_fd_);
    unlink(stderr_path_.c_str());
  }

  // The next line of stdout, or nullopt after `timeout` or at EOF.
  std::optional<std::string> ReadLine(milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd pfd{stdout_fd_, POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[4096];
      const ssize_t n = read(stdout_fd_, chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // Reads stdout to EOF (bounded by `timeout`).
  std::string ReadAllStdout(milliseconds timeout) {
    std::string all;
    while (auto line = ReadLine(timeout)) all += *line + "\n";
    return all + buffer_;
  }

  // The exit code, or nullopt if it did not exit within `timeout`
  // (-signal if it was killed by a signal).
  std::optional<int> Wait(milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return -WTERMSIG(status);
        return std::nullopt;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return std::nullopt;
  }

  void Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
  }
  std::string Stderr() const { return ReadFile(stderr_path_); }

 private:
  Child() = default;
  static inline int counter_ = 0;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string stderr_path_;
  std::string buffer_;
};

// A document as `seismo produce` sees it: its clientId becomes the key.
std::string Doc(int i) {
  return "{\"clientId\":\"c" + std::to_string(i % 7) + "\",\"payload\":{\"n\":" +
         std::to_string(i) + "}}";
}

TEST(BrokerProduceTest, BrokerPlusProducePlusConsumerEndToEnd) {
  auto broker = Child::Spawn({"broker", "--brokers", "2", "--topic", "e2e:3"});
  ASSERT_NE(broker, nullptr);
  const std::optional<std::string> bootstrap = broker->ReadLine(seconds(10));
  ASSERT_TRUE(bootstrap.has_value()) << "no bootstrap line; stderr: " << broker->Stderr();
  ASSERT_EQ(bootstrap->rfind("127.0.0.1:", 0), 0u) << *bootstrap;
  ASSERT_NE(bootstrap->find(','), std::string::npos) << "two brokers expected: " << *bootstrap;

  // 300 documents in a plain file (with blank lines that must be skipped),
  // rate-limited, keyed by clientId...
  const std::string plain = TempPath("docs.ndjson");
  {
    std::ofstream out(plain);
    for (int i = 0; i < 300; ++i) {
      out << Doc(i) << "\n";
      if (i % 50 == 0) out << "\n  \n";
    }
  }
  const auto produce_start = Clock::now();
  auto produce = Child::Spawn({"produce", "--brokers", *bootstrap, "--topic", "e2e", "--rate",
                               "1000/s", "--key-field", "clientId", plain});
  ASSERT_NE(produce, nullptr);
  ASSERT_EQ(produce->Wait(seconds(20)), 0) << produce->Stderr();
  const double produce_seconds =
      std::chrono::duration<double>(Clock::now() - produce_start).count();
  EXPECT_GE(produce_seconds, 0.25) << "300 messages at 1000/s cannot take less";
  EXPECT_NE(produce->Stderr().find("300 acknowledged, 0 failed"), std::string::npos)
      << produce->Stderr();

  // ...and 100 more, gzip-compressed, through stdin.
  const std::string gz = TempPath("more.ndjson.gz");
  {
    gzFile out = gzopen(gz.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    for (int i = 300; i < 400; ++i) {
      const std::string line = Doc(i) + "\n";
      ASSERT_EQ(gzwrite(out, line.data(), static_cast<unsigned>(line.size())),
                static_cast<int>(line.size()));
    }
    gzclose(out);
  }
  auto produce_gz = Child::Spawn(
      {"produce", "--brokers", *bootstrap, "--topic", "e2e", "--key-field", "clientId", gz});
  ASSERT_NE(produce_gz, nullptr);
  ASSERT_EQ(produce_gz->Wait(seconds(20)), 0) << produce_gz->Stderr();
  EXPECT_NE(produce_gz->Stderr().find("100 acknowledged, 0 failed"), std::string::npos)
      << produce_gz->Stderr();

  // Everything comes back once; one key always lands in one partition.
  {
    KafkaConsumerOptions options;
    options.brokers = *bootstrap;
    options.group_id = "e2e";
    options.topics = {"e2e"};
    options.properties = {{"session.timeout.ms", "6000"}};
    auto consumer = KafkaConsumer::Create(options, nullptr);
    ASSERT_TRUE(consumer.has_value()) << consumer.error().message();
    std::set<std::string> payloads;
    std::map<std::string, std::set<int32_t>> partitions_of_key;
    size_t received = 0;
    const auto deadline = Clock::now() + seconds(20);
    while (received < 400 && Clock::now() < deadline) {
      for (const KafkaMessage& m : (*consumer)->Poll(1000, milliseconds(100))) {
        ++received;
        payloads.insert(std::string(m.payload()));
        partitions_of_key[std::string(m.key())].insert(m.partition());
      }
    }
    EXPECT_EQ(received, 400u);
    std::set<std::string> expected;
    for (int i = 0; i < 400; ++i) expected.insert(Doc(i));
    EXPECT_EQ(payloads, expected);
    ASSERT_EQ(partitions_of_key.size(), 7u);  // c0..c6
    for (const auto& [key, partitions] : partitions_of_key) {
      EXPECT_EQ(partitions.size(), 1u) << "key " << key;
      EXPECT_EQ(key.rfind('c', 0), 0u);
    }
    ASSERT_TRUE((*consumer)->Close().ok());
  }

  broker->Signal(SIGTERM);
  EXPECT_EQ(broker->Wait(seconds(10)), 0) << broker->Stderr();
  unlink(plain.c_str());
  unlink(gz.c_str());
}

TEST(BrokerProduceTest, ProduceToUnreachableBrokerExitsOne) {
  const std::string file = TempPath("one.ndjson");
  {
    std::ofstream out(file);
    out << Doc(1) << "\n" << Doc(2) << "\n";
  }
  auto produce = Child::Spawn({"produce", "--brokers", "127.0.0.1:1", "--topic", "t",
                               "--property", "message.timeout.ms=500", file});
  ASSERT_NE(produce, nullptr);
  EXPECT_EQ(produce->Wait(seconds(15)), 1) << produce->Stderr();
  EXPECT_NE(produce->Stderr().find("0 acknowledged, 2 failed"), std::string::npos)
      << produce->Stderr();
  unlink(file.c_str());
}

TEST(BrokerProduceTest, ProduceOfMissingFileExitsOne) {
  auto produce = Child::Spawn({"produce", "--brokers", "127.0.0.1:1", "--topic", "t",
                               TempPath("does-not-exist.ndjson")});
  ASSERT_NE(produce, nullptr);
  EXPECT_EQ(produce->Wait(seconds(10)), 1) << produce->Stderr();
}

TEST(BrokerProduceTest, BrokerRejectsBadTopicSpecWithUsageError) {
  auto broker = Child::Spawn({"broker", "--topic", "no-partition-count"});
  ASSERT_NE(broker, nullptr);
  EXPECT_EQ(broker->Wait(seconds(10)), 2);
  EXPECT_NE(broker->Stderr().find("NAME:PARTITIONS"), std::string::npos) << broker->Stderr();
}

TEST(BrokerProduceTest, HelpDescribesBrokerAndProduce) {
  auto broker_help = Child::Spawn({"broker", "--help"});
  ASSERT_NE(broker_help, nullptr);
  const std::string broker_text = broker_help->ReadAllStdout(seconds(10));
  EXPECT_EQ(broker_help->Wait(seconds(10)), 0);
  EXPECT_NE(broker_text.find("bootstrap servers"), std::string::npos) << broker_text;
  EXPECT_NE(broker_text.find("--topic"), std::string::npos) << broker_text;

  auto produce_help = Child::Spawn({"produce", "--help"});
  ASSERT_NE(produce_help, nullptr);
  const std::string produce_text = produce_help->ReadAllStdout(seconds(10));
  EXPECT_EQ(produce_help->Wait(seconds(10)), 0);
  EXPECT_NE(produce_text.find("--rate"), std::string::npos) << produce_text;
  EXPECT_NE(produce_text.find("--key-field"), std::string::npos) << produce_text;
}

}  // namespace
}  // namespace seismo
