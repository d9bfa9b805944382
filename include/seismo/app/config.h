// Config: everything seismo reads from its TOML file (SPEC §6.2). Every key has
// a default, so an empty file (or no file) is valid; config/seismo.toml lists
// every key with its default and meaning. Unknown keys, wrong types and
// impossible values are errors naming the file, the key and the problem.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "seismo/core/status.h"
#include "seismo/aggregate/options.h"
#include "seismo/alert/options.h"
#include "seismo/parse/options.h"
#include "seismo/shard/pipeline.h"

namespace seismo {

struct KafkaConfig {
  std::string brokers = "127.0.0.1:9092";
  std::string group_id = "seismo";
  std::vector<std::string> topics = {"telemetry.main", "telemetry.bhr", "socorro.processed"};
  std::map<std::string, std::string> topic_kinds;  // topic -> "main" | "bhr" | "crash"
  std::map<std::string, std::string> properties;   // passed to librdkafka as is
};

struct SourcesConfig {
  std::vector<std::string> files;
};

struct IngestConfig {
  size_t threads = 0;  // 0 = number of cores
  size_t max_document_bytes = 8 * 1024 * 1024;
  size_t queue_chunks = 64;  // chunks (≈1 MB or 2048 documents each) queued per parse thread
  int nice = 5;              // nice steps the daemon's parse and shard threads run below the rest
  std::string dead_letter_file;   // "" = none
  std::string dead_letter_topic;  // "" = none
};

struct AggregateConfig {
  size_t shards = 0;  // 0 = number of cores
  std::chrono::milliseconds bucket{60'000};
  std::vector<std::chrono::milliseconds> windows = {std::chrono::hours(1), std::chrono::hours(24),
                                                    std::chrono::hours(24 * 7)};
  std::chrono::milliseconds retention{std::chrono::hours(24 * 14)};
  std::chrono::milliseconds max_clock_skew{std::chrono::minutes(10)};
  size_t max_series = 200'000;            // per shard
  uint64_t memory_limit = 2ull << 30;     // bytes
};

struct CrashesConfig {
  std::string siglists_dir;  // "" = the lists built into the binary
};

struct HttpConfig {
  std::string listen = "127.0.0.1:8080";
  std::string static_dir;       // "" = dashboards/ next to the config or the source tree
  std::string auth_token_file;  // "" = no token
  std::vector<std::string> cors_origins;
  int num_threads = 16;                  // CivetWeb workers = most connections served at once
  int max_sse_clients = 8;               // at most num_threads / 2
  int64_t max_request_size = 16 * 1024;  // bytes of request line and headers
  std::chrono::milliseconds request_timeout{10'000};
  // Bounds of API answers (ADR 0025): bytes of one answer, nodes of one flame graph, and
  // the memory all answers in flight may hold (part of aggregate.memory_limit's reserve).
  int64_t max_answer_bytes = 2 << 20;
  int64_t max_answer_nodes = 10'000;
  int64_t answer_memory = 32 << 20;  // unset in a file: DefaultAnswerMemory
  // /healthz and /readyz on a listener of their own, which slow clients cannot starve
  // (ADR 0018): "" = the host of `listen` and the next port (a free port when `listen`
  // asks for port 0); "off" = none; else host:port.
  std::string health_listen;
};

// What the daemon does when the checkpoint it finds cannot be used (SPEC §7, ADR 0018).
enum class OnCorruptCheckpoint {
  kReread,  // set it aside and read every partition again from its earliest retained offset
  kWait,    // leave it in place, consume nothing and stay not-ready until an operator decides
};

struct CheckpointConfig {
  std::string dir;  // "" = no checkpoints
  std::chrono::milliseconds interval{10'000};
  OnCorruptCheckpoint on_corrupt = OnCorruptCheckpoint::kReread;
};

// [cluster] (SPEC §9, ADR 0023, 0024): set aggregates_topic, and `seismo run` is one
// instance of a cluster (the demo refuses it: DemoSupports).
struct ClusterConfig {
  std::string aggregates_topic;  // "" = one instance, as before
  std::string instance_id;       // "" = <host name>:<port of [http] listen> (InstanceId)
  std::chrono::milliseconds publish_interval{10'000};
};

struct LogConfig {
  std::string level = "info";   // trace, debug, info, warn, error, off
  std::string format = "text";  // text | json
};

struct Config {
  std::string path;  // where it was loaded from, "" for defaults
  KafkaConfig kafka;
  SourcesConfig sources;
  IngestConfig ingest;
  AggregateConfig aggregate;
  ParseOptions parse;  // [hangs] and ingest.max_document_bytes
  CrashesConfig crashes;
  HttpConfig http;
  AlertOptions alerts;  // [alerts]
  CheckpointConfig checkpoint;
  ClusterConfig cluster;
  LogConfig log;
  std::chrono::milliseconds shutdown_timeout{30'000};
};

// Loads and validates `path` ("" = all defaults). Errors read
// "<path>: <key>: <problem>".
Result<Config> LoadConfig(const std::string& path);
Result<Config> ParseConfig(std::string_view toml_text, const std::string& path_for_errors);

// The instance's id in the cluster: [cluster] instance_id, or `host_name` and the
// port of [http] listen ("host:port").
std::string InstanceId(const Config& config, std::string_view host_name);

// kInvalidArgument naming the key when the config asks the demo for what it does not do:
// a set [cluster] aggregates_topic (the demo is one instance on its own embedded Kafka).
// `seismo demo` refuses to start on it rather than ignore it.
Status DemoSupports(const Config& config);

// The shard options a config describes (shards resolved to cores, fixed reserve set).
AggregateOptions ToAggregateOptions(const Config& config);

// The pipeline options a config describes: threads, shards, parse and aggregate
// options, queue bounds (both the document rings and the delta rings hold at most
// ingest.queue_chunks chunks' worth per ring). Sources are the caller's.
PipelineOptions ToPipelineOptions(const Config& config);

// Bytes of aggregate.memory_limit that do not grow with the input (ADR 0010): code
// and libraries, each parse thread's document queue and parser buffers, librdkafka's
// prefetch queue. The rest holds the aggregates and their snapshots.
uint64_t FixedMemoryReserve(const Config& config);

// Threads to use for a setting of 0 (= cores).
size_t ResolveThreads(size_t configured);

// [http] answer_memory when the configuration does not set it: a quarter of what
// aggregate.memory_limit leaves after the other reserves, at least 32 MiB (ADR 0025).
int64_t DefaultAnswerMemory(const Config& config);

}  // namespace seismo
