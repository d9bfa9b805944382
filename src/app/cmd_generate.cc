// `seismo generate --kind main|bhr|crash|crash-ping --count N --seed S [--start T]`
// `seismo generate --kind scenario --seed S [--channel C] [--plants P,...] [--end T]`
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "seismo/app/command.h"
#include "seismo/app/scenario.h"
#include "seismo/app/synth.h"

namespace seismo {
namespace {

struct GenerateArgs {
  std::string kind = "main";
  uint64_t count = 1000;
  uint64_t seed = 1;
  size_t pad_kb = 0;
  std::string output = "-";
  std::string start;  // "" = SynthOptions' default start
  // --kind scenario: a release timeline with known truth (seismo/app/scenario.h).
  std::vector<std::string> plants;
  std::string channel = "release";
  std::string end;  // "" = the scenario's default start + its length
};

constexpr std::pair<std::string_view, ScenarioPlant> kPlants[] = {
    {"signature_spike", kPlantSignatureSpike},
    {"new_signature", kPlantNewSignature},
    {"build_regression", kPlantBuildRegression},
    {"hang_spike", kPlantHangSpike},
    {"os_burst", kPlantOsBurst},
    {"install_storm", kPlantInstallStorm},
    {"early_build", kPlantEarlyBuild},
};

// The documents of a small scenario (the volumes of the alert tests) ending at
// --end, in time order: main pings, bhr pings and processed crashes of four
// baseline builds and a new build N on --channel, N made bad by --plants.
int RunScenario(const GenerateArgs& a, FILE* out) {
  ScenarioOptions o;
  o.seed = a.seed;
  o.channel = a.channel;
  o.usage_per_hour = 200;
  o.crashes_per_usage_hour = 0.2;
  o.hangs_per_usage_hour = 0.2;
  for (const std::string& p : a.plants) {
    auto it =
        std::find_if(std::begin(kPlants), std::end(kPlants), [&](const auto& e) { return e.first == p; });
    if (it == std::end(kPlants)) {
      fmt::print(stderr, "seismo generate: --plants {}: unknown plant\n", p);
      return 2;
    }
    o.plants |= it->second;
  }
  if (!a.end.empty()) {
    auto t = ParseTimestamp(a.end);
    if (!t) {
      fmt::print(stderr, "seismo generate: --end {}: not an RFC 3339 timestamp\n", a.end);
      return 2;
    }
    const int64_t length = Scenario(o).end_ms() - o.start_ms;  // start_ms is a whole hour
    constexpr int64_t kHour = 3'600'000;
    o.start_ms = t->ms - length;
    o.start_ms -= ((o.start_ms % kHour) + kHour) % kHour;
  }
  Scenario scenario(o);
  bool ok = true;
  scenario.ForEachDocument([&](std::string&& doc) {
    doc += '\n';
    ok = std::fwrite(doc.data(), 1, doc.size(), out) == doc.size() && ok;
  });
  return ok ? 0 : 1;
}

int RunGenerate(const GenerateArgs& a) {
  FILE* out = stdout;
  if (a.output != "-") {
    out = std::fopen(a.output.c_str(), "we");
    if (out == nullptr) {
      fmt::print(stderr, "seismo generate: cannot write {}\n", a.output);
      return 1;
    }
  }
  if (a.kind == "scenario") {
    int rc = RunScenario(a, out);
    if (std::fflush(out) != 0) rc = 1;
    if (out != stdout && std::fclose(out) != 0) rc = 1;
    return rc;
  }
  SynthOptions o;
  o.seed = a.seed;
  if (!a.start.empty()) {
    auto t = ParseTimestamp(a.start);
    if (!t) {
      fmt::print(stderr, "seismo generate: --start {}: not an RFC 3339 timestamp\n", a.start);
      return 2;
    }
    o.start = *t;
  }
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
      ->check(CLI::IsMember({"main", "bhr", "crash", "crash-ping", "scenario"}));
  cmd->add_option("--count,-n", args->count, "Number of documents");
  cmd->add_option("--seed,-s", args->seed, "Random seed (same seed, same output)");
  cmd->add_option("--pad-kb", args->pad_kb, "Pad main pings with realistic histograms to ~N KB more");
  cmd->add_option("--output,-o", args->output, "Output file (default: stdout)");
  cmd->add_option(
      "--start", args->start,
      "Event time of the first document (RFC 3339, e.g. 2026-11-18T10:00:00Z); one second apart after it");
  cmd->add_option("--plants", args->plants,
                  "scenario: what makes the new build bad (signature_spike, new_signature, build_regression, "
                  "hang_spike, os_burst, install_storm, early_build)")
      ->delimiter(',');
  cmd->add_option("--channel", args->channel, "scenario: the builds' channel");
  cmd->add_option("--end", args->end,
                  "scenario: event time of the last hour's end (RFC 3339); --count is ignored");
  cmd->callback([args, runner] { *runner = [args] { return RunGenerate(*args); }; });
}

}  // namespace seismo
