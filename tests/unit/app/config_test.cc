#include "seismo/app/config.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "app/http_options.h"

namespace seismo {
namespace {

Result<Config> Parse(const std::string& text) { return ParseConfig(text, "test.toml"); }

void ExpectError(const std::string& text, const std::string& fragment) {
  auto c = Parse(text);
  ASSERT_FALSE(c) << text;
  EXPECT_NE(c.error().message().find(fragment), std::string::npos) << c.error().message();
  EXPECT_EQ(c.error().message().rfind("test.toml: ", 0), 0u) << c.error().message();
}

TEST(Config, EmptyFileGivesDefaults) {
  auto c = Parse("");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->parse.hangs.min_ms, 128);
  EXPECT_EQ(c->parse.hangs.max_ms, 16000);
  EXPECT_EQ(c->parse.hangs.bhr_max_ms, 65536);
  EXPECT_EQ(c->parse.hangs.child_payloads, ChildPayloads::kShutdownOnly);
  EXPECT_EQ(c->http.listen, "127.0.0.1:8080");
  EXPECT_EQ(c->aggregate.windows.size(), 3u);
  EXPECT_EQ(c->aggregate.retention, std::chrono::hours(24 * 14));
}

TEST(Config, ReadsEveryHangKey) {
  auto c = Parse(R"(
[hangs]
min_ms = 100
max_ms = 8000
bhr_max_ms = 30000
weighting = "mid"
child_payloads = "all"
signature = "innermost_label"
threads = ["Gecko"]
)");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->parse.hangs.min_ms, 100);
  EXPECT_EQ(c->parse.hangs.weighting, HangWeighting::kMid);
  EXPECT_EQ(c->parse.hangs.child_payloads, ChildPayloads::kAll);
  EXPECT_EQ(c->parse.hangs.signature, HangSignatureMode::kInnermostLabel);
  EXPECT_EQ(c->parse.hangs.threads, std::vector<std::string>{"Gecko"});
}

TEST(Config, ReadsKafkaTablesAsIs) {
  auto c = Parse(R"(
[kafka]
brokers = "b:1"
[kafka.topic_kinds]
"socorro.processed" = "crash"
[kafka.properties]
"session.timeout.ms" = "6000"
)");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->kafka.topic_kinds.at("socorro.processed"), "crash");
  EXPECT_EQ(c->kafka.properties.at("session.timeout.ms"), "6000");
}

TEST(Config, UnknownKeysAndSectionsAreErrors) {
  ExpectError("[hangs]\nmin_msec = 5\n", "hangs.min_msec: unknown key");
  ExpectError("[hang]\nmin_ms = 5\n", "hang: unknown section or key");
  ExpectError("verbose = true\n", "verbose: unknown section or key");
}

TEST(Config, WrongTypesNameTheKey) {
  ExpectError("[hangs]\nmin_ms = \"128\"\n", "hangs.min_ms: expected an integer");
  ExpectError("[kafka]\ntopics = \"a\"\n", "kafka.topics: expected an array of strings");
  ExpectError("[aggregate]\nbucket = 60\n", "aggregate.bucket: expected a duration");
  ExpectError("[http]\nlisten = 8080\n", "http.listen: expected a string");
  ExpectError("hangs = 1\n", "hangs: expected a table");
}

TEST(Config, ImpossibleValuesAreErrors) {
  ExpectError("[hangs]\nmin_ms = -1\n", "hangs.min_ms: -1 is out of range");
  ExpectError("[hangs]\nmin_ms = 500\nmax_ms = 400\n", "hangs.max_ms: must be greater than min_ms");
  ExpectError("[hangs]\nweighting = \"median\"\n", "hangs.weighting: \"median\" is not one of");
  ExpectError("[aggregate]\nbucket = \"1 hour\"\n", "aggregate.bucket: \"1 hour\" is not a duration");
  ExpectError("[aggregate]\nbucket = \"0s\"\n", "must be greater than zero");
  ExpectError("[aggregate]\nwindows = [\"90s\"]\n", "not a multiple of the bucket");
  ExpectError("[aggregate]\nwindows = [\"30d\"]\n", "longer than the retention");
  ExpectError("[kafka.topic_kinds]\nx = \"pings\"\n", "kafka.topic_kinds.x");
  ExpectError("[ingest]\nnice = 20\n", "ingest.nice: 20 is out of range");
  ExpectError("[ingest]\nnice = -1\n", "ingest.nice: -1 is out of range");
}

// [ingest] nice reaches the daemon's pipeline; replay runs every thread alike (ADR 0025).
TEST(Config, IngestNiceReachesThePipeline) {
  EXPECT_EQ(ToPipelineOptions(Config{}).ingest_nice, 5);
  auto c = Parse("[ingest]\nnice = 0\n");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(ToPipelineOptions(*c).ingest_nice, 0);
}

// memory_limit covers the whole process: what queues and buffers need comes off
// the top (ADR 0010), and a limit that leaves under 32 MiB is refused by name.
TEST(Config, MemoryLimitMustLeaveRoomAfterTheFixedReserve) {
  const char* small = "[ingest]\nthreads = 2\nqueue_chunks = 4\nmax_document_bytes = 1048576\n[kafka]\ntopics = []\n";
  auto ok = Parse(std::string(small) + "[aggregate]\nmemory_limit = 209715200\n");
  ASSERT_TRUE(ok) << ok.error().message();
  // 80 + threads x (4 x 2.5 + 7 + 1, the stack memo) + http.answer_memory (32 MiB by default)
  EXPECT_EQ(FixedMemoryReserve(*ok), (80ull + 2 * (10 + 7 + 1) + 32) << 20);
  EXPECT_EQ(ToAggregateOptions(*ok).fixed_reserve, FixedMemoryReserve(*ok));
  ExpectError(std::string(small) + "[aggregate]\nmemory_limit = 100000000\n",
              "aggregate.memory_limit: 100000000 bytes leave less than 32 MiB");
  // Consuming Kafka adds librdkafka's prefetch queue (64 MiB unless configured).
  auto kafka = Parse("[ingest]\nthreads = 1\nqueue_chunks = 4\nmax_document_bytes = 1048576\n"
                     "[kafka.properties]\n\"queued.max.messages.kbytes\" = \"1024\"\n");
  ASSERT_TRUE(kafka) << kafka.error().message();
  // (answer_memory unset: a quarter of the 2 GiB limit less the other 99 MiB)
  EXPECT_EQ(FixedMemoryReserve(*kafka), ((80ull + 10 + 7 + 1 + 1) << 20) + ((2048ull - 99) << 20) / 4);
  // The memory of API answers in flight is part of the reserve (ADR 0025).
  auto answers = Parse(std::string(small) + "[http]\nanswer_memory = 8388608\n");
  ASSERT_TRUE(answers) << answers.error().message();
  EXPECT_EQ(FixedMemoryReserve(*answers), (80ull + 2 * (10 + 7 + 1) + 8) << 20);
}

// Unset, [http] answer_memory is a quarter of what memory_limit leaves after the other
// reserves, never under 32 MiB (ADR 0025); set, it is what it says.
TEST(Config, AnswerMemoryUnsetIsAQuarterOfWhatTheLimitLeaves) {
  // Reserve without answers: 80 + 2 x (64 x 2.5 + 7 x 8 + 1) + 64 (Kafka) = 578 MiB; a
  // quarter of the 1 470 MiB left of 2 GiB is 367.5 MiB.
  auto d = Parse("[ingest]\nthreads = 2\n");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->http.answer_memory, (int64_t{1470} << 20) / 4);
  EXPECT_EQ(FixedMemoryReserve(*d), (578ull << 20) + (1470ull << 20) / 4);
  // A limit that leaves little gets the floor: 1 GiB - 578 MiB = 446 MiB, a quarter 111.5
  // MiB; 700 MiB leaves 122 MiB, a quarter 30.5 MiB, under the floor.
  auto one = Parse("[ingest]\nthreads = 2\n[aggregate]\nmemory_limit = 1073741824\n");
  ASSERT_TRUE(one) << one.error().message();
  EXPECT_EQ(one->http.answer_memory, (int64_t{446} << 20) / 4);
  auto small = Parse("[ingest]\nthreads = 2\n[aggregate]\nmemory_limit = 734003200\n");
  ASSERT_TRUE(small) << small.error().message();
  EXPECT_EQ(small->http.answer_memory, int64_t{32} << 20);
  // Set, whatever the limit.
  auto set = Parse("[ingest]\nthreads = 2\n[http]\nanswer_memory = 8388608\n");
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_EQ(set->http.answer_memory, int64_t{8} << 20);
  // No file at all (`seismo run` without --config): as a file that does not set it. On up to
  // 7 cores the default is over the floor, so this tells the two apart where CI runs.
  auto none = LoadConfig("");
  ASSERT_TRUE(none) << none.error().message();
  auto empty = Parse("");
  ASSERT_TRUE(empty) << empty.error().message();
  EXPECT_EQ(none->http.answer_memory, empty->http.answer_memory);
  EXPECT_EQ(none->http.answer_memory, DefaultAnswerMemory(*none));
}

