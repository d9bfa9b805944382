// seismo_bench: the end-to-end measures of scripts/bench (SPEC §8). Each
// subcommand prints one JSON object per line on stdout (one line per measure);
// progress and librdkafka chatter go to stderr.
//
//   seismo_bench throughput --corpus NAME --seismo BIN --floor BIN --scratch DIR [--runs N] FILE...
//                                        whole processes: the floor, `seismo replay` with 1 and
//                                        2 threads; ingest alone, phases, scaling
//   seismo_bench signature FILE          signatures of every crash in FILE (crashes/s)
//   seismo_bench kafka FILE...           mock cluster (or the real broker named by
//                                        SEISMO_BENCH_KAFKA_BROKERS, bench/kafka_real.sh):
//                                        plain librdkafka consumer vs the daemon
//   seismo_bench api --seconds S --series N [--no-warm] FILE...
//                                        API p50/p99/p99.9 per endpoint at 200 req/s while the
//                                        daemon ingests from Kafka with N more live series, and
//                                        freshness (bench/api.cc); --no-warm: no default answers
//                                        built on publish (the first request after one builds it)
//   seismo_bench memory SERIES           RSS per live series in one ShardState
//
// FILE arguments are NDJSON (one document per line) from `seismo generate`.
// Nothing here is a test: no figure is compared with a target by this program;
// scripts/bench prints the targets next to the figures.
#include <curl/curl.h>
#include <librdkafka/rdkafka.h>
#include <malloc.h>
#include <simdjson.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api.h"
#include "common.h"
#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/app/config.h"
#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/core/hash.h"
#include "seismo/http/server.h"
#include "seismo/ingest/kafka_consumer.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/mock_cluster.h"
#include "seismo/parse/crash_parser.h"
#include "seismo/signature/generator.h"

