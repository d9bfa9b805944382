// `seismo produce`: load NDJSON (plain, .gz, .zst, or stdin) into a Kafka
// topic, one message per non-empty line, optionally rate-limited and keyed by
// a field of each document. Each message's timestamp is the document's own
// event time (--timestamp document, the default) or the time of producing
// (--timestamp now), so an archive produced into Kafka gives replay's answers
// (SPEC §6.1). Reports acknowledged/failed counts on stderr; exits 0 only if
// every message was acknowledged.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/app/command.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/line_reader.h"
#include "seismo/parse/parser.h"
#include "seismo/signature/generator.h"

namespace seismo {

namespace {

struct ProduceArgs {
  std::string brokers;
  std::string topic;
  std::string rate;       // "N" or "N/s"; empty = unlimited
  std::string key_field;  // dotted path, e.g. "clientId" or "application.buildId"
  int32_t partition = KafkaProducer::kAnyPartition;
  std::string timestamp = "document";   // "document" | "now"
  std::vector<std::string> properties;  // KEY=VALUE
  std::string input = "-";
};

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// ---- A minimal JSON walker for --key-field ----
// Finds the value at a dotted path of object keys and returns its raw text:
// a string's characters between the quotes (escapes kept as written) or a
// scalar's literal. Objects and arrays are not keys: nullopt. Malformed input
// yields nullopt (the message is then sent without a key). Key names with
// escapes are compared as written.

class JsonWalker {
 public:
  explicit JsonWalker(std::string_view text) : s_(text) {}

  std::optional<std::string_view> Find(std::string_view path) {
    SkipSpace();
    for (;;) {
      const size_t dot = path.find('.');
      const std::string_view segment = path.substr(0, dot);
      if (!EnterObjectKey(segment)) return std::nullopt;
      if (dot == std::string_view::npos) return ScalarHere();
      path.remove_prefix(dot + 1);
    }
  }

 private:
  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool Consume(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  // At '"': returns the raw contents and moves past the closing quote.
  std::optional<std::string_view> String() {
    if (i_ >= s_.size() || s_[i_] != '"') return std::nullopt;
    const size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != '"') i_ += (s_[i_] == '\\') ? 2 : 1;
    if (i_ >= s_.size()) return std::nullopt;
    return s_.substr(start, i_++ - start);
  }
  bool SkipValue() {
    SkipSpace();
    if (i_ >= s_.size()) return false;
    if (s_[i_] == '"') return String().has_value();
    if (s_[i_] == '{' || s_[i_] == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        const char c = s_[i_];
        if (c == '"') {
          if (!String()) return false;
          continue;
        }
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') --depth;
        ++i_;
        if (depth == 0) return true;
      }
      return false;
    }
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' &&
           s_[i_] != '\t' && s_[i_] != '\n' && s_[i_] != '\r') {
      ++i_;
    }
    return i_ > start;
  }
  // Expects an object here; leaves the position at the value of `key`.
  bool EnterObjectKey(std::string_view key) {
    if (!Consume('{')) return false;
    if (Consume('}')) return false;
    for (;;) {
      SkipSpace();
      auto name = String();
      if (!name || !Consume(':')) return false;
      SkipSpace();
      if (*name == key) return true;
      if (!SkipValue()) return false;
      if (Consume(',')) continue;
      return false;  // '}' (key absent) or malformed
    }
  }
  std::optional<std::string_view> ScalarHere() {
    SkipSpace();
    if (i_ >= s_.size() || s_[i_] == '{' || s_[i_] == '[') return std::nullopt;
    if (s_[i_] == '"') return String();
    const size_t start = i_;
    if (!SkipValue()) return std::nullopt;
    return s_.substr(start, i_ - start);
  }

  std::string_view s_;
  size_t i_ = 0;
};

// "250", "250/s", "2.5/s" → messages per second; 0 = unlimited.
Result<double> ParseRate(std::string text) {
  if (text.empty()) return 0.0;
  if (text.size() > 2 && text.compare(text.size() - 2, 2, "/s") == 0) {
    text.resize(text.size() - 2);
  }
  char* end = nullptr;
  const double rate = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(rate >= 0) || rate > 1e9) {
    return Status::InvalidArgument("--rate '" + text + "': expected N or N/s, N >= 0");
  }
  return rate;
}