TEST(Config, ReadsHttpLimits) {
  auto c = Parse(
      "[http]\nnum_threads = 6\nmax_sse_clients = 3\nmax_request_size = 4096\nrequest_timeout = \"2s\"\n");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->http.num_threads, 6);
  EXPECT_EQ(c->http.max_sse_clients, 3);
  EXPECT_EQ(c->http.max_request_size, 4096);
  EXPECT_EQ(c->http.request_timeout, std::chrono::seconds(2));
  auto d = Parse("");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->http.num_threads, 16);
  EXPECT_EQ(d->http.max_sse_clients, 8);
  EXPECT_EQ(d->http.max_request_size, 16384);
  EXPECT_EQ(d->http.request_timeout, std::chrono::seconds(10));
  EXPECT_EQ(d->http.max_answer_bytes, 2 << 20);
  EXPECT_EQ(d->http.max_answer_nodes, 10'000);
  EXPECT_EQ(d->http.answer_memory, DefaultAnswerMemory(*d));
  auto bounds = Parse("[http]\nmax_answer_bytes = 65536\nmax_answer_nodes = 16\nanswer_memory = 1048576\n");
  ASSERT_TRUE(bounds) << bounds.error().message();
  EXPECT_EQ(bounds->http.max_answer_bytes, 65536);
  EXPECT_EQ(bounds->http.max_answer_nodes, 16);
  EXPECT_EQ(bounds->http.answer_memory, 1 << 20);
}

