// `seismo generate --kind main|bhr|crash|crash-ping --count N --seed S [--start T] [--profile dense]`
// `seismo generate --kind scenario [--plant P]... [--seed S] [--noise SIGMA] [--scale F] [--truth FILE]
//                  [--channel C] [--end T]`
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "seismo/app/command.h"
#include "seismo/core/time.h"
#include "seismo/sim/scenario.h"
#include "seismo/sim/synth.h"

namespace seismo {
namespace {

struct GenerateArgs {
  std::string kind = "main";
  uint64_t count = 1000;
  uint64_t seed = 1;
  size_t pad_kb = 0;
  std::string profile = "default";
  std::string output = "-";
  // --kind scenario
  std::vector<std::string> plants;
  double noise = ScenarioOptions{}.build_noise;
  double scale = 1.0;
  std::string truth;
  std::string channel = ScenarioOptions{}.channel;
  std::string start;  // synthetic kinds: event time of the first document ("" = the default)
  std::string end;    // scenario: event time of its last hour's end ("" = the default timeline)
  // Which options were given, to refuse the ones the kind ignores.
  bool count_given = false, pad_given = false, profile_given = false, scenario_given = false;
};

FILE* OpenOutput(const std::string& path) {
  if (path == "-") return stdout;
  FILE* out = std::fopen(path.c_str(), "we");
  if (out == nullptr) fmt::print(stderr, "seismo generate: cannot write {}\n", path);
  return out;
}

bool CloseOutput(FILE* out) {
  bool ok = std::fflush(out) == 0;
  if (out != stdout) ok = std::fclose(out) == 0 && ok;
  return ok;
}

int RunSynth(const GenerateArgs& a) {
  FILE* out = OpenOutput(a.output);
  if (out == nullptr) return 1;
  SynthOptions o;
  o.seed = a.seed;
  o.pad_bytes = a.pad_kb * 1024;
  o.profile = a.profile == "dense" ? SynthProfile::kDense : SynthProfile::kDefault;
  if (!a.start.empty()) o.start = *ParseTimestamp(a.start);  // checked by RunGenerate
  Synth synth(o);
  for (uint64_t i = 0; i < a.count; ++i) {
    std::string doc = a.kind == "main"    ? synth.Main(i)
                      : a.kind == "bhr"   ? synth.Bhr(i)
                      : a.kind == "crash" ? synth.ProcessedCrash(i)
                                          : synth.CrashPing(i);
    doc += '\n';
    std::fwrite(doc.data(), 1, doc.size(), out);
  }
  return CloseOutput(out) ? 0 : 1;
}

// A release timeline (sim/scenario.h): four healthy builds, then a new one made bad by
// the plants. Main pings, bhr pings and Socorro processed crashes in event-time order.
int RunScenario(const GenerateArgs& a) {
  ScenarioOptions o;
  o.seed = a.seed;
  o.build_noise = a.noise;
  // `scale` shrinks the population, not the evidence: fewer usage hours (so fewer pings),
  // higher crash and hang rates per usage hour, the same crash and hang counts.
  o.usage_per_hour *= a.scale;
  o.crashes_per_usage_hour /= a.scale;
  o.hangs_per_usage_hour /= a.scale;
  o.subprocess_gpu_per_usage_hour /= a.scale;
  o.channel = a.channel;
  for (const std::string& name : a.plants) {
    if (name == "none") continue;
    o.plants |= *ScenarioPlantByName(name);
  }
  if (!a.end.empty()) {
    // Shift the whole timeline so it ends at --end (starting on a whole hour).
    const int64_t length = Scenario(o).end_ms() - o.start_ms;
    o.start_ms = ParseTimestamp(a.end)->ms - length;
    o.start_ms = FloorDiv(o.start_ms, kHourMs) * kHourMs;
  }
  const Scenario scenario(o);
  const ScenarioTruth& t = scenario.truth();
  if (!a.truth.empty()) {
    FILE* f = OpenOutput(a.truth);
    if (f == nullptr) return 1;
    const std::string json = ScenarioTruthJson(o, t) + "\n";
    std::fwrite(json.data(), 1, json.size(), f);
    if (!CloseOutput(f)) return 1;
  }
  FILE* out = OpenOutput(a.output);
  if (out == nullptr) return 1;
  uint64_t documents = 0;
  scenario.ForEachDocument([&](std::string&& doc) {
    doc += '\n';
    std::fwrite(doc.data(), 1, doc.size(), out);
    ++documents;
  });
  if (!CloseOutput(out)) return 1;
  std::string expected;
  for (const ScenarioExpectedAlert& e : t.expected_alerts) {
    expected +=
        fmt::format("\n  {} {} {}{}{}", e.rule, e.build.empty() ? e.os : e.build,
                    e.signature.empty() ? e.scope : e.signature,
                    e.scope.empty() || e.signature.empty() ? "" : " ", e.signature.empty() ? "" : e.scope);
  }
  fmt::print(stderr,
             "seismo generate: scenario seed {}: {} documents; {} {} builds {} .. {}, new build {} ({}); "
             "expected alerts:{}\n",
             o.seed, documents, t.channel, t.baseline_build_ids.size(), t.baseline_build_ids.front(),
             t.baseline_build_ids.back(), t.new_build_id, t.new_version,
             expected.empty() ? " none" : expected);
  return 0;
}

int RunGenerate(const GenerateArgs& a) {
  auto usage = [](std::string_view message) {
    fmt::print(stderr, "seismo generate: {}\n", message);
    return 2;
  };
  if (a.kind == "scenario") {
    if (a.count_given)
      return usage("--count does not apply to --kind scenario (the timeline sets the volume)");
    if (a.pad_given) return usage("--pad-kb does not apply to --kind scenario");
    if (a.profile_given) return usage("--profile does not apply to --kind scenario");
    if (!(a.scale > 0) || a.scale > 100) return usage("--scale must be in (0, 100]");
    if (!(a.noise >= 0) || a.noise > 2) return usage("--noise must be in [0, 2]");
    if (!a.start.empty()) return usage("--start does not apply to --kind scenario (use --end)");
    if (!a.end.empty() && !ParseTimestamp(a.end)) return usage("--end: not an RFC 3339 timestamp");
    return RunScenario(a);
  }
  if (a.scenario_given) return usage("--plant, --noise, --scale, --truth, --channel and --end need --kind scenario");
  if (!a.start.empty() && !ParseTimestamp(a.start)) return usage("--start: not an RFC 3339 timestamp");
  return RunSynth(a);
}

std::string PlantHelp() {
  std::string out = "Plant a bad new build (repeatable, or comma-separated; --kind scenario):";
  for (const ScenarioPlantName& p : ScenarioPlantNames()) out += fmt::format("\n  {:<16} {}", p.name, p.what);
  out += fmt::format("\n  {:<16} {}", "none", "healthy builds only (the default)");
  return out;
}

}  // namespace

void RegisterGenerateCommand(CLI::App& root, CommandRunner* runner) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = root.add_subcommand("generate", "Write realistic synthetic documents as NDJSON");
  cmd->footer(
      "--kind scenario writes a release timeline with known truth: four healthy builds of one channel\n"
      "48 h apart and a new build 30 h old, with main pings, bhr pings and Socorro processed crashes\n"
      "in event-time order. --plant makes the new build bad in a known way; `seismo replay` over the\n"
      "output then fires exactly the planted alerts (--truth lists them). For example:\n"
      "  seismo generate --kind scenario --plant crash_spike --seed 3 --truth truth.json -o bad.ndjson\n"
      "  seismo replay --output result.json bad.ndjson");
  std::vector<std::string> kinds = {"main", "bhr", "crash", "crash-ping", "scenario"};
  cmd->add_option("--kind,-k", args->kind, "Document kind, or a whole release timeline")
      ->check(CLI::IsMember(kinds));
  cmd->add_option("--count,-n", args->count, "Number of documents (not with scenario)")
      ->each([args](const std::string&) { args->count_given = true; });
  cmd->add_option("--seed,-s", args->seed, "Random seed (same seed, same output)");
  cmd->add_option("--pad-kb", args->pad_kb, "Pad main pings with realistic histograms to ~N KB more")
      ->each([args](const std::string&) { args->pad_given = true; });
  cmd->add_option("--profile", args->profile,
                  "Document shapes: default (a few hundred distinct hang stacks), or dense (ordinary-sized "
                  "documents, a long tail of distinct stacks: the bench's dense corpus)")
      ->check(CLI::IsMember({"default", "dense"}))
      ->each([args](const std::string&) { args->profile_given = true; });
  cmd->add_option("--output,-o", args->output, "Output file (default: stdout)");
  std::vector<std::string> plants = {"none"};
  for (const ScenarioPlantName& p : ScenarioPlantNames()) plants.emplace_back(p.name);
  cmd->add_option("--plant,-p", args->plants, PlantHelp())
      ->delimiter(',')
      ->check(CLI::IsMember(plants))
      ->each([args](const std::string&) { args->scenario_given = true; });
  cmd->add_option("--noise", args->noise,
                  "Scenario: sigma of each (build, signature) rate's log-normal factor; 0.1 = healthy "
                  "builds differ by up to ±20 %")
      ->each([args](const std::string&) { args->scenario_given = true; });
  cmd->add_option("--scale", args->scale,
                  "Scenario: population size (1 = 800 usage hours per build per hour); crash and hang "
                  "counts stay the same")
      ->each([args](const std::string&) { args->scenario_given = true; });
  cmd->add_option("--truth", args->truth,
                  "Scenario: write what was planted and the alerts it should fire (JSON)")
      ->each([args](const std::string&) { args->scenario_given = true; });
  cmd->add_option("--channel", args->channel, "Scenario: the builds' channel (default release)")
      ->each([args](const std::string&) { args->scenario_given = true; });
  cmd->add_option("--end", args->end,
                  "Scenario: event time the timeline ends at (RFC 3339, e.g. 2026-11-18T12:00:00Z)")
      ->each([args](const std::string&) { args->scenario_given = true; });
  cmd->add_option("--start", args->start,
                  "Event time of the first document (RFC 3339); one second apart after it");
  cmd->callback([args, runner] { *runner = [args] { return RunGenerate(*args); }; });
}

}  // namespace seismo
