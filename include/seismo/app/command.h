// Subcommand registration. Each subcommand lives in src/app/cmd_<name>.cc and
// exposes one Register function; main.cc (src/app/main_cli.cc) calls them all.
// A Register function adds a CLI11 subcommand to `root` and, through
// `runner`, the function that runs it once the command line is parsed. The
// runner returns the process exit code: 0 success, 1 runtime failure, 2 bad
// usage or bad config (SPEC §6.1).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace seismo {

using CommandRunner = std::function<int()>;

void RegisterReplayCommand(CLI::App& root, CommandRunner* runner);
void RegisterGenerateCommand(CLI::App& root, CommandRunner* runner);
void RegisterSignatureCommand(CLI::App& root, CommandRunner* runner);
void RegisterRunCommand(CLI::App& root, CommandRunner* runner);
void RegisterBrokerCommand(CLI::App& root, CommandRunner* runner);
void RegisterProduceCommand(CLI::App& root, CommandRunner* runner);
void RegisterDemoCommand(CLI::App& root, CommandRunner* runner);

// Entry point used by src/main.cc.
int RunCli(int argc, char** argv);

}  // namespace seismo