TEST(Config, HttpLimitErrorsNameTheKey) {
  ExpectError("[http]\nnum_threads = 1\n", "http.num_threads: 1 is out of range [2, 1024]");
  ExpectError("[http]\nnum_threads = \"8\"\n", "http.num_threads: expected an integer");
  ExpectError("[http]\nmax_request_size = 100\n", "http.max_request_size: 100 is out of range");
  ExpectError("[http]\nrequest_timeout = 10\n", "http.request_timeout: expected a duration");
  ExpectError("[http]\nmax_answer_bytes = 1000\n", "http.max_answer_bytes: 1000 is out of range");
  ExpectError("[http]\nmax_answer_nodes = 2\n", "http.max_answer_nodes: 2 is out of range");
  ExpectError("[http]\nanswer_memory = 0\n", "http.answer_memory: 0 is out of range");
  ExpectError("[http]\nrequest_timeout = \"0s\"\n", "http.request_timeout: must be greater than zero");
  ExpectError("[http]\nnum_threads = 4\nmax_sse_clients = 3\n",
              "http.max_sse_clients: 3 is more than half of num_threads (4)");
  ExpectError("[http]\nmax_sse_clients = -1\n", "http.max_sse_clients: -1 is out of range");
}

TEST(Config, SyntaxErrorsGiveLineAndColumn) {
  auto c = Parse("[hangs\nmin_ms = 1\n");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message().rfind("test.toml:1:", 0), 0u) << c.error().message();
}

TEST(Config, MissingFileIsAnError) {
  auto c = LoadConfig("/nonexistent/seismo.toml");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("/nonexistent/seismo.toml"), std::string::npos);
}

