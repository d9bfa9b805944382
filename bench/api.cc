// seismo_bench api --seconds S --series N [--no-warm] FILE...
//
//   producer thread ──Kafka (mock cluster)──> daemon (as `seismo run`) ──> HTTP server
//     N series first, then FILE... over and over, the backlog kept under kBacklogBytes
//   load thread:      200 requests/s over the dashboard's endpoints, open loop
//   freshness thread: a marker document (a hang with a stack of its own) produced, then
//                     asked for until an answer counts it; the next marker after that
//
// Latency is measured from when a request was due, so a slow answer delays the ones
// behind it and counts in their latency too (no coordinated omission). The load and
// freshness threads run on the last core and the daemon on the others when there are
// three or more; with two, the daemon keeps both (pinning it to one would halve the
// ingest the load runs beside) and only the load threads are pinned.
#include "api.h"

#include <curl/curl.h>
#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <string_view>
#include <thread>

#include "common.h"
#include "seismo/app/config.h"
#include "seismo/app/daemon.h"
#include "seismo/core/hash.h"
#include "seismo/core/time.h"
#include "seismo/http/server.h"
#include "seismo/ingest/kafka_producer.h"
#include "seismo/ingest/mock_cluster.h"
#include "seismo/signature/generator.h"
#include "series_docs.h"

namespace seismo::bench {
namespace {

using std::chrono::milliseconds;

constexpr int kPartitions = 16;                // per topic; the mock keeps 5 MiB per partition
constexpr uint64_t kBacklogBytes = 24u << 20;  // produced and not yet read by the daemon
constexpr const char* kFreshTopic = "bench.fresh";
constexpr auto kRequestInterval = std::chrono::microseconds(5000);  // 200 requests/s
constexpr double kFreshnessGiveUpS = 30;
// At 10^6 series the warm-up keeps its hang rows (~145 MB), the flame graph's stack order
// (~165 MB) and the /hangs groups (~210 MB) beside one answer and one request (~155 MB
// each); with 512 MiB it could keep only the rows, and every round sorted its stacks.
constexpr uint64_t kAnswerMemory = 1024ull << 20;

// Two views with a filter a user picked (an OS, a thread), which the warm-up does not build by
// default: it builds them as views in use (ADR 0035).
const std::vector<std::string> kFilteredPaths = {"/api/v1/hangs?os=Windows_NT",
                                                 "/api/v1/hangs/flamegraph?thread=Gecko"};
// The dashboard's first requests with no filter set, the endpoints it polls, and those.
const std::vector<std::string> kPaths = [] {
  std::vector<std::string> paths = {"/api/v1/status",
                                    "/api/v1/builds?limit=200",
                                    "/api/v1/builds",
                                    "/api/v1/hangs",
                                    "/api/v1/hangs?by=thread",
                                    "/api/v1/hangs?by=build_date&limit=25",
                                    "/api/v1/hangs/timeseries",
                                    "/api/v1/hangs/flamegraph",
                                    "/api/v1/crashes/top",
                                    "/api/v1/crashes/timeseries",
                                    "/api/v1/releases?channel=release",
                                    "/api/v1/alerts"};
  paths.insert(paths.end(), kFilteredPaths.begin(), kFilteredPaths.end());
  return paths;
}();

void PinThisThread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) Die("cannot pin a thread");
}

// The creation time of the corpus' first document: the series and markers are made at
// that time, so they neither end the corpus' windows nor arrive late.
std::string FirstCreationDate(const Corpus& corpus) {
  constexpr std::string_view kField = "\"creationDate\":\"";
  for (size_t i = 0; i < corpus.docs.size(); ++i) {
    std::string_view doc = corpus.doc(i);
    size_t at = doc.find(kField);
    if (at == std::string_view::npos) continue;
    at += kField.size();
    return std::string(doc.substr(at, doc.find('"', at) - at));
  }
  Die("no document of the corpus has a creationDate");
}

size_t Discard(char*, size_t size, size_t n, void* body) {
  static_cast<std::string*>(body)->append(size * n, ' ');
  return size * n;
}
size_t Keep(char* data, size_t size, size_t n, void* body) {
  static_cast<std::string*>(body)->append(data, size * n);
  return size * n;
}

class Client {
 public:
  explicit Client(bool keep_body) : curl_(curl_easy_init()) {
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, keep_body ? Keep : Discard);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &body_);
    curl_easy_setopt(curl_, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, 10000L);
  }
  ~Client() { curl_easy_cleanup(curl_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  // The status code (0 when the request failed).
  long Get(const std::string& url) {
    body_.clear();
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    if (curl_easy_perform(curl_) != CURLE_OK) return 0;
    long code = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &code);
    return code;
  }
  const std::string& body() const { return body_; }

 private:
  CURL* curl_;
  std::string body_;
};

