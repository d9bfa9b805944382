// Replay: NDJSON files through the full pipeline (parse -> shards -> merge).
// Used by `seismo replay`, by `[sources] files` in the daemon, and by tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seismo/core/record_counts.h"
#include "seismo/core/symbols.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/app/config.h"
#include "seismo/core/status.h"
#include "seismo/core/time.h"
#include "seismo/query/replay_output.h"

namespace seismo {

class PhaseTimes;
class SignatureGenerator;

struct ReplayResult {
  std::unique_ptr<Symbols> symbols;          // the snapshot's texts (outlives it)
  std::shared_ptr<const Snapshot> snapshot;  // the merged final state (stream time = last event)
  RecordCounts counts;
  double ingest_seconds = 0;  // the "ingest" phase below (not the whole run)
  uint64_t input_bytes = 0;   // bytes of the (decompressed) documents
};

struct ReplayOptions {
  bool progress = false;  // draw a progress bar on stderr
  // When set, RunReplay marks its phases on it, in order: "setup" (open the inputs,
  // start the threads), "ingest" (read, parse and apply every document: until the
  // pipeline has drained), "merge" (the shards' final snapshots merged into the one the
  // output and the alert rules read). Stopping the threads and freeing the
  // pipeline happen as RunReplay returns: the caller's next mark covers them.
  PhaseTimes* phases = nullptr;
  // The wall clock (null: the system's). A replay's answers do not depend on it (ADR
  // 0017); documents without any event time before the input has a stream time take it.
  const Clock* clock = nullptr;
};

// Loads the signature lists named by the config (or the built-in ones).
Result<std::unique_ptr<SignatureGenerator>> LoadSignatures(const Config& config);

// Reads every input (files, "-" for stdin) through a pipeline configured by
// `config` and returns the merged aggregates. Fails only when an input cannot
// be read; bad documents are counted, never fatal.
Result<ReplayResult> RunReplay(const Config& config, const std::vector<std::string>& inputs,
                               const SignatureGenerator* signatures, const ReplayOptions& options);

}  // namespace seismo