namespace seismo::bench {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// ------------------------------------------------------------------ throughput
//
// Whole processes, as a user runs them: `seismo replay --output FILE --timings` with
// 1 and 2 threads, and the floor (`seismo_floor`, one core), on the same files, each
// timed from fork to exit. The passes interleave (floor, 1 thread, 2 threads, floor,
// ...) so a neighbour's load falls on all three alike; the fastest pass of each is
// kept, and the median is reported next to it.

struct ProcessRun {
  double wall_s = 0;
  double cpu_s = 0;  // user + system of the child
  std::string out;   // its stdout
  std::string err;   // its stderr
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs argv to completion, stdout and stderr into files under `scratch`.
ProcessRun RunProcess(const std::vector<std::string>& argv, const std::string& scratch) {
  const std::string out_path = scratch + "/stdout.txt", err_path = scratch + "/stderr.txt";
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) Die("fork failed");
  if (pid == 0) {
    if (!std::freopen(out_path.c_str(), "w", stdout) || !std::freopen(err_path.c_str(), "w", stderr))
      _exit(127);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) Die("wait4 failed");
  ProcessRun r;
  r.wall_s = Since(t0);
  r.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die(argv[0] + " failed:\n" + r.err + r.out);
  return r;
}

// The last line of `text` that starts with '{', parsed.
simdjson::dom::element LastJsonLine(simdjson::dom::parser& parser, const std::string& text) {
  size_t begin = text.rfind("\n{");
  begin = begin == std::string::npos ? 0 : begin + 1;
  simdjson::dom::element e;
  if (parser.parse(text.substr(begin)).get(e) != simdjson::SUCCESS) Die("no JSON line in:\n" + text);
  return e;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct ReplayPass {
  ProcessRun run;
  std::string timings;  // the --timings JSON line
  double total_s = 0;   // in-process total (from the command's start to its summary)
  double ingest_s = 0;
  double ingest_cpu_s = 0;  // CPU of every thread during the ingest phase
};

struct ThroughputArgs {
  std::string corpus;
  std::string seismo;
  std::string floor;
  std::string scratch;
  int runs = 3;
  std::vector<std::string> files;
};

// Targets of issue 15 (docs/benchmarks.md): whole replay by corpus, ingest, scaling.
double ReplayTarget(const std::string& corpus) { return corpus == "dense" ? 0.3 : 0.5; }
constexpr double kIngestTarget = 0.6;
constexpr double kScalingTarget = 1.8;

std::optional<ThroughputArgs> ParseThroughputArgs(const std::vector<std::string>& args) {
  ThroughputArgs t;
  const std::map<std::string, std::string*> options = {
      {"--corpus", &t.corpus}, {"--seismo", &t.seismo}, {"--floor", &t.floor}, {"--scratch", &t.scratch}};
  for (size_t i = 0; i < args.size(); ++i) {
    auto option = options.find(args[i]);
    if (args[i] == "--runs" && i + 1 < args.size()) {
      t.runs = std::stoi(args[++i]);
    } else if (option != options.end() && i + 1 < args.size()) {
      *option->second = args[++i];
    } else {
      t.files.push_back(args[i]);
    }
  }
  if (t.corpus.empty() || t.seismo.empty() || t.floor.empty() || t.scratch.empty() || t.files.empty()) {
    return std::nullopt;
  }
  return t;
}

int Throughput(const ThroughputArgs& a) {
  simdjson::dom::parser json;
  std::vector<ProcessRun> floors, keyed_floors;
  std::map<int, std::vector<ReplayPass>> replays;
  const std::vector<int> thread_counts = {1, 2};
  for (int pass = 0; pass < a.runs; ++pass) {
    std::fprintf(stderr, "throughput %s: pass %d of %d\n", a.corpus.c_str(), pass + 1, a.runs);
    std::vector<std::string> floor_argv = {a.floor};
    floor_argv.insert(floor_argv.end(), a.files.begin(), a.files.end());
    floors.push_back(RunProcess(floor_argv, a.scratch));
    std::vector<std::string> keyed_argv = {a.floor, "--keyed"};
    keyed_argv.insert(keyed_argv.end(), a.files.begin(), a.files.end());
    keyed_floors.push_back(RunProcess(keyed_argv, a.scratch));
    for (int threads : thread_counts) {
      std::vector<std::string> argv = {a.seismo,
                                       "replay",
                                       "--timings",
                                       "--threads",
                                       std::to_string(threads),
                                       "--output",
                                       a.scratch + "/replay-t" + std::to_string(threads) + ".json"};
      argv.insert(argv.end(), a.files.begin(), a.files.end());
      ReplayPass p;
      p.run = RunProcess(argv, a.scratch);
      p.timings =
          p.run.err.substr(p.run.err.rfind("\n{") == std::string::npos ? 0 : p.run.err.rfind("\n{") + 1);
      while (!p.timings.empty() && p.timings.back() == '\n') p.timings.pop_back();
      simdjson::dom::element t = LastJsonLine(json, p.run.err);
      p.total_s = double(t["total_s"]);
      p.ingest_s = double(t["phases"]["ingest"]);
      p.ingest_cpu_s = double(t["cpu"]["ingest"]);
      replays[threads].push_back(std::move(p));
    }
  }
  const bool identical = ReadFile(a.scratch + "/replay-t1.json") == ReadFile(a.scratch + "/replay-t2.json");

  // The floor: the fastest whole process.
  auto by_wall = [](const auto& x, const auto& y) { return x.wall_s < y.wall_s; };
  const ProcessRun& floor = *std::min_element(floors.begin(), floors.end(), by_wall);
  simdjson::dom::element f = LastJsonLine(json, floor.out);
  const uint64_t documents = uint64_t(f["documents"]);
  const double mb = static_cast<double>(uint64_t(f["bytes"])) / 1e6;
  const double floor_mbs = mb / floor.wall_s;
  std::vector<double> floor_walls;
  for (const ProcessRun& r : floors) floor_walls.push_back(r.wall_s);
  Line("floor")
      .Str("corpus", a.corpus)
      .Int("documents", documents)
      .Num("mb", mb)
      .Num("seconds", floor.wall_s, 3)
      .Num("median_seconds", Median(floor_walls), 3)
      .Num("cpu_seconds", floor.cpu_s, 3)
      .Num("mb_per_s", floor_mbs)
      .Num("parse_only_mb_per_s", mb / double(f["parse_s"]))
      .Int("frames_read", uint64_t(f["frames_read"]))
      .Int("runs", floors.size())
      .Print();
  // The floor with every hang frame and stack keyed as an exact aggregation must
  // (seismo_floor --keyed): what bounds the ratios below (docs/benchmarks.md).
  const ProcessRun& keyed = *std::min_element(keyed_floors.begin(), keyed_floors.end(), by_wall);
  simdjson::dom::element k = LastJsonLine(json, keyed.out);
  Line("floor_keyed")
      .Str("corpus", a.corpus)
      .Num("seconds", keyed.wall_s, 3)
      .Num("cpu_seconds", keyed.cpu_s, 3)
      .Num("mb_per_s", mb / keyed.wall_s)
      .Int("texts", uint64_t(k["texts"]))
      .Int("series", uint64_t(k["series"]))
      .Num("ratio_to_floor", floor.cpu_s / keyed.cpu_s, 3)
      .Print();

  std::map<int, double> wall, ingest;
  for (int threads : thread_counts) {
    std::vector<ReplayPass>& passes = replays[threads];
    const ReplayPass& best =
        *std::min_element(passes.begin(), passes.end(),
                          [](const auto& x, const auto& y) { return x.run.wall_s < y.run.wall_s; });
    std::vector<double> walls, ingests, ingest_cpus;
    for (const ReplayPass& p : passes) {
      walls.push_back(p.run.wall_s);
      ingests.push_back(p.ingest_s);
      ingest_cpus.push_back(p.ingest_cpu_s);
    }
    const double ingest_cpu = *std::min_element(ingest_cpus.begin(), ingest_cpus.end());
    const double per_core = floor_mbs * threads;
    wall[threads] = best.run.wall_s;
    ingest[threads] = *std::min_element(ingests.begin(), ingests.end());
    Line("replay")
        .Str("corpus", a.corpus)
        .Int("threads", static_cast<uint64_t>(threads))
        .Num("seconds", best.run.wall_s, 3)
        .Num("median_seconds", Median(walls), 3)
        .Num("cpu_seconds", best.run.cpu_s, 3)
        .Num("mb_per_s", mb / best.run.wall_s)
        .Num("docs_per_s", static_cast<double>(documents) / best.run.wall_s, 0)
        .Num("ratio_to_floor_per_core", mb / best.run.wall_s / per_core, 3)
        .Num("cpu_ratio_to_floor", (mb / best.run.cpu_s) / (mb / floor.cpu_s), 3)
        .Num("target", ReplayTarget(a.corpus), 1)
        .Print();
    Line("ingest")
        .Str("corpus", a.corpus)
        .Int("threads", static_cast<uint64_t>(threads))
        .Num("seconds", ingest[threads], 3)
        .Num("median_seconds", Median(ingests), 3)
        .Num("mb_per_s", mb / ingest[threads])
        .Num("ratio_to_floor_per_core", mb / ingest[threads] / per_core, 3)
        .Num("cpu_seconds", ingest_cpu, 3)
        .Num("cpu_ratio_to_floor", floor.cpu_s / ingest_cpu, 3)
        .Num("target", kIngestTarget, 1)
        .Print();
    // Where the fastest pass's wall time went; what the process did before its first
    // mark and after its last (exec, dynamic loading, static destructors, exit) is the rest.
    std::string line = "{\"measure\":\"replay_phases\",\"corpus\":\"" + a.corpus +
                       "\",\"threads\":" + std::to_string(threads) +
                       ",\"wall_seconds\":" + std::to_string(best.run.wall_s) +
                       ",\"outside_phases_s\":" + std::to_string(best.run.wall_s - best.total_s) +
                       ",\"timings\":" + best.timings + "}";
    std::printf("%s\n", line.c_str());
  }
  Line("scaling")
      .Str("corpus", a.corpus)
      .Num("replay_speedup_1_to_2", wall[1] / wall[2], 3)
      .Num("ingest_speedup_1_to_2", ingest[1] / ingest[2], 3)
      .Num("target", kScalingTarget, 1)
      .Bool("outputs_identical", identical)
      .Print();
  std::fflush(stdout);
  return identical ? 0 : 1;
}

// ------------------------------------------------------------------ signature

int Signature(const std::string& file) {
  Corpus corpus = LoadCorpus({file});
  std::vector<CrashData> crashes;
  std::vector<std::string_view> jsons;
  for (const auto& [begin, length] : corpus.docs) {
    std::string_view j(corpus.data.data() + begin, length);
    auto c = CrashDataFromAnyJson(j);
    if (c.ok()) {
      crashes.push_back(std::move(c.value()));
      jsons.push_back(j);
    }
  }
  if (crashes.empty()) Die("no crash in " + file);
  auto gen = Signatures();
  // Signature generation alone, repeated for at least 2 s.
  size_t n = 0;
  size_t sig_bytes = 0;
  auto t0 = Clock::now();
  do {
    for (const CrashData& c : crashes) sig_bytes += gen->Generate(c).signature.size();
    n += crashes.size();
  } while (Since(t0) < 2.0);
  double s = Since(t0);
  // The whole crash path: JSON -> CrashData -> signature -> ParsedDocument.
  size_t m = 0;
  auto t1 = Clock::now();
  do {
    for (std::string_view j : jsons) {
      CrashFormat format = j.find("\"type\":\"crash\"") != std::string_view::npos ? CrashFormat::kTelemetryPing
                                                                                    : CrashFormat::kProcessed;
      auto d = ParseCrashDocument(j, format, *gen);
      sig_bytes += d.ok();
    }
    m += jsons.size();
  } while (Since(t1) < 2.0);
  double s2 = Since(t1);
  Line("signature")
      .Num("crashes_per_s", static_cast<double>(n) / s, 0)
      .Num("us_per_crash", s * 1e6 / static_cast<double>(n), 2)
      .Num("crash_documents_per_s", static_cast<double>(m) / s2, 0)
      .Int("distinct_crashes", crashes.size())
      .Int("checksum", sig_bytes % 1000)
      .Print();
  return 0;
}

// ------------------------------------------------------------------ kafka

// Topic of a document by its shape, as a deployment would route them.
// The plain consumer: librdkafka's high-level consumer with the properties the
// daemon's KafkaConsumer uses, counting messages and bytes and nothing else.
struct PlainResult {
  double first_to_last_s = 0;
  double total_s = 0;
  uint64_t messages = 0;
  uint64_t bytes = 0;
};

PlainResult PlainConsume(const std::string& brokers, const std::vector<std::string>& topics, uint64_t expected) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::map<std::string, std::string> props = {
      {"bootstrap.servers", brokers},   {"group.id", "plain-bench"},
      {"auto.offset.reset", "earliest"}, {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"}, {"enable.partition.eof", "false"},
      {"fetch.wait.max.ms", "100"},     {"fetch.error.backoff.ms", "100"},
      {"queued.min.messages", "100000"}, {"session.timeout.ms", "6000"},
      {"heartbeat.interval.ms", "500"}, {"log_level", "3"}};
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) Die(err);
  }
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) Die(err);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* subs = rd_kafka_topic_partition_list_new(static_cast<int>(topics.size()));
  for (const std::string& t : topics) rd_kafka_topic_partition_list_add(subs, t.c_str(), RD_KAFKA_PARTITION_UA);
  if (rd_kafka_subscribe(rk, subs) != RD_KAFKA_RESP_ERR_NO_ERROR) Die("subscribe failed");
  rd_kafka_topic_partition_list_destroy(subs);

  PlainResult r;
  auto t0 = Clock::now();
  Clock::time_point first{};
  uint64_t checksum = 0;
  while (r.messages < expected && Since(t0) < 240) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (r.messages == 0) first = Clock::now();
      ++r.messages;
      r.bytes += m->len;
      if (m->len > 0) checksum += static_cast<const unsigned char*>(m->payload)[m->len / 2];
    }
    rd_kafka_message_destroy(m);
  }
  r.total_s = Since(t0);
  r.first_to_last_s = std::chrono::duration<double>(Clock::now() - first).count();
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (checksum == 1) std::fprintf(stderr, " ");  // keeps the payload reads
  return r;
}

