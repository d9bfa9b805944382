// `seismo broker`: a local Kafka-protocol cluster for development and tests
// (librdkafka's mock cluster, see ingest/mock_cluster.h). Prints the bootstrap
// servers as the first line of stdout, then serves until SIGTERM or SIGINT.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seismo/app/command.h"
#include "seismo/ingest/mock_cluster.h"
#include "stop_signals.h"

namespace seismo {

namespace {

struct BrokerArgs {
  int brokers = 3;
  std::vector<std::string> topics;  // NAME:PARTITIONS
};

// "name:12" → {"name", 12}; nullopt-like failure as a Status.
Result<std::pair<std::string, int>> ParseTopicSpec(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
    return Status::InvalidArgument("--topic '" + spec + "': expected NAME:PARTITIONS");
  }
  const std::string count = spec.substr(colon + 1);
  int partitions = 0;
  for (char c : count) {
    if (c < '0' || c > '9' || partitions > 100000) {
      return Status::InvalidArgument("--topic '" + spec + "': PARTITIONS must be a number");
    }
    partitions = partitions * 10 + (c - '0');
  }
  if (partitions < 1 || partitions > 10000) {
    return Status::InvalidArgument("--topic '" + spec + "': PARTITIONS must be 1..10000");
  }
  return std::make_pair(spec.substr(0, colon), partitions);
}

int RunBroker(const BrokerArgs& args) {
  std::vector<std::pair<std::string, int>> topics;
  for (const std::string& spec : args.topics) {
    auto parsed = ParseTopicSpec(spec);
    if (!parsed) {
      std::fprintf(stderr, "seismo broker: %s\n", parsed.error().message().c_str());
      return 2;
    }
    topics.push_back(*parsed);
  }

  // Before librdkafka starts its threads (they inherit the mask).
  const sigset_t stop_signals = BlockStopSignals();

  auto cluster = MockCluster::Create(args.brokers);
  if (!cluster) {
    std::fprintf(stderr, "seismo broker: %s\n", cluster.error().message().c_str());
    return 1;
  }
  for (const auto& [name, partitions] : topics) {
    const Status s = (*cluster)->CreateTopic(name, partitions);
    if (!s.ok()) {
      std::fprintf(stderr, "seismo broker: %s\n", s.message().c_str());
      return 1;
    }
  }

  // The contract (SPEC §6.1): the bootstrap servers are the first line of
  // stdout. Nothing is logged before it, in case logging goes to stdout.
  std::fprintf(stdout, "%s\n", (*cluster)->bootstrap_servers().c_str());
  std::fflush(stdout);
  for (const auto& [name, partitions] : topics) {
    spdlog::info("broker: topic {} with {} partitions", name, partitions);
  }
  spdlog::info("broker: {} brokers at {}; other topics are created on first use with 4 "
               "partitions; stop with SIGTERM or Ctrl-C",
               args.brokers, (*cluster)->bootstrap_servers());

  const int signal_number = WaitForStopSignal(stop_signals);
  if (signal_number == 0) {
    std::fprintf(stderr, "seismo broker: sigwait failed\n");
    return 1;
  }
  spdlog::info("broker: signal {}, stopping", signal_number);
  cluster->reset();
  return 0;
}

}  // namespace

void RegisterBrokerCommand(CLI::App& root, CommandRunner* runner) {
  CLI::App* cmd = root.add_subcommand(
      "broker",
      "Run a local Kafka-protocol cluster for development (librdkafka's in-process mock "
      "cluster on 127.0.0.1: no persistence, no TLS/SASL, at most 5 MiB or 100 000 batches "
      "kept per partition). Prints the bootstrap servers as the first line of stdout and "
      "serves until SIGTERM/SIGINT. Topics not created with --topic are auto-created with "
      "4 partitions.");
  auto args = std::make_shared<BrokerArgs>();
  cmd->add_option("--brokers", args->brokers, "Number of brokers")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--topic", args->topics,
                  "Create a topic, as NAME:PARTITIONS (repeatable)")
      ->type_name("NAME:PARTITIONS");
  cmd->callback([runner, args] { *runner = [args] { return RunBroker(*args); }; });
}

}  // namespace seismo
