// `seismo demo [--port P] [--speed X] [--seed S] [--config FILE]`: the whole system on
// one machine (SPEC §6.1, docs/adr/0007-demo.md).
//
//   MockCluster (in-process Kafka) <── KafkaProducer <── DemoSimulator (one thread per channel)
//        │
//        └──> Daemon (Kafka consumer, pipeline, publisher, alerts) ──> HttpServer (dashboard)
//
// Start order: cluster and topics, daemon, HTTP (the URL is then printed as the first line
// of stdout), and once the daemon's consumer has its partitions, the simulator. SIGINT or
// SIGTERM stops them in reverse order; exit 0.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include "http_options.h"
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "seismo/app/command.h"
#include "seismo/app/daemon.h"
#include "seismo/sim/demo.h"
#include "seismo/app/logging.h"
#include "seismo/app/replay.h"
#include "seismo/http/access.h"
#include "seismo/http/server.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/mock_cluster.h"
#include "seismo/signature/generator.h"
#include "stop_signals.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;

struct DemoArgs {
  std::string config;
  int port = -1;  // -1 = [http] listen of the config
  double speed = 3600;
  uint64_t seed = 1;
};

constexpr int kPartitions = 4;
constexpr auto kConsumerJoinTimeout = std::chrono::seconds(30);

// config/demo.toml of the tree this binary was built in: next to the build directory
// (build/seismo -> config/demo.toml), else the source tree named by this file's path.
std::string FindDemoConfig() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path candidate = exe.parent_path().parent_path() / "config" / "demo.toml";
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  const fs::path source = fs::path(__FILE__).parent_path().parent_path().parent_path();
  const fs::path candidate = source / "config" / "demo.toml";
  if (fs::is_regular_file(candidate, ec)) return candidate.string();
  return "";
}

