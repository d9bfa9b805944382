// `seismo run [--config FILE] [--output FILE]`: the daemon.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include "http_options.h"
#include "seismo/app/command.h"
#include "seismo/app/daemon.h"
#include "seismo/app/logging.h"
#include "seismo/app/output_file.h"
#include "seismo/app/replay.h"
#include "seismo/http/access.h"
#include "seismo/http/health_listener.h"
#include "seismo/http/server.h"
#include "seismo/signature/generator.h"
#include "stop_signals.h"

namespace seismo {
namespace {

struct RunArgs {
  std::string config;
  std::string output;
  std::string on_corrupt_checkpoint;  // "" = [checkpoint] on_corrupt; else "reread" | "wait" for this start
  // Test seams (hidden from --help): see Daemon::Set*ForTesting.
  int64_t parse_delay_ms = 0;
  int64_t checkpoint_pause_ms = 0;
};

int RunDaemon(const RunArgs& args) {
  sigset_t stop_signals = BlockStopSignals();
  auto config = LoadConfig(args.config);
  if (!config) {
    fmt::print(stderr, "seismo run: {}\n", config.error().message());
    return 2;
  }
  // The operator's decision about an unusable checkpoint, for this start only (ADR 0018).
  if (args.on_corrupt_checkpoint == "reread") config->checkpoint.on_corrupt = OnCorruptCheckpoint::kReread;
  if (args.on_corrupt_checkpoint == "wait") config->checkpoint.on_corrupt = OnCorruptCheckpoint::kWait;
  SetUpLogging(config->log);
  auto signatures = LoadSignatures(*config);
  if (!signatures) {
    fmt::print(stderr, "seismo run: {}\n", signatures.error().message());
    return 2;
  }
  SystemClock clock;
  Daemon daemon(*config, signatures->get(), &clock);
  daemon.SetParseDelayForTesting(std::chrono::milliseconds(args.parse_delay_ms));
  daemon.SetCheckpointPauseForTesting(std::chrono::milliseconds(args.checkpoint_pause_ms));
  // HTTP starts first, so /healthz answers and /readyz says 503 while a large checkpoint
  // is restored; it stops before the daemon (reverse start order).
  auto http = HttpOptionsFromConfig(*config);
  if (!http) {
    spdlog::error("start: {}", http.error().message());
    return 2;
  }
  HttpServer server;
  if (Status s = server.Start(*http, daemon); !s.ok()) {
    spdlog::error("start: {}", s.message());
    return 1;
  }
  // Each published snapshot goes to the server, which builds its default answers (ADR 0025).
  daemon.SetPublishHook([&server](const std::shared_ptr<const Snapshot>& snap) { server.Published(snap); });
  // Health probes on a listener slow clients cannot starve (ADR 0018).
  HealthListener health;
  if (const std::string at = HealthListenAddress(*config); !at.empty()) {
    if (Status s = health.Start({at, http->auth_token}, daemon); !s.ok()) {
      spdlog::error("start: {}", s.message());
      daemon.SetPublishHook(nullptr);
      server.Stop();
      return 1;
    }
  }
  if (Status s = daemon.Start(); !s.ok()) {
    spdlog::error("start: {}", s.message());
    health.Stop();
    daemon.SetPublishHook(nullptr);
    server.Stop();
    daemon.Stop();
    return 1;
  }
  spdlog::info("seismo {} running (config: {}), serving {}{}", SEISMO_VERSION,
               args.config.empty() ? "defaults" : args.config, server.url(),
               health.port() > 0 ? ", health probes on " + health.url() + "/healthz" : "");

  const int sig = WaitForStopSignal(stop_signals);
  spdlog::info("received {}, stopping", StopSignalName(sig));

  // Everything below ends within shutdown_timeout (SPEC §7). The daemon's waits end by
  // four fifths of it, the rest is for the output file; the watchdog is the backstop for
  // what has no deadline of its own (a librdkafka call that hangs).
  const auto timeout = config->shutdown_timeout;
  const auto stop_started = std::chrono::steady_clock::now();
  StartShutdownWatchdog(timeout);

  health.Stop();
  daemon.SetPublishHook(nullptr);
  server.Stop();
  if (Status s = daemon.Shutdown(stop_started + timeout * 4 / 5); !s.ok()) {
    spdlog::error("shutdown: {}; the last checkpoint stays, a restart continues from it{}", s.message(),
                  args.output.empty() ? "" : "; no output written");
    return 1;
  }
  if (!args.output.empty()) {
    const std::string alerts = daemon.alerts_json();
    Status s = WriteOutputFile(args.output, [&](OutputSink& sink) {
      WriteReplayOutput(*daemon.snapshot(), daemon.counts(), alerts, 0, sink);
    });
    if (!s.ok()) {
      spdlog::error("output: {}", s.message());
      return 1;
    }
  }
  RecordCounts c = daemon.counts();
  spdlog::info("stopped: {} documents, {} main, {} bhr, {} crash", c.documents, c.by_kind[0], c.by_kind[1],
               c.by_kind[2]);
  return 0;
}

}  // namespace

void RegisterRunCommand(CLI::App& root, CommandRunner* runner) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = root.add_subcommand("run", "The daemon: consume, aggregate, serve; SIGTERM/SIGINT to stop");
  cmd->add_option("--config,-c", args->config, "TOML configuration file (every key has a default)");
  cmd->add_option("--output,-o", args->output,
                  "At shutdown, write the final state as JSON (like replay --output)");
  cmd->add_option("--on-corrupt-checkpoint", args->on_corrupt_checkpoint,
                  "When the checkpoint cannot be used: 'reread' every partition from its earliest retained "
                  "offset, or 'wait' for an operator (overrides [checkpoint] on_corrupt for this start)")
      ->check(CLI::IsMember({"reread", "wait"}));
  cmd->add_option("--parse-delay-for-testing", args->parse_delay_ms)->group("");
  cmd->add_option("--checkpoint-pause-for-testing", args->checkpoint_pause_ms)->group("");
  cmd->callback([args, runner] { *runner = [args] { return RunDaemon(*args); }; });
}

}  // namespace seismo
