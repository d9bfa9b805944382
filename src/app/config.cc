#include "seismo/app/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "seismo/aggregate/stack_memo.h"
#include "seismo/core/time.h"

namespace seismo {
namespace {

// Reads keys of one TOML table, remembering which were read so that unknown
// keys can be reported. The first problem found is kept in *error.
class Section {
 public:
  Section(const toml::table* table, std::string prefix, std::string* error)
      : table_(table), prefix_(std::move(prefix)), error_(error) {}

  const toml::node* Get(std::string_view key) {
    seen_.insert(std::string(key));
    return table_ == nullptr ? nullptr : table_->get(key);
  }

  void Fail(std::string_view key, const std::string& problem) {
    if (error_->empty()) *error_ = fmt::format("{}: {}", Name(key), problem);
  }

  std::string Name(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  }

  void Str(std::string_view key, std::string& out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return;
    if (auto v = n->value<std::string>(); v && n->is_string()) {
      out = *v;
    } else {
      Fail(key, "expected a string");
    }
  }

  template <typename T>
  void Int(std::string_view key, T& out, int64_t min, int64_t max) {
    const toml::node* n = Get(key);
    if (n == nullptr) return;
    if (!n->is_integer()) return Fail(key, "expected an integer");
    int64_t v = *n->value<int64_t>();
    if (v < min || v > max) return Fail(key, fmt::format("{} is out of range [{}, {}]", v, min, max));
    out = static_cast<T>(v);
  }

  void Bool(std::string_view key, bool& out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return;
    if (!n->is_boolean()) return Fail(key, "expected true or false");
    out = *n->value<bool>();
  }

  void Double(std::string_view key, double& out, double min, double max) {
    const toml::node* n = Get(key);
    if (n == nullptr) return;
    if (!n->is_floating_point() && !n->is_integer()) return Fail(key, "expected a number");
    double v = *n->value<double>();
    if (!(v >= min && v <= max)) return Fail(key, fmt::format("{} is out of range [{}, {}]", v, min, max));
    out = v;
  }

  void Duration(std::string_view key, std::chrono::milliseconds& out, bool allow_zero = false) {
    std::string text;
    const toml::node* n = Get(key);
    if (n == nullptr) return;
    if (!n->is_string()) return Fail(key, "expected a duration string such as \"60s\", \"1h\", \"7d\"");
    text = *n->value<std::string>();
    auto d = ParseDuration(text);
    if (!d) return Fail(key, fmt::format("\"{}\" is not a duration (use ms, s, m, h or d)", text));
    if (!allow_zero && d->count() == 0) return Fail(key, "must be greater than zero");
    out = *d;
  }

  void StrList(std::string_view key, std::vector<std::string>& out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return;
    const toml::array* arr = n->as_array();
    if (arr == nullptr) return Fail(key, "expected an array of strings");
    std::vector<std::string> values;
    for (const toml::node& e : *arr) {
      if (!e.is_string()) return Fail(key, "expected an array of strings");
      values.push_back(*e.value<std::string>());
    }
    out = std::move(values);
  }

  void StrMap(std::string_view key, std::map<std::string, std::string>& out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return;
    const toml::table* t = n->as_table();
    if (t == nullptr) return Fail(key, "expected a table of strings");
    for (const auto& [k, v] : *t) {
      if (!v.is_string()) return Fail(std::string(key) + "." + std::string(k.str()), "expected a string");
      out[std::string(k.str())] = *v.value<std::string>();
    }
  }

  template <typename E>
  void Enum(std::string_view key, E& out, std::initializer_list<std::pair<std::string_view, E>> names) {
    std::string text;
    const toml::node* n = Get(key);
    if (n == nullptr) return;
    if (!n->is_string()) return Fail(key, "expected a string");
    text = *n->value<std::string>();
    std::string allowed;
    for (const auto& [name, value] : names) {
      if (name == text) {
        out = value;
        return;
      }
      allowed += allowed.empty() ? "" : ", ";
      allowed += fmt::format("\"{}\"", name);
    }
    Fail(key, fmt::format("\"{}\" is not one of {}", text, allowed));
  }

  Section Sub(std::string_view key) {
    const toml::node* n = Get(key);
    const toml::table* t = nullptr;
    if (n != nullptr) {
      t = n->as_table();
      if (t == nullptr) Fail(key, "expected a table");
    }
    return Section(t, Name(key), error_);
  }