int RunDemo(const DemoArgs& args) {
  // Before any thread starts (threads inherit the mask).
  const sigset_t stop_signals = BlockStopSignals();

  if (!(args.speed > 0) || args.speed > 1e6) {
    fmt::print(stderr, "seismo demo: --speed must be > 0 and <= 1000000\n");
    return 2;
  }
  const std::string config_path = args.config.empty() ? FindDemoConfig() : args.config;
  if (config_path.empty()) {
    fmt::print(stderr,
               "seismo demo: config/demo.toml not found next to the build directory; pass --config\n");
    return 2;
  }
  auto config = LoadConfig(config_path);
  if (!config) {
    fmt::print(stderr, "seismo demo: {}\n", config.error().message());
    return 2;
  }
  if (Status s = DemoSupports(*config); !s.ok()) {
    fmt::print(stderr, "seismo demo: {}\n", s.message());
    return 2;
  }
  SetUpLogging(config->log);
  auto signatures = LoadSignatures(*config);
  if (!signatures) {
    fmt::print(stderr, "seismo demo: {}\n", signatures.error().message());
    return 2;
  }

  // 1. The in-process Kafka cluster and the topics the simulator writes.
  auto cluster = MockCluster::Create(1);
  if (!cluster) {
    spdlog::error("start: {}", cluster.error().message());
    return 1;
  }
  const DemoTopics topics;
  for (const std::string& t : {topics.main, topics.bhr, topics.crash}) {
    if (Status s = (*cluster)->CreateTopic(t, kPartitions); !s.ok()) {
      spdlog::error("start: {}", s.message());
      return 1;
    }
  }
  // The demo owns [kafka] brokers and topics; the rest of [kafka] comes from the config.
  config->kafka.brokers = (*cluster)->bootstrap_servers();
  config->kafka.topics = {topics.main, topics.bhr, topics.crash};
  config->kafka.topic_kinds = {{topics.main, "main"}, {topics.bhr, "bhr"}, {topics.crash, "crash"}};
  if (args.port >= 0) config->http.listen = fmt::format("127.0.0.1:{}", args.port);

  // 2. The daemon, consuming through the real Kafka path.
  SystemClock clock;
  Daemon daemon(*config, signatures->get(), &clock);
  if (Status s = daemon.Start(); !s.ok()) {
    spdlog::error("start: {}", s.message());
    return 1;
  }

  // 3. HTTP (after the daemon, stopped before it).
  auto http = HttpOptionsFromConfig(*config);
  if (!http) {
    spdlog::error("start: {}", http.error().message());
    daemon.Stop();
    return 2;
  }
  HttpServer server;
  if (Status s = server.Start(*http, daemon); !s.ok()) {
    spdlog::error("start: {}", s.message());
    daemon.Stop();
    return 1;
  }
  // Each published snapshot goes to the server, which builds its default answers (ADR 0025).
  daemon.SetPublishHook([&server](const std::shared_ptr<const Snapshot>& snap) { server.Published(snap); });
  // The contract: the dashboard URL is the first line of stdout.
  std::fprintf(stdout, "%s/\n", server.url().c_str());
  std::fflush(stdout);

  // 4. The simulator, once the consumer has joined its group (the mock cluster's first
  //    join takes about 3 s), so the dashboard sees the population from its first hour.
  const auto join_deadline = std::chrono::steady_clock::now() + kConsumerJoinTimeout;
  while (!daemon.status().consuming) {
    if (std::chrono::steady_clock::now() > join_deadline) {
      spdlog::error("start: the consumer got no partitions within {} s", kConsumerJoinTimeout.count());
      daemon.SetPublishHook(nullptr);
      server.Stop();
      daemon.Stop();
      return 1;
    }
    if (int sig = WaitForStopSignal(stop_signals, std::chrono::milliseconds(100)); sig != 0) {
      daemon.SetPublishHook(nullptr);
      server.Stop();
      daemon.Stop();
      return 0;
    }
  }
  DemoOptions demo;
  demo.seed = args.seed;
  demo.now_ms = clock.Now().ms;
  const DemoPopulation population(demo);
  const SimClock sim(population.start_ms(), args.speed, &clock);
  KafkaProducerOptions po;
  po.brokers = config->kafka.brokers;
  po.properties = {{"linger.ms", "20"}};
  po.enqueue_timeout = std::chrono::milliseconds(200);  // lets Stop() interrupt a full queue
  po.close_timeout = std::chrono::seconds(2);
  auto producer = KafkaProducer::Create(po);
  if (!producer) {
    spdlog::error("start: {}", producer.error().message());
    daemon.SetPublishHook(nullptr);
    server.Stop();
    daemon.Stop();
    return 1;
  }
  DemoSimulator simulator(population, sim, **producer, topics);
  simulator.Start();
  const DemoTruth& truth = population.truth();
  const auto wall_s = [&](int64_t sim_ms) { return static_cast<double>(sim.WallMsUntil(sim_ms)) / 1000.0; };
  spdlog::info("seismo demo {} serving {}", SEISMO_VERSION, server.url());
  spdlog::info("simulating beta, nightly and release from {} at {}x speed (seed {})",
               FormatTimestamp(EventTime{population.start_ms()}), args.speed, args.seed);
  spdlog::info(
      "bad release: {} build {} ({}) in about {:.0f} s, with a crash spike of {} and a hang "
      "regression of {}; the simulation reaches the wall clock in about {:.0f} s",
      truth.channel, truth.bad_build_id, truth.bad_version, wall_s(population.bad_release_ms()),
      truth.spike_signature, truth.hang_signature, wall_s(demo.now_ms));

  bool release_logged = false, caught_up_logged = false;
  int sig = 0;
  while ((sig = WaitForStopSignal(stop_signals, std::chrono::seconds(1))) == 0) {
    const int64_t now = sim.Now();
    if (!release_logged && now >= population.bad_release_ms()) {
      release_logged = true;
      spdlog::info("bad release {} is out ({} documents produced so far)", truth.bad_build_id,
                   simulator.produced());
    }
    if (!caught_up_logged && now >= demo.now_ms) {
      caught_up_logged = true;
      spdlog::info("simulated time caught up with the wall clock; continuing in real time ({} documents)",
                   simulator.produced());
    }
  }
  spdlog::info("received {}, stopping", StopSignalName(sig));

  // Watchdog: a stuck drain must not keep the process alive past shutdown_timeout.
  const auto timeout = config->shutdown_timeout;
  const auto stop_started = std::chrono::steady_clock::now();
  StartShutdownWatchdog(timeout);

  simulator.Stop();
  // Let the daemon take in what was already produced (bounded), so the final counts
  // account for every simulated document.
  if (Status s = (*producer)->Flush(std::chrono::seconds(2)); !s.ok()) spdlog::warn("demo: {}", s.message());
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (daemon.counts().documents < simulator.produced() &&
         std::chrono::steady_clock::now() < drain_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  daemon.SetPublishHook(nullptr);
  server.Stop();
  if (Status s = daemon.Shutdown(stop_started + timeout * 4 / 5); !s.ok())
    spdlog::error("shutdown: {}", s.message());
  producer->reset();
  const RecordCounts c = daemon.counts();
  spdlog::info("stopped: {} documents produced, {} consumed ({} main, {} bhr, {} crash)",
               simulator.produced(), c.documents, c.by_kind[0], c.by_kind[1], c.by_kind[2]);
  return 0;
}

}  // namespace

void RegisterDemoCommand(CLI::App& root, CommandRunner* runner) {
  auto args = std::make_shared<DemoArgs>();
  CLI::App* cmd = root.add_subcommand(
      "demo",
      "The whole system on one machine: in-process Kafka, a simulated population with a bad release, "
      "the daemon, alerts and the dashboard; prints the URL; SIGTERM/SIGINT to stop");
  cmd->add_option("--port,-p", args->port, "HTTP port on 127.0.0.1 (0 = a free one; default: [http] listen)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--speed", args->speed,
                  "Simulated seconds per wall second until the simulation reaches now (default 3600: the bad "
                  "release arrives after about 105 s)");
  cmd->add_option("--seed", args->seed, "Seed of the simulated population");
  cmd->add_option("--config,-c", args->config, "Configuration (default: config/demo.toml of this tree)");
  cmd->callback([args, runner] { *runner = [args] { return RunDemo(*args); }; });
}

}  // namespace seismo