struct LoadResult {
  std::vector<std::vector<double>> latency_ms{kPaths.size()};  // from when each was due
  std::vector<std::vector<double>> service_ms{kPaths.size()};  // from when each was sent
  std::vector<double> first_after_publish_ms;
  std::vector<uint64_t> errors_by_path = std::vector<uint64_t>(kPaths.size());
  std::vector<long> last_error_code = std::vector<long>(kPaths.size());
  uint64_t errors = 0, late = 0, answer_bytes = 0;
  double seconds = 0;  // from the first request due to the last answer
};

// Open loop at 200 requests/s over kPaths, in turn.
LoadResult RunLoad(const Daemon& daemon, const std::string& base, double seconds) {
  LoadResult r;
  Client client(false);
  std::vector<const Snapshot*> seen(kPaths.size(), nullptr);
  const auto t0 = Clock::now();
  for (size_t i = 0; Since(t0) < seconds; ++i) {
    const auto due = t0 + i * kRequestInterval;
    if (Clock::now() < due) {
      std::this_thread::sleep_until(due);
    } else {
      ++r.late;
    }
    const size_t p = i % kPaths.size();
    const Snapshot* published = daemon.snapshot().get();
    const bool first = published != seen[p];
    seen[p] = published;
    const auto start = Clock::now();
    if (const long code = client.Get(base + kPaths[p]); code != 200) {
      ++r.errors;
      ++r.errors_by_path[p];
      r.last_error_code[p] = code;
    }
    const auto end = Clock::now();
    r.answer_bytes += client.body().size();
    r.latency_ms[p].push_back(std::chrono::duration<double, std::milli>(end - due).count());
    r.service_ms[p].push_back(std::chrono::duration<double, std::milli>(end - start).count());
    if (first) r.first_after_publish_ms.push_back(r.latency_ms[p].back());
  }
  r.seconds = Since(t0);
  return r;
}

struct FreshnessResult {
  std::vector<double> seconds;  // produce to the first answer that counts the marker
  uint64_t never = 0;           // markers no answer counted within kFreshnessGiveUpS
  uint64_t probes = 0;
  // Produce to the first snapshot with its default answers built that holds the marker:
  // from then on the dashboard's default views count it, and SSE has announced it.
  std::vector<double> default_seconds;
  uint64_t default_never = 0;  // markers still missing there when the run ended
};

// `in_default_views(leaf)`: whether the snapshot the default answers are served from holds
// the marker whose stack ends in `leaf`.
FreshnessResult RunFreshness(KafkaProducer& producer, const std::string& base, std::string_view when,
                             double seconds,
                             const std::function<bool(const std::string&)>& in_default_views) {
  FreshnessResult r;
  Client client(true);
  std::vector<std::pair<std::string, Clock::time_point>> waiting;  // for the default views
  auto check_default_views = [&] {
    std::erase_if(waiting, [&](const auto& m) {
      if (!in_default_views(m.first)) return false;
      r.default_seconds.push_back(std::chrono::duration<double>(Clock::now() - m.second).count());
      return true;
    });
  };
  const auto t0 = Clock::now();
  for (size_t i = 0; Since(t0) < seconds; ++i) {
    const std::string leaf = "BenchFresh" + std::to_string(i);
    const std::string doc = BhrPing(1'000'000'000 + i, when, {leaf});
    const std::string url = base + "/api/v1/hangs?source=bhr&window=all&signature=" + leaf;
    const auto produced = Clock::now();
    if (Status s = producer.Produce(kFreshTopic, "", doc, 0); !s.ok()) Die(s.message());
    if (Status s = producer.Flush(std::chrono::seconds(10)); !s.ok()) Die(s.message());
    waiting.emplace_back(leaf, produced);
    bool counted = false;
    while (!counted && Since(produced) < kFreshnessGiveUpS) {
      ++r.probes;
      counted = client.Get(url) == 200 && client.body().find("\"hang_count\":1,") != std::string::npos;
      check_default_views();
      if (counted) {
        r.seconds.push_back(Since(produced));
      } else {
        std::this_thread::sleep_for(milliseconds(5));
      }
    }
    if (!counted) ++r.never;
  }
  // The last markers' default views, for as long as the first ones took at most.
  const auto deadline = Clock::now() + std::chrono::duration<double>(kFreshnessGiveUpS);
  while (!waiting.empty() && Clock::now() < deadline) {
    check_default_views();
    std::this_thread::sleep_for(milliseconds(5));
  }
  r.default_never = waiting.size();
  return r;
}

}  // namespace