int RunProduce(const ProduceArgs& args) {
  auto rate = ParseRate(args.rate);
  if (!rate) {
    std::fprintf(stderr, "seismo produce: %s\n", rate.error().message().c_str());
    return 2;
  }
  KafkaProducerOptions options;
  options.brokers = args.brokers;
  // A command-line tool should not wait librdkafka's default 5 minutes for
  // an unreachable cluster; --property message.timeout.ms=... overrides.
  options.properties["message.timeout.ms"] = "30000";
  // Keyless messages: spread them over the partitions instead of sticking to one
  // per batch, so no single partition outgrows the mock cluster's 5 MiB cap (SPEC §10).
  options.properties["sticky.partitioning.linger.ms"] = "0";
  for (const std::string& kv : args.properties) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "seismo produce: --property '%s': expected KEY=VALUE\n", kv.c_str());
      return 2;
    }
    options.properties[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto producer = KafkaProducer::Create(options);
  if (!producer) {
    std::fprintf(stderr, "seismo produce: %s\n", producer.error().message().c_str());
    return 2;
  }
  // --timestamp document: the event time the pipeline itself would read from the document
  // without a transport timestamp (SPEC §2). A document without one (or one the parser
  // rejects) is stamped with the time of producing.
  std::unique_ptr<SignatureGenerator> signatures;
  std::unique_ptr<Parser> parser;
  if (args.timestamp == "document") {
    auto loaded = SignatureGenerator::LoadDefault();
    if (!loaded) {
      std::fprintf(stderr, "seismo produce: %s\n", loaded.error().message().c_str());
      return 1;
    }
    signatures = std::move(*loaded);
    parser = std::make_unique<Parser>(ParseOptions{}, signatures.get());
  }
  auto reader = LineReader::Open(args.input);
  if (!reader) {
    std::fprintf(stderr, "seismo produce: %s\n", reader.error().message().c_str());
    return 1;
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  uint64_t lines = 0;
  uint64_t refused = 0;  // Produce() errors: never enqueued
  while (auto line = (*reader)->Next()) {
    if (IsBlank(*line)) continue;
    if (*rate > 0) {
      // Message n is due at start + n / rate; serve delivery reports while waiting.
      const auto due = start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(static_cast<double>(lines) / *rate));
      for (auto now = Clock::now(); now < due; now = Clock::now()) {
        (*producer)->Poll(std::min(std::chrono::duration_cast<std::chrono::milliseconds>(due - now) +
                                       std::chrono::milliseconds(1),
                                   std::chrono::milliseconds(100)));
      }
    }
    std::string_view key;
    if (!args.key_field.empty()) {
      key = JsonWalker(*line).Find(args.key_field).value_or(std::string_view());
    }
    std::optional<int64_t> timestamp_ms;  // nullopt: now
    if (parser) {
      ParseResult<ParsedDocument> parsed = parser->Parse(*line);
      std::optional<EventTime> t;
      if (parsed.ok()) t = ResolveEventTime(parsed.value(), std::nullopt);
      if (t && t->ms >= 0) timestamp_ms = t->ms;  // Kafka timestamps start at the epoch
    }
    ++lines;
    const Status s = (*producer)->Produce(args.topic, key, *line, args.partition, timestamp_ms);
    if (!s.ok()) {
      ++refused;
      if (refused <= 5) spdlog::warn("produce: line {}: {}", lines, s.message());
    }
  }
  if (!(*reader)->error().ok()) {
    std::fprintf(stderr, "seismo produce: reading %s: %s\n", args.input.c_str(),
                 (*reader)->error().message().c_str());
  }
  // message.timeout.ms bounds every delivery, so this ends.
  while (!(*producer)->Flush(std::chrono::seconds(1)).ok()) {
  }
  const KafkaProducerStats stats = (*producer)->stats();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::fprintf(stderr,
               "seismo produce: %llu messages to %s: %llu acknowledged, %llu failed (%.1f s)\n",
               static_cast<unsigned long long>(lines), args.topic.c_str(),
               static_cast<unsigned long long>(stats.acknowledged),
               static_cast<unsigned long long>(stats.failed + refused), seconds);
  if (!stats.last_error.empty()) {
    std::fprintf(stderr, "seismo produce: last error: %s\n", stats.last_error.c_str());
  }
  const bool all_acknowledged = (*reader)->error().ok() && refused == 0 && stats.failed == 0 &&
                                stats.acknowledged == lines;
  return all_acknowledged ? 0 : 1;
}

}  // namespace

void RegisterProduceCommand(CLI::App& root, CommandRunner* runner) {
  CLI::App* cmd = root.add_subcommand(
      "produce",
      "Load NDJSON into a Kafka topic: one message per non-empty line of FILE (plain, .gz, "
      ".zst; '-' or none for stdin). Prints acknowledged and failed counts to stderr; exits 0 "
      "only if every message was acknowledged.");
  auto args = std::make_shared<ProduceArgs>();
  cmd->add_option("--brokers", args->brokers, "Bootstrap servers (host:port,...)")->required();
  cmd->add_option("--topic", args->topic, "Destination topic")->required();
  cmd->add_option("--rate", args->rate, "Rate limit in messages per second (N or N/s)")
      ->type_name("N/s");
  cmd->add_option("--key-field", args->key_field,
                  "Use this document field (dotted path, e.g. clientId) as the message key")
      ->type_name("PATH");
  cmd->add_option("--partition", args->partition,
                  "Write every message to this partition (default: by key, else spread)");
  cmd->add_option("--timestamp", args->timestamp,
                  "Each message's timestamp: the document's own event time (document: "
                  "submission_timestamp, else creationDate; a Socorro crash's submitted_timestamp or "
                  "date_processed; the time of producing when it has none), or the time of producing "
                  "(now)")
      ->check(CLI::IsMember({"document", "now"}))
      ->capture_default_str();
  cmd->add_option("--property,-X", args->properties,
                  "librdkafka producer property KEY=VALUE (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("FILE", args->input, "NDJSON input; '-' for stdin")->capture_default_str();
  cmd->callback([runner, args] { *runner = [args] { return RunProduce(*args); }; });
}

}  // namespace seismo