// [checkpoint] on_corrupt: what to do about an unusable checkpoint (ADR 0018).
TEST(Config, OnCorruptCheckpointIsRereadOrWait) {
  EXPECT_EQ(Parse("")->checkpoint.on_corrupt, OnCorruptCheckpoint::kReread);
  EXPECT_EQ(Parse("[checkpoint]\non_corrupt = \"wait\"\n")->checkpoint.on_corrupt, OnCorruptCheckpoint::kWait);
  EXPECT_EQ(Parse("[checkpoint]\non_corrupt = \"reread\"\n")->checkpoint.on_corrupt, OnCorruptCheckpoint::kReread);
  ExpectError("[checkpoint]\non_corrupt = \"ignore\"\n",
              "checkpoint.on_corrupt: \"ignore\" is not one of \"reread\", \"wait\"");
}

// [http] health_listen: by default the next port of `listen`, a free port for a free port.
TEST(Config, HealthListenDefaultsToTheNextPort) {
  EXPECT_EQ(HealthListenAddress(*Parse("")), "127.0.0.1:8081");
  EXPECT_EQ(HealthListenAddress(*Parse("[http]\nlisten = \"0.0.0.0:9000\"\n")), "0.0.0.0:9001");
  EXPECT_EQ(HealthListenAddress(*Parse("[http]\nlisten = \"127.0.0.1:0\"\n")), "127.0.0.1:0");
  EXPECT_EQ(HealthListenAddress(*Parse("[http]\nhealth_listen = \"127.0.0.1:7000\"\n")), "127.0.0.1:7000");
  EXPECT_EQ(HealthListenAddress(*Parse("[http]\nhealth_listen = \"off\"\n")), "");
}

// [cluster] (SPEC §9): parsed and validated; the demo refuses a set aggregates_topic
// (DemoSupports), never ignores it.
TEST(ConfigCluster, DefaultsAreOneInstance) {
  auto c = Parse("");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->cluster.aggregates_topic, "");
  EXPECT_EQ(c->cluster.instance_id, "");
  EXPECT_EQ(c->cluster.publish_interval, std::chrono::seconds(10));
  EXPECT_TRUE(DemoSupports(*c).ok());
}

TEST(ConfigCluster, ReadsEveryKey) {
  auto c = Parse(
      "[cluster]\naggregates_topic = \"seismo.aggregates\"\ninstance_id = \"node-a\"\n"
      "publish_interval = \"30s\"\n");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->cluster.aggregates_topic, "seismo.aggregates");
  EXPECT_EQ(c->cluster.instance_id, "node-a");
  EXPECT_EQ(c->cluster.publish_interval, std::chrono::seconds(30));
}

TEST(ConfigCluster, InstanceIdDefaultsToHostAndHttpPort) {
  EXPECT_EQ(InstanceId(*Parse(""), "box1"), "box1:8080");
  EXPECT_EQ(InstanceId(*Parse("[http]\nlisten = \"0.0.0.0:9000\"\n"), "box1"), "box1:9000");
  EXPECT_EQ(InstanceId(*Parse("[cluster]\ninstance_id = \"node-a\"\n"), "box1"), "node-a");
}

TEST(ConfigCluster, ErrorsNameTheKey) {
  ExpectError("[cluster]\naggregates_topic = \"seismo/aggregates\"\n",
              "cluster.aggregates_topic: \"seismo/aggregates\" is not a Kafka topic name");
  ExpectError("[cluster]\naggregates_topic = \"..\"\n", "is not a Kafka topic name");
  ExpectError("[cluster]\naggregates_topic = \"" + std::string(250, 'a') + "\"\n",
              "is not a Kafka topic name");
  ExpectError("[cluster]\naggregates_topic = \"telemetry.main\"\n",
              "cluster.aggregates_topic: \"telemetry.main\" is also a source, dead-letter or alert topic");
  ExpectError("[ingest]\ndead_letter_topic = \"x\"\n[cluster]\naggregates_topic = \"x\"\n",
              "is also a source, dead-letter or alert topic");
  ExpectError("[alerts]\nkafka_topic = \"x\"\n[cluster]\naggregates_topic = \"x\"\n",
              "is also a source, dead-letter or alert topic");
  ExpectError("[sources]\nfiles = [\"a.ndjson\"]\n[cluster]\naggregates_topic = \"agg\"\n",
              "cluster.aggregates_topic: needs Kafka sources only");
  ExpectError("[kafka]\ntopics = []\n[cluster]\naggregates_topic = \"agg\"\n", "needs Kafka sources only");
  ExpectError("[cluster]\ninstance_id = \"a\\nb\"\n", "cluster.instance_id: must be at most 255 characters");
  ExpectError("[cluster]\ninstance_id = \"" + std::string(256, 'a') + "\"\n", "cluster.instance_id");
  ExpectError("[cluster]\npublish_interval = \"0s\"\n",
              "cluster.publish_interval: must be greater than zero");
  ExpectError("[cluster]\npublish_interval = \"15d\"\n", "cluster.publish_interval: is longer than");
  ExpectError("[cluster]\npublish_interval = 10\n", "cluster.publish_interval: expected a duration");
  ExpectError("[cluster]\nowner = \"me\"\n", "cluster.owner: unknown key");
}