  // Reports the first key that nobody read.
  void Finish() {
    if (table_ == nullptr) return;
    for (const auto& [k, v] : *table_) {
      if (!seen_.count(std::string(k.str()))) {
        Fail(k.str(), prefix_.empty() ? "unknown section or key" : "unknown key");
        return;
      }
    }
  }

 private:
  const toml::table* table_;
  std::string prefix_;
  std::string* error_;
  std::set<std::string> seen_;
};

void ReadKafka(Section s, KafkaConfig& c) {
  s.Str("brokers", c.brokers);
  s.Str("group_id", c.group_id);
  s.StrList("topics", c.topics);
  s.StrMap("topic_kinds", c.topic_kinds);
  for (const auto& [topic, kind] : c.topic_kinds) {
    if (kind != "main" && kind != "bhr" && kind != "crash") {
      s.Fail("topic_kinds." + topic, fmt::format("\"{}\" is not one of \"main\", \"bhr\", \"crash\"", kind));
    }
  }
  s.StrMap("properties", c.properties);
  s.Finish();
}

void ReadHangs(Section s, HangOptions& h) {
  s.Int("min_ms", h.min_ms, 0, 1'000'000'000);
  s.Int("max_ms", h.max_ms, 1, 1'000'000'000);
  s.Int("bhr_max_ms", h.bhr_max_ms, 1, 1'000'000'000);
  s.Enum("weighting", h.weighting,
         {{"upper", HangWeighting::kUpper}, {"lower", HangWeighting::kLower}, {"mid", HangWeighting::kMid}});
  s.Enum("child_payloads", h.child_payloads,
         {{"shutdown_only", ChildPayloads::kShutdownOnly},
          {"all", ChildPayloads::kAll},
          {"none", ChildPayloads::kNone}});
  s.Enum("signature", h.signature,
         {{"innermost", HangSignatureMode::kInnermost},
          {"innermost_label", HangSignatureMode::kInnermostLabel}});
  s.StrList("channels", h.channels);
  s.StrList("os_names", h.os_names);
  s.StrList("threads", h.threads);
  s.StrList("processes", h.processes);
  if (h.min_ms >= h.max_ms) s.Fail("max_ms", fmt::format("must be greater than min_ms ({})", h.min_ms));
  if (h.min_ms >= h.bhr_max_ms) {
    s.Fail("bhr_max_ms", fmt::format("must be greater than min_ms ({})", h.min_ms));
  }
  s.Finish();
}

void ReadAggregate(Section s, AggregateConfig& a) {
  s.Int("shards", a.shards, 0, 1024);
  s.Duration("bucket", a.bucket);
  std::vector<std::string> windows;
  s.StrList("windows", windows);
  if (!windows.empty()) {
    a.windows.clear();
    for (const std::string& w : windows) {
      auto d = ParseDuration(w);
      if (!d || d->count() == 0) {
        s.Fail("windows", fmt::format("\"{}\" is not a duration (use ms, s, m, h or d)", w));
        break;
      }
      a.windows.push_back(*d);
    }
  }
  s.Duration("retention", a.retention);
  s.Duration("max_clock_skew", a.max_clock_skew, /*allow_zero=*/true);
  s.Int("max_series", a.max_series, 16, 1'000'000'000);
  s.Int("memory_limit", a.memory_limit, 16 << 20, int64_t{1} << 46);
  for (auto w : a.windows) {
    if (w.count() % a.bucket.count() != 0) {
      s.Fail("windows", fmt::format("window {} is not a multiple of the bucket {}", FormatDuration(w),
                                    FormatDuration(a.bucket)));
    }
    if (w > a.retention) {
      s.Fail("windows", fmt::format("window {} is longer than the retention {}", FormatDuration(w),
                                    FormatDuration(a.retention)));
    }
  }
  s.Finish();
}

void ReadAlerts(Section s, AlertOptions& a) {
  s.Duration("interval", a.interval);
  s.Int("new_build_days", a.new_build_days, 1, 365);
  s.Int("baseline_builds", a.baseline_builds, 1, 100);
  s.Int("min_baseline_builds", a.min_baseline_builds, 1, 100);
  s.Double("min_baseline_usage_hours", a.min_baseline_usage_hours, 0, 1e12);
  s.Bool("per_os", a.per_os);
  s.Enum("exposure", a.exposure,
         {{"usage_hours", ExposureMode::kUsageHours}, {"crash_share", ExposureMode::kCrashShare}});
  s.Bool("age_matched", a.age_matched);
  s.Int("min_count", a.min_count, 1, int64_t{1} << 40);
  s.Double("min_ratio", a.min_ratio, 1.0, 1e9);
  s.Double("alpha", a.alpha, 1e-300, 0.5);
  s.Int("min_new_count", a.min_new_count, 1, int64_t{1} << 40);
  s.Int("min_installs", a.min_installs, 0, int64_t{1} << 40);
  s.Int("for", a.for_evaluations, 1, 1000);
  s.Int("resolve_after", a.resolve_after, 1, 1000);
  s.Duration("burst_window", a.burst_window);
  s.Duration("burst_baseline", a.burst_baseline);
  s.Enum("multiple_testing", a.multiple_testing,
         {{"bonferroni", MultipleTesting::kBonferroni},
          {"bh", MultipleTesting::kBh},
          {"none", MultipleTesting::kNone}});
  s.Enum("overdispersion", a.overdispersion,
         {{"estimate", Overdispersion::kEstimate}, {"none", Overdispersion::kNone}});
  s.Str("log_file", a.log_file);
  s.Str("webhook_url", a.webhook_url);
  s.Duration("webhook_timeout", a.webhook_timeout);
  s.Int("webhook_retries", a.webhook_retries, 0, 100);
  s.Str("kafka_topic", a.kafka_topic);
  if (!a.webhook_url.empty() && a.webhook_url.rfind("http://", 0) != 0 &&
      a.webhook_url.rfind("https://", 0) != 0) {
    s.Fail("webhook_url", "must start with http:// or https://");
  }
  s.Finish();
}

// Kafka's rule for topic names: 1-249 of [a-zA-Z0-9._-], not "." or "..".
bool IsTopicName(std::string_view t) {
  if (t.empty() || t.size() > 249 || t == "." || t == "..") return false;
  return std::all_of(t.begin(), t.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '_' || ch == '-';
  });
}

void ReadCluster(Section s, const Config& c, ClusterConfig& cluster) {
  s.Str("aggregates_topic", cluster.aggregates_topic);
  s.Str("instance_id", cluster.instance_id);
  s.Duration("publish_interval", cluster.publish_interval);
  const std::string& topic = cluster.aggregates_topic;
  if (!topic.empty()) {
    if (!IsTopicName(topic)) {
      s.Fail("aggregates_topic",
             fmt::format("\"{}\" is not a Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)", topic));
    } else if (std::find(c.kafka.topics.begin(), c.kafka.topics.end(), topic) != c.kafka.topics.end() ||
               topic == c.ingest.dead_letter_topic || topic == c.alerts.kafka_topic) {
      s.Fail("aggregates_topic", fmt::format("\"{}\" is also a source, dead-letter or alert topic", topic));
    } else if (c.kafka.topics.empty() || !c.sources.files.empty()) {
      s.Fail("aggregates_topic",
             "needs Kafka sources only ([kafka] topics set, [sources] files empty): "
             "the state is kept per source partition");
    }
  }
  if (cluster.instance_id.size() > 255 ||
      std::any_of(cluster.instance_id.begin(), cluster.instance_id.end(),
                  [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; })) {
    s.Fail("instance_id", "must be at most 255 characters without control characters");
  }
  if (cluster.publish_interval > c.aggregate.retention) {
    s.Fail("publish_interval", "is longer than aggregate.retention");
  }
  s.Finish();
}

}  // namespace

std::string InstanceId(const Config& c, std::string_view host_name) {
  if (!c.cluster.instance_id.empty()) return c.cluster.instance_id;
  const size_t colon = c.http.listen.rfind(':');
  const std::string_view port = colon == std::string::npos
                                    ? std::string_view("8080")
                                    : std::string_view(c.http.listen).substr(colon + 1);
  return fmt::format("{}:{}", host_name, port);
}

Status DemoSupports(const Config& c) {
  if (c.cluster.aggregates_topic.empty()) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{}: cluster.aggregates_topic: the demo is one instance on its own embedded Kafka; unset it, or run "
      "instances of a cluster with `seismo run` (docs/scaling.md)",
      c.path.empty() ? "config" : c.path));
}

AggregateOptions ToAggregateOptions(const Config& c) {
  AggregateOptions o;
  o.bucket_ms = c.aggregate.bucket.count();
  o.windows_ms.clear();
  for (auto w : c.aggregate.windows) o.windows_ms.push_back(w.count());
  o.retention_ms = c.aggregate.retention.count();
  o.max_series = c.aggregate.max_series;
  o.memory_limit = c.aggregate.memory_limit;
  o.fixed_reserve = FixedMemoryReserve(c);
  o.shards = ResolveThreads(c.aggregate.shards);
  return o;
}

PipelineOptions ToPipelineOptions(const Config& c) {
  PipelineOptions po;
  po.parse_threads = ResolveThreads(c.ingest.threads);
  po.shards = ResolveThreads(c.aggregate.shards);
  po.parse = c.parse;
  po.chunk_ring_capacity = c.ingest.queue_chunks;
  po.delta_ring_capacity = c.ingest.queue_chunks;
  po.aggregate = ToAggregateOptions(c);
  po.max_clock_skew_ms = c.aggregate.max_clock_skew.count();
  po.ingest_nice = c.ingest.nice;
  return po;
}

uint64_t FixedMemoryReserve(const Config& c) {
  constexpr uint64_t kMiB = 1 << 20;
  // Code, libraries, siglists, HTTP threads and stacks, and the HTTP answer cache (at
  // most 16 MiB, query/answer_cache.h).
  constexpr uint64_t kBaseline = 80 * kMiB;
  // Per parse thread: its queue of ~1 MiB chunks and as many chunks' worth of deltas
  // on their way to the shards (keys and values: ~1.5x the documents' bytes at
  // most), the largest document held three times (chunk, padded copy) plus
  // simdjson's structural index (4 bytes a byte), and its stack memo (1 MiB).
  const uint64_t per_thread = c.ingest.queue_chunks * kMiB * 5 / 2 +
                              7 * uint64_t{c.ingest.max_document_bytes} + StackMemo::MemoryBytes();
  uint64_t kafka = 0;  // only when consuming: librdkafka's queued.max.messages.kbytes
  if (!c.kafka.topics.empty()) {
    kafka = 65536 * 1024;
    if (auto it = c.kafka.properties.find("queued.max.messages.kbytes"); it != c.kafka.properties.end()) {
      kafka = std::strtoull(it->second.c_str(), nullptr, 10) * 1024;
    }
  }
  // Reading [sources] files: the line reader's buffer, which a line longer than
  // max_document_bytes never grows past (it is cut, ADR 0018).
  const uint64_t reader = c.sources.files.empty() ? 0 : uint64_t{c.ingest.max_document_bytes} + kMiB;
  // API answers in flight ([http] answer_memory, ADR 0025).
  const auto answers = static_cast<uint64_t>(c.http.answer_memory);
  return kBaseline + ResolveThreads(c.ingest.threads) * per_thread + kafka + reader + answers;
}

int64_t DefaultAnswerMemory(const Config& c) {
  // A quarter of what memory_limit leaves after the queues and buffers: API answers are
  // about a quarter of the state they read (ADR 0025: 128 bytes a series against ~500-630),
  // and building the default views ahead needs two answers and the hang rows at once. Never
  // under 32 MiB, the old default; a limit that left room for that still does.
  constexpr int64_t kFloor = 32 << 20;
  const uint64_t others = FixedMemoryReserve(c) - static_cast<uint64_t>(c.http.answer_memory);
  const uint64_t left = c.aggregate.memory_limit > others ? c.aggregate.memory_limit - others : 0;
  return std::max(kFloor, static_cast<int64_t>(left / 4));
}

size_t ResolveThreads(size_t configured) {
  if (configured > 0) return configured;
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

Result<Config> ParseConfig(std::string_view text, const std::string& path) {
  Config c;
  c.path = path;
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return Status::InvalidArgument(
        fmt::format("{}:{}:{}: {}", path, where.line, where.column, e.description()));
  }
  std::string error;
  Section top(&root, "", &error);
  ReadKafka(top.Sub("kafka"), c.kafka);
  {
    Section s = top.Sub("sources");
    s.StrList("files", c.sources.files);
    s.Finish();
  }
  {
    Section s = top.Sub("ingest");
    s.Int("threads", c.ingest.threads, 0, 256);
    s.Int("max_document_bytes", c.ingest.max_document_bytes, 1024, int64_t{1} << 31);
    s.Int("max_depth", c.parse.max_depth, 8, 100000);
    s.Int("queue_chunks", c.ingest.queue_chunks, 1, 65536);
    s.Int("nice", c.ingest.nice, 0, 19);
    s.Str("dead_letter_file", c.ingest.dead_letter_file);
    s.Str("dead_letter_topic", c.ingest.dead_letter_topic);
    s.Duration("shutdown_timeout", c.shutdown_timeout);
    s.Finish();
  }
  ReadAggregate(top.Sub("aggregate"), c.aggregate);
  ReadHangs(top.Sub("hangs"), c.parse.hangs);
  {
    Section s = top.Sub("crashes");
    s.Str("siglists_dir", c.crashes.siglists_dir);
    s.Finish();
  }
  {
    Section s = top.Sub("http");
    s.Str("listen", c.http.listen);
    s.Str("static_dir", c.http.static_dir);
    s.Str("auth_token_file", c.http.auth_token_file);
    s.StrList("cors_origins", c.http.cors_origins);
    s.Int("num_threads", c.http.num_threads, 2, 1024);
    s.Int("max_sse_clients", c.http.max_sse_clients, 0, 512);
    s.Int("max_request_size", c.http.max_request_size, 1024, 1 << 20);
    s.Duration("request_timeout", c.http.request_timeout);
    s.Int("max_answer_bytes", c.http.max_answer_bytes, 64 << 10, int64_t{1} << 30);
    s.Int("max_answer_nodes", c.http.max_answer_nodes, 16, 10'000'000);
    s.Int("answer_memory", c.http.answer_memory, 1 << 20, int64_t{1} << 40);
    s.Str("health_listen", c.http.health_listen);
    if (c.http.max_sse_clients > c.http.num_threads / 2) {
      s.Fail("max_sse_clients",
             fmt::format("{} is more than half of num_threads ({}): API requests need threads too",
                         c.http.max_sse_clients, c.http.num_threads));
    }
    s.Finish();
  }
  ReadAlerts(top.Sub("alerts"), c.alerts);
  {
    Section s = top.Sub("checkpoint");
    s.Str("dir", c.checkpoint.dir);
    s.Duration("interval", c.checkpoint.interval);
    s.Enum("on_corrupt", c.checkpoint.on_corrupt,
           {{"reread", OnCorruptCheckpoint::kReread}, {"wait", OnCorruptCheckpoint::kWait}});
    s.Finish();
  }
  ReadCluster(top.Sub("cluster"), c, c.cluster);
  {
    Section s = top.Sub("log");
    s.Enum("level", c.log.level,
           {{"trace", std::string("trace")},
            {"debug", std::string("debug")},
            {"info", std::string("info")},
            {"warn", std::string("warn")},
            {"error", std::string("error")},
            {"off", std::string("off")}});
    s.Enum("format", c.log.format, {{"text", std::string("text")}, {"json", std::string("json")}});
    s.Finish();
  }
  top.Finish();
  c.parse.max_document_bytes = c.ingest.max_document_bytes;
  if (error.empty() && !root.at_path("http.answer_memory")) c.http.answer_memory = DefaultAnswerMemory(c);
  if (error.empty()) {
    const uint64_t reserve = FixedMemoryReserve(c);
    constexpr uint64_t kMinimum = 32 << 20;  // for the aggregates themselves
    if (c.aggregate.memory_limit < reserve + kMinimum) {
      error = fmt::format(
          "aggregate.memory_limit: {} bytes leave less than 32 MiB for the aggregates after {} MiB of "
          "queues and buffers (80 MiB + ingest.threads x (ingest.queue_chunks x 2.5 MiB + 7 x "
          "ingest.max_document_bytes + 1 MiB) + Kafka's queued.max.messages.kbytes + http.answer_memory); "
          "raise it "
          "to at least {} or "
          "lower those",
          c.aggregate.memory_limit, reserve >> 20, reserve + kMinimum);
    }
  }
  if (!error.empty()) return Status::InvalidArgument(fmt::format("{}: {}", path, error));
  return c;
}

Result<Config> LoadConfig(const std::string& path) {
  if (path.empty()) {
    // No file: every default, [http] answer_memory's too (unset, as in a file without it).
    Config c;
    c.http.answer_memory = DefaultAnswerMemory(c);
    return c;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument(fmt::format("{}: cannot read the file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseConfig(ss.str(), path);
}

}  // namespace seismo
