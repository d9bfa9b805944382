#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "seismo/app/command.h"

namespace seismo {

int RunCli(int argc, char** argv) {
  // Logs go to stderr so that commands writing data to stdout stay clean.
  spdlog::set_default_logger(spdlog::stderr_color_mt("stderr"));
  CLI::App app{
      "seismo: release health from live telemetry — hang rates, Socorro-compatible crash\n"
      "signatures, rolling windows, a live dashboard and alerts when a new build gets worse.",
      "seismo"};
  app.set_version_flag("--version", std::string("seismo ") + SEISMO_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  CommandRunner runner;
  RegisterRunCommand(app, &runner);
  RegisterReplayCommand(app, &runner);
  RegisterGenerateCommand(app, &runner);
  RegisterSignatureCommand(app, &runner);
  RegisterBrokerCommand(app, &runner);
  RegisterProduceCommand(app, &runner);
  RegisterDemoCommand(app, &runner);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (!runner) return 2;
  return runner();
}

}  // namespace seismo