std::optional<ApiArgs> ParseApiArgs(const std::vector<std::string>& args) {
  ApiArgs a;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    const bool has_value = i + 1 < args.size();
    if (s == "--seconds" && has_value) {
      a.seconds = std::stod(args[++i]);
    } else if (s == "--series" && has_value) {
      a.series = std::stoul(args[++i]);
    } else if (s == "--no-warm") {
      a.warm = false;
    } else if (!s.starts_with("--")) {
      a.files.push_back(s);
    } else {
      return std::nullopt;
    }
  }
  if (a.files.empty() || a.seconds <= 0) return std::nullopt;
  return a;
}

int Api(const ApiArgs& a) {
  spdlog::set_level(spdlog::level::warn);
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const int load_cpu = cores - 1;
  std::vector<int> daemon_cpus;
  for (int c = 0; c < (cores >= 3 ? cores - 1 : cores); ++c) daemon_cpus.push_back(c);
  PinThisThread(daemon_cpus);  // every thread the daemon starts inherits it

  const Corpus corpus = LoadCorpus(a.files);
  const std::string when = FirstCreationDate(corpus);
  const std::vector<std::string> series_docs = SeriesDocs(a.series, when);

  auto cluster = MockCluster::Create(1);
  if (!cluster) Die(cluster.error().message());
  MockCluster& mock = **cluster;
  const std::vector<std::string> topics = {"telemetry.main", "telemetry.bhr", "telemetry.crash",
                                           "socorro.processed", kFreshTopic};
  for (const std::string& t : topics) {
    if (Status s = mock.CreateTopic(t, t == kFreshTopic ? 1 : kPartitions); !s.ok()) Die(s.message());
  }

  auto gen = Signatures();
  Config config;
  config.kafka.brokers = mock.bootstrap_servers();
  config.kafka.group_id = "seismo-bench-api";
  config.kafka.topics = topics;
  config.kafka.topic_kinds = {{kFreshTopic, "bhr"}};
  config.kafka.properties = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "500"}};
  config.ingest.threads = 2;
  config.aggregate.shards = 2;
  config.aggregate.max_series = a.series + 200'000;  // per shard: no series folds into "(other)"
  config.aggregate.memory_limit = 16ull << 30;
  HttpServerOptions http_options;  // [http] defaults, as `seismo run` has them
  http_options.listen = "127.0.0.1:0";
  // Sized for the state, as an operator with 10^6 series sets [http] answer_memory: an
  // answer's working memory is estimated at 128 B per series (130 MB at 10^6), and the
  // publisher builds nothing ahead when one answer would take over half of it (ADR 0025).
  http_options.answer_memory = kAnswerMemory;
  http_options.warm_nice = config.ingest.nice;  // as `seismo run` sets it
  SystemClock clock;
  Daemon daemon(config, gen.get(), &clock);
  HttpServer server;
  if (Status s = daemon.Start(); !s.ok()) Die(s.message());
  if (Status s = server.Start(http_options, daemon); !s.ok()) Die(s.message());
  if (a.warm) {
    daemon.SetPublishHook([&server](const std::shared_ptr<const Snapshot>& snap) { server.Published(snap); });
  }

  KafkaProducerOptions po;
  po.brokers = mock.bootstrap_servers();
  auto load_producer = KafkaProducer::Create(po);
  auto fresh_producer = KafkaProducer::Create(po);
  if (!load_producer || !fresh_producer) Die("cannot create a producer");

  // The producer: the series, then the corpus over and over, never more than
  // kBacklogBytes ahead of what the daemon has read.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> produced_docs{0};
  std::thread producer([&] {
    std::map<std::string, int> next;
    uint64_t produced_bytes = 0;
    auto produce = [&](std::string_view doc) {
      const std::string topic = TopicOf(doc);
      if (Status s = (*load_producer)->Produce(topic, "", doc, next[topic]++ % kPartitions); !s.ok()) {
        Die(s.message());
      }
      produced_bytes += doc.size();
      produced_docs.fetch_add(1, std::memory_order_relaxed);
      while (produced_bytes > daemon.counts().bytes + kBacklogBytes && !stop.load()) {
        std::this_thread::sleep_for(milliseconds(1));
      }
    };
    for (const std::string& d : series_docs) produce(d);
    for (size_t i = 0; !stop.load(); ++i) produce(corpus.doc(i % corpus.docs.size()));
  });

  // The series are live once a published snapshot holds them all, and (with the warm-up)
  // once one whose default answers are built does: the steady state, not the start. That
  // snapshot must hold the corpus' release channel too: the warm-up builds the Releases view
  // of the channels a snapshot holds, and one made before the corpus' main pings counted
  // has none, so its first requests would be built on request.
  auto has_release_channel = [](const Snapshot& snap) {
    for (const SeriesData* s : snap.table(Table::kBuildUsage)) {
      if (snap.Text(s->key[build_field::kChannel]) == "release") return true;
    }
    return false;
  };
  const auto t_preload = Clock::now();
  while (true) {
    auto snap = a.warm ? server.warmed() : daemon.snapshot();
    if (snap && snap->table(Table::kHangs).size() >= a.series &&
        daemon.counts().documents >= series_docs.size() + 1 && has_release_channel(*snap)) {
      break;
    }
    if (Since(t_preload) > 900)
      Die("the series, or the corpus' release channel, were not in a warmed snapshot after 900 s");
    std::this_thread::sleep_for(milliseconds(50));
  }
  const double preload_s = Since(t_preload);
  const size_t live_series = [&] {
    auto snap = daemon.snapshot();
    size_t n = 0;
    for (size_t t = 0; t < kTableCount; ++t) n += snap->table(static_cast<Table>(t)).size();
    return n;
  }();
  std::fprintf(stderr, "api: %zu live series after %.1f s\n", live_series, preload_s);

  const std::string base = server.url();
  // The dashboard has been open a while: each view asked for once, and (with the warm-up) a
  // round since has built the views in use over its snapshot (ADR 0035). The run measures
  // that steady state, not a user's first pick of a filter, which is built on request once.
  if (a.warm) {
    const uint64_t built = server.warm_counts().views_built;
    Client client(false);
    for (const std::string& p : kPaths) client.Get(base + p);
    const auto t_views = Clock::now();
    while (server.warm_counts().views_built < built + kFilteredPaths.size()) {
      if (Since(t_views) > 120) Die("the views in use were not built within 120 s");
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
  const RecordCounts c0 = daemon.counts();
  const AnswerWarmer::Counts warm0 = server.warm_counts();
  const auto t0 = Clock::now();
  LoadResult load;
  FreshnessResult fresh;
  std::thread load_thread([&] {
    PinThisThread({load_cpu});
    load = RunLoad(daemon, base, a.seconds);
  });
  std::thread fresh_thread([&] {
    PinThisThread({load_cpu});
    fresh = RunFreshness(**fresh_producer, base, when, a.seconds, [&](const std::string& leaf) {
      // Without the warm-up, the default answers read the newest snapshot.
      const std::shared_ptr<const Snapshot> snap = a.warm ? server.warmed() : daemon.snapshot();
      if (!snap) return false;
      for (const SeriesData* s :
           snap->RowsWithTextHash(Table::kHangs, hang_field::kSignature, Hash64(leaf))) {
        if (snap->Text(s->key[hang_field::kSignature]) == leaf) return true;
      }
      return false;
    });
  });
  load_thread.join();
  fresh_thread.join();
  const double elapsed = Since(t0);
  const RecordCounts c1 = daemon.counts();
  const AnswerWarmer::Counts warm1 = server.warm_counts();
  const ServiceStatus st = daemon.status();
  stop = true;
  producer.join();
  daemon.SetPublishHook(nullptr);
  server.Stop();
  daemon.Stop();

  std::vector<double> all_latency, all_service;
  uint64_t requests = 0;
  for (size_t p = 0; p < kPaths.size(); ++p) {
    const auto& lat = load.latency_ms[p];
    all_latency.insert(all_latency.end(), lat.begin(), lat.end());
    all_service.insert(all_service.end(), load.service_ms[p].begin(), load.service_ms[p].end());
    requests += lat.size();
    std::fprintf(stderr, "api: %-38s p50 %7.2f ms  p99 %7.2f ms  service p99 %7.2f ms\n", kPaths[p].c_str(),
                 Percentile(lat, 0.5), Percentile(lat, 0.99), Percentile(load.service_ms[p], 0.99));
    Line("api_endpoint")
        .Str("path", kPaths[p])
        .Int("series", live_series)
        .Bool("warm", a.warm)
        .Int("requests", lat.size())
        .Int("errors", load.errors_by_path[p])
        .Int("last_error_status", static_cast<uint64_t>(load.last_error_code[p]))
        .Num("p50_ms", Percentile(lat, 0.50), 2)
        .Num("p99_ms", Percentile(lat, 0.99), 2)
        .Num("p999_ms", Percentile(lat, 0.999), 2)
        .Num("service_p99_ms", Percentile(load.service_ms[p], 0.99), 2)
        .Print();
  }
  Line("api_latency")
      .Int("series", live_series)
      .Bool("warm", a.warm)
      .Int("cores", static_cast<uint64_t>(cores))
      .Str("load_generator_cpus", std::to_string(load_cpu))
      .Str("daemon_cpus", cores >= 3 ? "0-" + std::to_string(cores - 2) : "all")
      .Int("answer_memory_mb", kAnswerMemory >> 20)
      .Num("requests_per_s", static_cast<double>(requests) / load.seconds)
      .Int("requests", requests)
      .Int("errors", load.errors)
      .Int("late_sends", load.late)
      .Num("p50_ms", Percentile(all_latency, 0.50), 2)
      .Num("p99_ms", Percentile(all_latency, 0.99), 2)
      .Num("p999_ms", Percentile(all_latency, 0.999), 2)
      .Num("max_ms", Percentile(all_latency, 1.0), 2)
      .Int("first_after_publish", load.first_after_publish_ms.size())
      .Num("first_after_publish_p99_ms", Percentile(load.first_after_publish_ms, 0.99), 2)
      .Num("service_p99_ms", Percentile(all_service, 0.99), 2)
      .Num("mean_answer_kb", static_cast<double>(load.answer_bytes) / 1024.0 / static_cast<double>(requests),
           1)
      .Int("freshness_markers", fresh.seconds.size())
      .Int("freshness_never_counted", fresh.never)
      .Num("freshness_p50_s", Percentile(fresh.seconds, 0.50), 3)
      .Num("freshness_p99_s", Percentile(fresh.seconds, 0.99), 3)
      .Num("freshness_max_s", Percentile(fresh.seconds, 1.0), 3)
      .Int("default_views_markers", fresh.default_seconds.size())
      .Int("default_views_never", fresh.default_never)
      .Num("default_views_freshness_p50_s", Percentile(fresh.default_seconds, 0.50), 3)
      .Num("default_views_freshness_p99_s", Percentile(fresh.default_seconds, 0.99), 3)
      // The warm-up's rounds during the load, and how many carried each structure from the
      // round before (the rest made it anew: stream time crossed a bucket, or the budget).
      .Int("warm_rounds", warm1.rounds - warm0.rounds)
      .Num("warm_round_cpu_ms",
           (warm1.cpu_ms - warm0.cpu_ms) / std::max<double>(1, warm1.rounds - warm0.rounds), 1)
      .Num("warm_round_wall_ms",
           (warm1.wall_ms - warm0.wall_ms) / std::max<double>(1, warm1.rounds - warm0.rounds), 1)
      .Int("warm_rows_updated", warm1.rows_updated - warm0.rows_updated)
      .Int("warm_index_carried", warm1.index_carried - warm0.index_carried)
      .Int("warm_builds_carried", warm1.builds_carried - warm0.builds_carried)
      .Int("warm_views_built", warm1.views_built - warm0.views_built)
      .Int("warm_views_from_kept", warm1.views_from_kept - warm0.views_from_kept)
      .Int("warm_views_brought", warm1.views_brought - warm0.views_brought)
      .Num("warm_views_cpu_ms",
           (warm1.views_cpu_ms - warm0.views_cpu_ms) / std::max<double>(1, warm1.rounds - warm0.rounds), 1)
      .Int("warm_stacks_carried", warm1.stacks_carried - warm0.stacks_carried)
      .Int("warm_groups_updated", warm1.groups_updated - warm0.groups_updated)
      .Int("warm_buckets_carried", warm1.buckets_carried - warm0.buckets_carried)
      .Int("warm_build_dates_updated", warm1.build_dates_updated - warm0.build_dates_updated)
      .Int("warm_flame_sums_read", warm1.flame_sums_read - warm0.flame_sums_read)
      .Num("ingest_mb_per_s", static_cast<double>(c1.bytes - c0.bytes) / 1e6 / elapsed)
      .Num("ingest_docs_per_s", static_cast<double>(c1.documents - c0.documents) / elapsed, 0)
      .Int("lost_offsets", st.lost_offsets)
      .Num("preload_s", preload_s, 1)
      .Num("target_p99_ms", 10, 0)
      .Num("target_freshness_p99_s", 2, 0)
      .Print();
  return 0;
}

}  // namespace seismo::bench
