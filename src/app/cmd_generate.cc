// `seismo generate --kind main|bhr|crash|crash-ping --count N --seed S`
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "seismo/app/command.h"
#include "seismo/app/synth.h"

namespace seismo {
namespace {

struct GenerateArgs {
  std::string kind = "main";
  uint64_t count = 1000;
  uint64_t seed = 1;
  size_t pad_kb = 0;
  std::string output = "-";
};

int RunGenerate(const GenerateArgs& a) {
  FILE* out = stdout;
  if (a.output != "-") {
    out = std::fopen(a.output.c_str(), "we");
    if (out == nullptr) {
      fmt::print(stderr, "seismo generate: cannot write {}\n", a.output);
      return 1;
    }
  }
  SynthOptions o;
  o.seed = a.seed;
  o.pad_bytes = a.pad_kb * 1024;
  Synth synth(o);
  for (uint64_t i = 0; i < a.count; ++i) {
    std::string doc = a.kind == "main"    ? synth.Main(i)
                      : a.kind == "bhr"   ? synth.Bhr(i)
                      : a.kind == "crash" ? synth.ProcessedCrash(i)
                                          : synth.CrashPing(i);
    doc += '\n';
    std::fwrite(doc.data(), 1, doc.size(), out);
  }
  bool ok = std::fflush(out) == 0;
  if (out != stdout) ok = std::fclose(out) == 0 && ok;
  return ok ? 0 : 1;
}

}  // namespace

void RegisterGenerateCommand(CLI::App& root, CommandRunner* runner) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = root.add_subcommand("generate", "Write realistic synthetic documents as NDJSON");
  cmd->add_option("--kind,-k", args->kind, "Document kind")
      ->check(CLI::IsMember({"main", "bhr", "crash", "crash-ping"}));
  cmd->add_option("--count,-n", args->count, "Number of documents");
  cmd->add_option("--seed,-s", args->seed, "Random seed (same seed, same output)");
  cmd->add_option("--pad-kb", args->pad_kb, "Pad main pings with realistic histograms to ~N KB more");
  cmd->add_option("--output,-o", args->output, "Output file (default: stdout)");
  cmd->callback([args, runner] { *runner = [args] { return RunGenerate(*args); }; });
}

}  // namespace seismo
