// `seismo replay [--config FILE] [--output FILE|-] [--threads N] [--timings] INPUT...`
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "seismo/alert/engine.h"
#include "seismo/app/command.h"
#include "seismo/app/output_file.h"
#include "seismo/app/phase_times.h"
#include "seismo/app/replay.h"
#include "seismo/core/leak.h"
#include "seismo/core/syms_map.h"
#include "seismo/signature/generator.h"

namespace seismo {
namespace {

struct ReplayArgs {
  std::string config;
  std::string output;
  std::vector<std::string> inputs;
  int threads = -1;
  bool quiet = false;
  bool pretty = false;
  bool timings = false;
};

// A human-readable summary below the first line: volumes, the top hang and crash
// signatures. The first line (SummaryHead) is printed last, when the whole run's time is known.
std::string SummaryBody(const ReplayResult& r) {
  std::string out;
  const RecordCounts& c = r.counts;
  uint64_t rejected = 0;
  for (size_t i = 0; i < kRejectReasonCount; ++i) rejected += c.rejected[i];
  out += fmt::format("  accepted: {} main, {} bhr, {} crash; rejected: {}\n", c.by_kind[0], c.by_kind[1],
                     c.by_kind[2], rejected);
  for (size_t i = 0; i < kRejectReasonCount; ++i) {
    if (c.rejected[i] > 0) {
      out += fmt::format("    {:<18} {}\n", RejectReasonName(static_cast<RejectReason>(i)), c.rejected[i]);
    }
  }
  // Usage and hangs per (source, signature), summed over dimensions: grouped by text id
  // (equal texts have equal ids), turned into text once per group.
  const Snapshot& snap = *r.snapshot;
  SymsMap<1, int64_t> usage_ms;
  for (const SeriesData* s : snap.table(Table::kUsage)) {
    usage_ms[{s->key[usage_field::kSource]}] += s->total()[0];
  }
  std::map<std::string_view, int64_t> usage_by_source;
  for (const auto& [source, ms] : usage_ms) usage_by_source[snap.Text(source[0])] += ms;
  for (const auto& [source, ms] : usage_by_source) {
    out += fmt::format("  {} usage: {:.1f} hours\n", source, UsageHours(ms));
  }
  SymsMap<2, std::pair<int64_t, int64_t>> by_sig;
  for (const SeriesData* s : snap.table(Table::kHangs)) {
    auto& slot = by_sig[{s->key[hang_field::kSource], s->key[hang_field::kSignature]}];
    slot.first += s->total()[0];
    slot.second += s->total()[1];
  }
  std::vector<std::pair<double, std::string>> top;
  for (const auto& [k, v] : by_sig) {
    const std::string_view source = snap.Text(k[0]);
    auto rate = PerUsageHour(v.first, usage_by_source[source]);
    top.push_back({rate.value_or(0), fmt::format("{:>5} {}", source, snap.Text(k[1]))});
  }
  // Ties in text order: the groups came out of a hash map.
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (!top.empty()) out += fmt::format("  top hang signatures (hang ms per usage hour):\n");
  for (size_t i = 0; i < std::min<size_t>(top.size(), 8); ++i) {
    out += fmt::format("    {:>10.2f}  {}\n", top[i].first, top[i].second);
  }
  SymsMap<1, int64_t> crashes;
  for (const SeriesData* s : snap.table(Table::kCrashes)) {
    crashes[{s->key[crash_field::kSignature]}] += s->total()[0];
  }
  std::vector<std::pair<int64_t, std::string>> top_crashes;
  for (const auto& [sig, n] : crashes) top_crashes.push_back({n, std::string(snap.Text(sig[0]))});
  std::sort(top_crashes.begin(), top_crashes.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (!top_crashes.empty()) out += fmt::format("  top crash signatures (count):\n");
  for (size_t i = 0; i < std::min<size_t>(top_crashes.size(), 8); ++i) {
    out += fmt::format("    {:>10}  {}\n", top_crashes[i].first, top_crashes[i].second);
  }
  return out;
}

// The result is left to the exit, which hands its pages back to the OS at once, where
// freeing it took 5 % of a dense replay (docs/adr/0020). Builds with LeakSanitizer free it:
// its destructors stay checked, and nothing is reported.
void FreeAtExit(ReplayResult&& result) {
#ifdef SEISMO_LEAK_CHECKED
  ReplayResult freed = std::move(result);
#else
  new ReplayResult(std::move(result));  // NOLINT: left to the exit on purpose
#endif
}

// The summary's first line. `seconds` is the whole run: from the command's start
// (configuration and signature lists loaded, inputs read, merged, alerts, output
// written, state freed) to this line, so the rate is what a user waits for.
std::string SummaryHead(const RecordCounts& c, double seconds) {
  return fmt::format("seismo replay: {} documents ({:.1f} MB) in {:.2f} s — {:.0f} records/s, {:.1f} MB/s\n",
                     c.documents, c.bytes / 1e6, seconds, c.documents / std::max(seconds, 1e-9),
                     c.bytes / 1e6 / std::max(seconds, 1e-9));
}

// Sorts the snapshot's tables for the output, the hang table (by far the largest) first. A
// failure leaves a table for the output to sort itself, which reports it.
void SortForOutput(std::shared_ptr<const Snapshot> snapshot) {
  try {
    for (Table t : {Table::kHangs, Table::kCrashes, Table::kUsage, Table::kBuildUsage})
      (void)snapshot->sorted(t);
  } catch (...) {  // the output sorts what is left
  }
}

int RunReplayCommand(const ReplayArgs& args) {
  PhaseTimes phases;
  auto config = LoadConfig(args.config);
  if (!config) {
    fmt::print(stderr, "seismo replay: {}\n", config.error().message());
    return 2;
  }
  if (args.threads >= 0) {
    config->ingest.threads = static_cast<size_t>(args.threads);
    config->aggregate.shards = static_cast<size_t>(args.threads);
  }
  config->http.answer_memory = 0;  // a replay answers no requests: none of memory_limit is set aside for them
  auto signatures = LoadSignatures(*config);
  if (!signatures) {
    fmt::print(stderr, "seismo replay: {}\n", signatures.error().message());
    return 2;
  }
  phases.Mark("load");
  ReplayOptions options;
  options.progress = !args.quiet && isatty(STDERR_FILENO);
  options.phases = &phases;
  auto result = RunReplay(*config, args.inputs, signatures->get(), options);
  if (!result) {
    fmt::print(stderr, "seismo replay: {}\n", result.error().message());
    return 1;
  }
  phases.Mark("teardown");  // the pipeline's threads stopped and its state freed
  std::optional<std::string> body;  // the summary's lines after its first
  if (!args.output.empty()) {
    // One round of the alert rules at the end of the input (stream time = the last event).
    // `for` is a number of rounds, and a replay has exactly one: conditions that hold are
    // reported as firing.
    AlertOptions alert_options = config->alerts;
    alert_options.for_evaluations = 1;
    AlertEngine alerts(alert_options);
    {
      // The output reads every table in key order: the tables are sorted on a thread of their
      // own while the alert round runs, and then the summary is made (all three only read the
      // snapshot, and Snapshot::sorted sorts a table once, whoever asks first: the round
      // reads the builds in order too). On the dense corpus the sorts take about 50 ms, the
      // round 22 ms and the summary 13-21 ms, one after the other before (ADR 0045). Without
      // a thread to be had, the output sorts them itself.
      std::jthread sorting;
      try {
        if (result->snapshot) sorting = std::jthread(SortForOutput, result->snapshot);
      } catch (const std::system_error&) {  // no thread: the output sorts the tables
      }
      if (result->snapshot) (void)alerts.Evaluate(*result->snapshot);
      if (!args.quiet) body = SummaryBody(*result);
    }  // joined
    phases.Mark("alerts");
    const std::string alerts_json = alerts.AlertsJson();
    // The parse threads are done: as many write the rows (the same bytes, ADR 0020).
    const int writers = static_cast<int>(ResolveThreads(config->ingest.threads));
    Status s = WriteOutputFile(args.output, [&](OutputSink& sink) {
      WriteReplayOutput(*result->snapshot, result->counts, alerts_json, args.pretty ? 2 : 0, sink, writers);
    });
    if (!s.ok()) {
      fmt::print(stderr, "seismo replay: {}\n", s.message());
      return 1;
    }
    phases.Mark("output");  // streamed into a temporary file, put in place (ADR 0044)
  }
  const RecordCounts counts = result->counts;
  if (!args.quiet && !body) body = SummaryBody(*result);
  phases.Mark("summary");
  FreeAtExit(std::move(*result));
  phases.Mark("free");
  if (args.timings) {
    fmt::print(
        stderr, "{}\n",
        phases.Json(fmt::format("\"threads\":{},\"documents\":{},\"bytes\":{}",
                                ResolveThreads(config->ingest.threads), counts.documents, counts.bytes)));
  }
  if (!args.quiet) {
    FILE* out = args.output == "-" ? stderr : stdout;
    const std::string head = SummaryHead(counts, phases.TotalSeconds());
    std::fputs(head.c_str(), out);
    std::fputs(body->c_str(), out);
  }
  return 0;
}

}  // namespace

void RegisterReplayCommand(CLI::App& root, CommandRunner* runner) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = root.add_subcommand(
      "replay", "Aggregate NDJSON files (plain, .gz, .zst; - for stdin) and write the result");
  cmd->add_option("--config,-c", args->config, "TOML configuration file (every key has a default)");
  cmd->add_option("--output,-o", args->output, "Write the final state as JSON to FILE (- for stdout)");
  cmd->add_option("--threads", args->threads, "Parse threads and shards (default: [ingest] threads)");
  cmd->add_flag("--quiet,-q", args->quiet, "No progress bar and no summary");
  cmd->add_flag("--pretty", args->pretty, "Indent the JSON output");
  cmd->add_flag("--timings", args->timings,
                "Print where the run's time went, phase by phase, to stderr as one JSON line");
  cmd->add_option("inputs", args->inputs, "Input files")->required();
  cmd->callback([args, runner] { *runner = [args] { return RunReplayCommand(*args); }; });
}

}  // namespace seismo