// Creates `topic` with `partitions` partitions on a real broker (admin API).
Status CreateRealTopic(const std::string& brokers, const std::string& topic, int partitions) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
    Die(err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) Die(err);
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30'000);
  Status result = Status::Ok();
  if (ev == nullptr || rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    result = Status::Unavailable("create topic " + topic + ": " +
                                 (ev ? rd_kafka_event_error_string(ev) : "no answer"));
  }
  if (ev != nullptr) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_destroy(rk);
  return result;
}

int Kafka(const std::vector<std::string>& files) {
  spdlog::set_level(spdlog::level::warn);
  Corpus corpus = LoadCorpus(files);
  // Partitions per topic: at most ~2.5 MiB of documents each (the mock keeps 5 MiB).
  std::map<std::string, uint64_t> topic_bytes;
  for (const auto& [begin, length] : corpus.docs) {
    topic_bytes[TopicOf(std::string_view(corpus.data.data() + begin, length))] += length;
  }
  // SEISMO_BENCH_KAFKA_BROKERS names a real broker (bench/kafka_real.sh starts one) to use
  // instead of the mock; the measure is then kafka_end_to_end_real_broker.
  const char* real_brokers = std::getenv("SEISMO_BENCH_KAFKA_BROKERS");
  const bool real = real_brokers != nullptr && *real_brokers != '\0';
  std::unique_ptr<MockCluster> mock;
  if (!real) {
    auto cluster = MockCluster::Create(1);
    if (!cluster) Die(cluster.error().message());
    mock = std::move(*cluster);
  }
  std::map<std::string, int> partitions;
  std::vector<std::string> topics;
  int total_partitions = 0;
  for (const auto& [topic, bytes] : topic_bytes) {
    int p = std::max<int>(4, static_cast<int>((bytes + (5u << 19) - 1) / (5u << 19)));
    partitions[topic] = p;
    topics.push_back(topic);
    total_partitions += p;
    if (Status s = real ? CreateRealTopic(real_brokers, topic, p) : mock->CreateTopic(topic, p); !s.ok()) {
      Die(s.message());
    }
  }
  const std::string brokers = real ? std::string(real_brokers) : mock->bootstrap_servers();

  // Produce round robin over each topic's partitions.
  {
    KafkaProducerOptions po;
    po.brokers = brokers;
    auto producer = KafkaProducer::Create(po);
    if (!producer) Die(producer.error().message());
    std::map<std::string, int> next;
    auto t0 = Clock::now();
    for (const auto& [begin, length] : corpus.docs) {
      std::string_view doc(corpus.data.data() + begin, length);
      std::string topic = TopicOf(doc);
      int p = next[topic]++ % partitions[topic];
      if (Status s = (*producer)->Produce(topic, "", doc, p); !s.ok()) Die(s.message());
    }
    if (Status s = (*producer)->Flush(seconds(120)); !s.ok()) Die(s.message());
    std::fprintf(stderr, "kafka: produced %zu documents in %.2f s\n", corpus.docs.size(), Since(t0));
  }
  // Every partition must still hold everything (the mock silently drops old data).
  bool intact = true;
  {
    KafkaConsumerOptions o{brokers, "watermarks", {topics[0]}, {}};
    auto consumer = KafkaConsumer::Create(o, nullptr);
    if (!consumer) Die(consumer.error().message());
    for (const auto& [topic, p] : partitions) {
      for (int i = 0; i < p; ++i) {
        auto wm = (*consumer)->QueryWatermarks({topic, i}, seconds(5));
        if (!wm) Die(wm.error().message());
        if (wm->first != 0) intact = false;
      }
    }
  }
  if (!intact) Die("the mock dropped data: a partition's low watermark is not 0");

  const uint64_t expected = corpus.docs.size();
  const double mb = static_cast<double>(corpus.bytes) / 1e6;
  PlainResult plain = PlainConsume(brokers, topics, expected);
  if (plain.messages != expected) Die("plain consumer read " + std::to_string(plain.messages));

  auto gen = Signatures();
  Config config;
  config.kafka.brokers = brokers;
  config.kafka.group_id = "seismo-bench";
  config.kafka.topics = topics;
  config.kafka.properties = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "500"}};
  config.ingest.threads = 2;
  config.aggregate.shards = 2;
  SystemClock clock;
  double daemon_first_to_last = 0, daemon_total = 0;
  {
    Daemon daemon(config, gen.get(), &clock);
    auto t0 = Clock::now();
    if (Status s = daemon.Start(); !s.ok()) Die(s.message());
    Clock::time_point first{};
    bool seen = false;
    while (Since(t0) < 240) {
      RecordCounts c = daemon.counts();
      if (!seen && c.documents > 0) {
        first = Clock::now();
        seen = true;
      }
      if (c.documents >= expected) {
        ServiceStatus st = daemon.status();
        if (st.queued_chunks == 0 && st.queued_batches == 0) break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    daemon_total = Since(t0);
    daemon_first_to_last = std::chrono::duration<double>(Clock::now() - first).count();
    if (daemon.counts().documents != expected) Die("daemon read " + std::to_string(daemon.counts().documents));
    daemon.Stop();
  }
  Line(real ? "kafka_end_to_end_real_broker" : "kafka_end_to_end")
      .Int("documents", expected)
      .Num("mb", mb)
      .Int("partitions", static_cast<uint64_t>(total_partitions))
      .Bool("low_watermarks_zero", intact)
      .Num("plain_mb_per_s", mb / plain.first_to_last_s)
      .Num("plain_docs_per_s", static_cast<double>(expected) / plain.first_to_last_s, 0)
      .Num("daemon_mb_per_s", mb / daemon_first_to_last)
      .Num("daemon_docs_per_s", static_cast<double>(expected) / daemon_first_to_last, 0)
      .Num("ratio", plain.first_to_last_s / daemon_first_to_last, 3)
      .Num("plain_seconds_with_join", plain.total_s, 2)
      .Num("daemon_seconds_with_join", daemon_total, 2)
      .Num("target", 0.8, 1)
      .Print();
  return 0;
}

// ------------------------------------------------------------------ memory

uint64_t RssBytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Live series: hang series with realistic keys (a few dimensions, a 6-12 frame
// stack), each given one delta in the current bucket, plus crash series
// (with an install sketch) for one in ten.
int Memory(size_t series) {
  AggregateOptions o;
  o.max_series = series * 2;
  o.memory_limit = 64ull << 30;
  const std::vector<std::string> frames = {
      "nsThread::ProcessNextEvent", "mozilla::dom::ScriptLoader::ProcessRequest", "js::RunScript",
      "mozilla::layers::CompositorBridgeChild::RecvDidComposite", "nsRefreshDriver::Tick",
      "mozilla::PresShell::DoReflow", "nsLayoutUtils::PaintFrame", "mozilla::net::nsHttpChannel::OnStopRequest",
      "js::gc::GCRuntime::collect", "mozilla::dom::Element::GetBoundingClientRect"};
  malloc_trim(0);
  const uint64_t rss0 = RssBytes();
  uint64_t rss1 = 0;
  size_t estimate = 0;
  {
    // Interned texts count: each series brings its own leaf frame and stack.
    Symbols symbols;
    DeltaEncoder encoder(&symbols);
    ShardState shard(o, &symbols);
    const int64_t t = 1'795'000'000'000;
    for (size_t i = 0; i < series; ++i) {
      ParsedDocument doc;
      doc.dims.channel = i % 10 == 9 ? "release" : "nightly";
      doc.dims.product = "Firefox";
      doc.dims.version = "146.0";
      doc.dims.build_id = "20261117090501";
      doc.dims.build_date = "20261117";
      doc.dims.os = "Windows_NT";
      std::vector<Delta> deltas;
      if (i % 10 == 9) {
        doc.kind = DocKind::kCrash;
        CrashRecord c;
        c.process = "content";
        c.crash_class = CrashClass::kContent;
        c.signature = "mozilla::dom::Signature" + std::to_string(i);
        c.install_id = std::to_string(i);
        doc.crash = c;
      } else {
        doc.kind = DocKind::kBhr;
        std::vector<std::string_view> stack;
        size_t depth = 6 + i % 7;
        for (size_t f = 0; f < depth; ++f) stack.push_back(frames[(i / (f + 1) + f) % frames.size()]);
        const std::string leaf = "Leaf" + std::to_string(i);
        stack.push_back(leaf);
        doc.AddHang("parent", "Gecko", stack, leaf, 128'000, 1);
      }
      encoder.Encode(doc, EventTime{t + static_cast<int64_t>(i % 60) * 1000}, deltas);
      for (const Delta& d : deltas) {
        if (d.table() == Table::kHangs || d.table() == Table::kCrashes) shard.Apply(d);
      }
    }
    rss1 = RssBytes();
    estimate = shard.MemoryBytes();
    if (shard.series_count() < series) std::fprintf(stderr, "memory: only %zu series live\n", shard.series_count());
  }
  const double per = static_cast<double>(rss1 - rss0) / static_cast<double>(series);
  Line("memory_per_series")
      .Int("series", series)
      .Num("rss_mb", static_cast<double>(rss1 - rss0) / 1e6)
      .Num("rss_bytes_per_series", per, 0)
      .Num("estimated_bytes_per_series", static_cast<double>(estimate) / static_cast<double>(series), 0)
      .Num("series_per_gib_memory_limit", (1ull << 30) / per, 0)
      .Print();
  return 0;
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: seismo_bench throughput --corpus NAME --seismo BIN --floor BIN --scratch DIR [--runs N] "
      "FILE... | signature FILE | kafka FILE... | api --seconds S --series N [--no-warm] FILE... | memory "
      "SERIES\n");
  return 2;
}

}  // namespace
}  // namespace seismo::bench

int main(int argc, char** argv) {
  using namespace seismo::bench;
  if (argc < 3) return Usage();
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  if (cmd == "throughput") {
    std::optional<ThroughputArgs> t = ParseThroughputArgs(args);
    return t ? Throughput(*t) : Usage();
  }
  if (cmd == "signature") return Signature(args[0]);
  if (cmd == "kafka") return Kafka(args);
  if (cmd == "api") {
    std::optional<ApiArgs> a = ParseApiArgs(args);
    return a ? Api(*a) : Usage();
  }
  if (cmd == "memory") return Memory(std::stoul(args[0]));
  return Usage();
}