TEST(ConfigCluster, TheDemoDoesNotRunAsPartOfACluster) {
  auto c = Parse("[cluster]\naggregates_topic = \"seismo.aggregates\"\n");
  ASSERT_TRUE(c);
  const Status s = DemoSupports(*c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("test.toml: cluster.aggregates_topic: the demo is one instance"),
            std::string::npos)
      << s.message();
}

// The real binary refuses to start rather than run as one instance of a cluster it is not.
TEST(ConfigCluster, TheDemoRefusesASetAggregatesTopic) {
  const std::string path = ::testing::TempDir() + "/cluster-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path)
      << "[http]\nlisten = \"127.0.0.1:0\"\n[cluster]\naggregates_topic = \"seismo.aggregates\"\n";
  for (const char* command : {"demo"}) {
    const std::string line = std::string(SEISMO_BINARY) + " " + command + " --config '" + path + "' 2>&1";
    FILE* p = ::popen(line.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    ASSERT_TRUE(WIFEXITED(status)) << command;
    EXPECT_EQ(WEXITSTATUS(status), 2) << command << ": " << out;
    EXPECT_NE(out.find("cluster.aggregates_topic: the demo is one instance"), std::string::npos)
        << command << ": " << out;
  }
  std::remove(path.c_str());
}

TEST(Config, ShippedExampleFilesAreValidAndDocumentTheDefaults) {
  for (const char* name : {"seismo.toml"}) {
    auto c = LoadConfig(std::string(SEISMO_SOURCE_DIR) + "/config/" + name);
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->http.answer_memory, DefaultAnswerMemory(*c)) << name << " leaves it unset";
  }
}

}  // namespace
}  // namespace seismo

namespace seismo {
namespace {

TEST(ConfigAlerts, DefaultsMatchSpec) {
  auto c = ParseConfig("", "test.toml");
  ASSERT_TRUE(c);
  const AlertOptions& a = c->alerts;
  EXPECT_EQ(a.new_build_days, 7);
  EXPECT_EQ(a.baseline_builds, 3);
  EXPECT_EQ(a.min_count, 10);
  EXPECT_DOUBLE_EQ(a.min_ratio, 2.0);
  EXPECT_DOUBLE_EQ(a.alpha, 0.001);
  EXPECT_EQ(a.min_new_count, 20);
  EXPECT_EQ(a.min_installs, 5);
  EXPECT_EQ(a.for_evaluations, 2);
  EXPECT_TRUE(a.age_matched);
  EXPECT_EQ(a.burst_window, std::chrono::hours(1));
  EXPECT_EQ(a.burst_baseline, std::chrono::hours(24));
  EXPECT_EQ(a.multiple_testing, MultipleTesting::kBonferroni);
  EXPECT_EQ(a.min_baseline_builds, 2);
  EXPECT_EQ(a.overdispersion, Overdispersion::kEstimate);
}

TEST(ConfigAlerts, ReadsEveryKey) {
  auto c = ParseConfig(R"(
[alerts]
interval = "30s"
new_build_days = 3
baseline_builds = 5
min_baseline_builds = 3
min_baseline_usage_hours = 12.5
per_os = true
exposure = "crash_share"
age_matched = false
min_count = 4
min_ratio = 1.5
alpha = 0.01
min_new_count = 8
min_installs = 2
for = 3
resolve_after = 4
burst_window = "30m"
burst_baseline = "12h"
multiple_testing = "bh"
overdispersion = "none"
log_file = "/tmp/a.jsonl"
webhook_url = "http://127.0.0.1:9/x"
webhook_timeout = "2s"
webhook_retries = 1
kafka_topic = "seismo.alerts"
)", "test.toml");
  ASSERT_TRUE(c) << c.error().message();
  const AlertOptions& a = c->alerts;
  EXPECT_EQ(a.interval, std::chrono::seconds(30));
  EXPECT_EQ(a.new_build_days, 3);
  EXPECT_EQ(a.baseline_builds, 5);
  EXPECT_EQ(a.min_baseline_builds, 3);
  EXPECT_DOUBLE_EQ(a.min_baseline_usage_hours, 12.5);
  EXPECT_TRUE(a.per_os);
  EXPECT_EQ(a.exposure, ExposureMode::kCrashShare);
  EXPECT_FALSE(a.age_matched);
  EXPECT_EQ(a.min_count, 4);
  EXPECT_DOUBLE_EQ(a.min_ratio, 1.5);
  EXPECT_DOUBLE_EQ(a.alpha, 0.01);
  EXPECT_EQ(a.min_new_count, 8);
  EXPECT_EQ(a.min_installs, 2);
  EXPECT_EQ(a.for_evaluations, 3);
  EXPECT_EQ(a.resolve_after, 4);
  EXPECT_EQ(a.burst_window, std::chrono::minutes(30));
  EXPECT_EQ(a.burst_baseline, std::chrono::hours(12));
  EXPECT_EQ(a.multiple_testing, MultipleTesting::kBh);
  EXPECT_EQ(a.overdispersion, Overdispersion::kNone);
  EXPECT_EQ(a.log_file, "/tmp/a.jsonl");
  EXPECT_EQ(a.webhook_url, "http://127.0.0.1:9/x");
  EXPECT_EQ(a.webhook_timeout, std::chrono::seconds(2));
  EXPECT_EQ(a.webhook_retries, 1);
  EXPECT_EQ(a.kafka_topic, "seismo.alerts");
}

TEST(ConfigAlerts, ErrorsNameTheKey) {
  auto bad = [](const std::string& text, const std::string& fragment) {
    auto c = ParseConfig(text, "test.toml");
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().message().find(fragment), std::string::npos) << c.error().message();
  };
  bad("[alerts]\nmin_ratio = 0.5\n", "test.toml: alerts.min_ratio: 0.5 is out of range");
  bad("[alerts]\nalpha = 0.9\n", "alerts.alpha");
  bad("[alerts]\nexposure = \"pings\"\n", "alerts.exposure: \"pings\" is not one of");
  bad("[alerts]\nmultiple_testing = \"holm\"\n", "alerts.multiple_testing");
  bad("[alerts]\noverdispersion = \"quasi\"\n", "alerts.overdispersion: \"quasi\" is not one of");
  bad("[alerts]\nmin_baseline_builds = 0\n", "alerts.min_baseline_builds: 0 is out of range");
  bad("[alerts]\nper_os = 1\n", "alerts.per_os: expected true or false");
  bad("[alerts]\nfor = 0\n", "alerts.for: 0 is out of range");
  bad("[alerts]\nwebhook_url = \"ftp://x\"\n", "alerts.webhook_url: must start with http");
  bad("[alerts]\nthreshold = 3\n", "alerts.threshold: unknown key");
  bad("[alerts]\nburst_window = \"soon\"\n", "alerts.burst_window");
}

TEST(ConfigAlerts, DocumentedExampleParses) {
  auto c = LoadConfig(std::string(SEISMO_SOURCE_DIR) + "/config/seismo.toml");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->alerts.min_count, AlertOptions{}.min_count);
  EXPECT_EQ(c->alerts.interval, AlertOptions{}.interval);
}

}  // namespace
}  // namespace seismo
