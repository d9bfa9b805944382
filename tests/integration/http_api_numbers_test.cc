// The API's numbers for every filter, Top Crashers (share, rate, installs, rank
// change), time series and flame graphs, from a real Daemon reading a known
// corpus through [sources] and served by the real HTTP server, against naive
// recomputations: `seismo replay` of the same files (and of each half of the
// crashes alone) and the crash documents themselves.
//
//   10:00 ─ crashes "previous" (400) ─ 10:07        11:20 ─ crashes "now" (400), main, bhr ─ 11:30
//   └──────────── previous 1 h window ─────────────┘└───────────── 1 h window ─────────────┘
//
// The corpus (`seismo generate`) has four channels, ten builds, three OSes,
// several processes, threads and dozens of signatures.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "seismo/app/daemon.h"
#include "seismo/app/replay.h"
#include "seismo/http/server.h"
#include "seismo/signature/generator.h"
#include "support/wait_for.h"
#include "test_scale.h"
#include "unit/http/http_client.h"
#include "unit/query/query_fixture.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
using namespace seismo::testing;
using namespace std::chrono_literals;
using simdjson::dom::element;

std::string Str(element e) {
  std::string_view v;
  return e.get_string().get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
}

// One row of a replay table as dimension -> value ("build_date" derived from build_id).
using Row = std::map<std::string, std::string>;

Row RowOf(element row) {
  Row r;
  for (auto [k, v] : row.get_object()) {
    if (v.is_string()) r[std::string(k)] = Str(v);
  }
  if (!r.count("build_date") && r.count("build_id")) r["build_date"] = r["build_id"].substr(0, 8);
  return r;
}

std::string Escape(std::string_view v) {
  std::string out;
  for (unsigned char c : v)
    out += std::isalnum(c) ? std::string(1, static_cast<char>(c)) : fmt::format("%{:02X}", c);
  return out;
}

// Rows without the filtered dimension ignore the filter (docs/api.md).
bool Passes(const Row& r, const std::string& dim, const std::string& value) {
  auto it = r.find(dim);
  return it == r.end() || it->second == value;
}

class HttpApiNumbers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ =
        new fs::path(fs::path(::testing::TempDir()) / ("seismo_api_numbers_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    Generate("crash", 400, 31, "2026-11-18T10:00:00Z", "crash-previous");
    Generate("crash", 400, 32, "2026-11-18T11:20:00Z", "crash-now");
    Generate("main", 600, 21, "2026-11-18T11:20:00Z", "main");
    Generate("bhr", 600, 22, "2026-11-18T11:20:00Z", "bhr");
    replay_all_ = Replay({"main", "bhr", "crash-previous", "crash-now"}, "all");
    replay_now_ = Replay({"crash-now"}, "now");
    replay_previous_ = Replay({"crash-previous"}, "previous");

    Config config;
    config.kafka.topics.clear();  // files only
    for (const char* f : {"main", "bhr", "crash-previous", "crash-now"})
      config.sources.files.push_back(File(f));
    config.ingest.threads = 2;
    config.aggregate.shards = 2;
    auto loaded = LoadSignatures(config);
    ASSERT_TRUE(loaded.has_value());
    signatures_ = new std::unique_ptr<SignatureGenerator>(std::move(loaded).value());
    clock_ = new SystemClock();
    daemon_ = new Daemon(config, signatures_->get(), clock_);
    ASSERT_TRUE(daemon_->Start().ok());
    server_ = new HttpServer();
    HttpServerOptions options;
    // The flame graph is compared whole with the replay: bounds it stays within (ADR 0025).
    options.api.limits = {.max_nodes = 1'000'000, .max_bytes = 256u << 20};
    options.listen = "127.0.0.1:0";
    ASSERT_TRUE(server_->Start(options, *daemon_).ok());
    const uint64_t documents = 2000;
    test::WaitFor(
        [&] {
          if (HttpGet(server_->port(), "/readyz").status != 200 || daemon_->counts().documents != documents) {
            return false;
          }
          auto top = GetJson("/api/v1/crashes/top?window=all&limit=1");
          return top->root["total"].get_int64().value() == 800;
        },
        60s, 100ms);
  }
  static void TearDownTestSuite() {
    server_->Stop();
    daemon_->Stop();
    delete server_;
    delete daemon_;
    delete clock_;
    delete signatures_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  static std::string File(const std::string& name) { return (*dir_ / (name + ".ndjson")).string(); }
  static void Generate(const char* kind, int n, int seed, const char* start, const std::string& name) {
    const std::string cmd = fmt::format("{} generate --kind {} --count {} --seed {} --start {} --output {}",
                                        SEISMO_BINARY, kind, n, seed, start, File(name));
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  static element Replay(const std::vector<std::string>& names, const std::string& out) {
    std::string cmd =
        fmt::format("{} replay --quiet --output {}", SEISMO_BINARY, (*dir_ / (out + ".json")).string());
    for (const auto& n : names) cmd += " " + File(n);
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    static simdjson::dom::parser parsers[3];
    static int next = 0;
    return parsers[next++].load((*dir_ / (out + ".json")).string()).value();
  }
  static std::unique_ptr<Json> GetJson(const std::string& target) {
    HttpResponse r = HttpGet(server_->port(), target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return std::make_unique<Json>(r.body);
  }

  // Crash counts by signature of a replay's rows that pass the filter.
  static std::map<std::string, int64_t> CrashesBySignature(element replay, const std::string& dim = "",
                                                           const std::string& value = "") {
    std::map<std::string, int64_t> out;
    for (element row : replay["crashes"].get_array()) {
      if (!dim.empty() && !Passes(RowOf(row), dim, value)) continue;
      out[Str(row["signature"])] += row["count"].get_int64().value();
    }
    return out;
  }
  // Usage hours of the replay's build rows that pass the filter.
  static double BuildUsage(const std::string& dim = "", const std::string& value = "") {
    double usage = 0;
    for (element row : replay_all_["builds"].get_array()) {
      if (!dim.empty() && !Passes(RowOf(row), dim, value)) continue;
      usage += row["usage_hours"].get_double().value();
    }
    return usage;
  }
  // Crash totals of those builds as /api/v1/builds counts them: crash reports, except that
  // a build's gpu, plugin and GMP crashes are the larger of its reports and its main pings'
  // SUBPROCESS_CRASHES_WITH_DUMP (the same crashes; ADR 0026), never their sum.
  static int64_t BuildCrashTotal(const std::string& dim, const std::string& value) {
    using Build = std::array<std::string, 4>;  // channel, product, version, build_id
    auto build_of = [](const Row& r) {
      return Build{r.at("channel"), r.at("product"), r.at("version"), r.at("build_id")};
    };
    std::map<Build, std::map<std::string, int64_t>> reports, main_pings;  // by class
    for (element row : replay_all_["crashes"].get_array()) {
      const Row r = RowOf(row);
      if (Passes(r, dim, value)) reports[build_of(r)][r.at("class")] += row["count"].get_int64().value();
    }
    for (element row : replay_all_["builds"].get_array()) {
      const Row r = RowOf(row);
      if (!Passes(r, dim, value)) continue;
      for (auto [k, v] : row["subprocess_crashes"].get_object())
        main_pings[build_of(r)][std::string(k)] += v.get_int64().value();
    }
    int64_t n = 0;
    for (auto& [build, classes] : reports) {
      for (const auto& [cls, count] : classes) {
        if (cls != "gpu" && cls != "plugin" && cls != "gmplugin") n += count;
      }
    }
    std::set<Build> builds;
    for (const auto& [build, classes] : reports) builds.insert(build);
    for (const auto& [build, kinds] : main_pings) builds.insert(build);
    for (const Build& build : builds) {
      for (const char* cls : {"gpu", "plugin", "gmplugin"}) {
        n += std::max(reports[build][cls], main_pings[build][cls]);
      }
    }
    return n;
  }
  // The most frequent value of `dim` among the rows of `table` (weighted by `weight`).
  static std::string CommonValue(const char* table, const std::string& dim, const char* weight) {
    std::map<std::string, double> n;
    for (element row : replay_all_[table].get_array()) {
      Row r = RowOf(row);
      if (r.count(dim)) n[r[dim]] += row[weight].get_double().value();
    }
    auto best = std::max_element(n.begin(), n.end(), [](auto& a, auto& b) { return a.second < b.second; });
    return best == n.end() ? "" : best->first;
  }

  static fs::path* dir_;
  static element replay_all_, replay_now_, replay_previous_;
  static std::unique_ptr<SignatureGenerator>* signatures_;
  static SystemClock* clock_;
  static Daemon* daemon_;
  static HttpServer* server_;
};

fs::path* HttpApiNumbers::dir_ = nullptr;
element HttpApiNumbers::replay_all_;
element HttpApiNumbers::replay_now_;
element HttpApiNumbers::replay_previous_;
std::unique_ptr<SignatureGenerator>* HttpApiNumbers::signatures_ = nullptr;
SystemClock* HttpApiNumbers::clock_ = nullptr;
Daemon* HttpApiNumbers::daemon_ = nullptr;
HttpServer* HttpApiNumbers::server_ = nullptr;

TEST_F(HttpApiNumbers, TheCorpusHasWhatTheFiltersNeed) {
  std::set<std::string> channels, builds, signatures, processes, threads;
  for (element row : replay_all_["crashes"].get_array()) {
    channels.insert(Str(row["channel"]));
    builds.insert(Str(row["build_id"]));
    signatures.insert(Str(row["signature"]));
    processes.insert(Str(row["process"]));
  }
  for (element row : replay_all_["hangs"].get_array()) threads.insert(Str(row["thread"]));
  EXPECT_GE(channels.size(), 2u);
  EXPECT_GE(builds.size(), 5u);
  EXPECT_GE(signatures.size(), 10u);
  EXPECT_GE(processes.size(), 3u);
  EXPECT_GE(threads.size(), 2u);
  EXPECT_EQ(daemon_->counts().documents, 2000u);
}

// channel, os, build_id, build_date, process, thread and signature on Top Crashers,
// hangs (with their usage denominator) and builds, each against the replay's rows.
TEST_F(HttpApiNumbers, EveryFilterNarrowsAsTheReplayRowsDo) {
  const std::vector<std::pair<std::string, std::string>> filters = {
      {"channel", CommonValue("crashes", "channel", "count")},
      {"channel", "beta"},
      {"os", CommonValue("hangs", "os", "hang_ms")},
      {"os", CommonValue("crashes", "os", "count")},
      {"build_id", CommonValue("crashes", "build_id", "count")},
      {"build_date", CommonValue("hangs", "build_date", "hang_ms")},
      {"process", "content"},
      {"process", CommonValue("hangs", "process", "hang_ms")},
      {"thread", CommonValue("hangs", "thread", "hang_ms")},
      {"signature", CommonValue("crashes", "signature", "count")},
      {"signature", CommonValue("hangs", "signature", "hang_ms")},
  };
  for (const auto& [dim, value] : filters) {
    SCOPED_TRACE(dim + "=" + value);
    ASSERT_FALSE(value.empty());
    const std::string q = "window=all&limit=1000&" + dim + "=" + Escape(value);

    // Top Crashers: counts by signature, the total and the usage denominator.
    std::map<std::string, int64_t> expected = CrashesBySignature(replay_all_, dim, value);
    std::erase_if(expected, [](const auto& e) { return e.second == 0; });
    int64_t total = 0;
    for (const auto& [sig, n] : expected) total += n;
    auto top = GetJson("/api/v1/crashes/top?" + q);
    EXPECT_EQ(top->root["total"].get_int64().value(), total);
    std::map<std::string, int64_t> shown;
    for (auto row : top->root["rows"].get_array())
      shown[Str(row["signature"])] = row["count"].get_int64().value();
    EXPECT_EQ(shown, expected);
    const double usage = BuildUsage(dim, value);
    EXPECT_NEAR(top->root["usage_hours"].get_double().value(), usage, 1e-6 * usage + 1e-9);

    // Builds: usage and crash totals (BuildCrashTotal) of the builds the filter selects.
    auto b = GetJson("/api/v1/builds?" + q);
    double build_usage = 0;
    int64_t build_crashes = 0;
    for (auto row : b->root["builds"].get_array()) {
      build_usage += row["usage_hours"].get_double().value();
      build_crashes += row["crashes"]["total"].get_int64().value();
    }
    EXPECT_NEAR(build_usage, usage, 1e-6 * usage + 1e-9);
    if (dim != "process" && dim != "signature") EXPECT_EQ(build_crashes, BuildCrashTotal(dim, value));

    // Hangs (bhr): hang ms by (process, thread, signature) and the usage of the selected groups.
    std::map<std::string, double> hangs;
    for (element row : replay_all_["hangs"].get_array()) {
      if (Str(row["source"]) != "bhr" || !Passes(RowOf(row), dim, value)) continue;
      hangs[Str(row["process"]) + "|" + Str(row["thread"]) + "|" + Str(row["signature"])] +=
          row["hang_ms"].get_double().value();
    }
    double hang_usage = 0;
    for (element row : replay_all_["usage"].get_array()) {
      if (Str(row["source"]) == "bhr" && Passes(RowOf(row), dim, value)) {
        hang_usage += row["usage_hours"].get_double().value();
      }
    }
    // Hangs are kept per build date: a filter on a build's id, version or product is a 400.
    if (dim == "build_id" || dim == "version" || dim == "product") {
      EXPECT_EQ(HttpGet(server_->port(), "/api/v1/hangs?source=bhr&" + q).status, 400);
      continue;
    }
    auto h = GetJson("/api/v1/hangs?source=bhr&" + q);
    EXPECT_NEAR(h->root["usage_hours"].get_double().value(), hang_usage, 1e-6 * hang_usage + 1e-9);
    size_t rows = 0;
    for (auto row : h->root["rows"].get_array()) {
      const std::string key = Str(row["process"]) + "|" + Str(row["thread"]) + "|" + Str(row["signature"]);
      const double ms = row["hang_ms"].get_double().value();
      ASSERT_TRUE(hangs.count(key)) << key;
      EXPECT_NEAR(ms, hangs[key], 1e-6 * ms + 1e-9) << key;
      EXPECT_NEAR(row["hang_ms_per_hour"].get_double().value(), hangs[key] / hang_usage,
                  1e-6 * hangs[key] / hang_usage)
          << key;
      ++rows;
    }
    EXPECT_EQ(rows, hangs.size());
  }
}

// Window 1h holds the "now" crashes; the previous hour the "previous" ones.
TEST_F(HttpApiNumbers, TopCrashersShareRateInstallsAndRankChangeMatchTheDocuments) {
  const std::map<std::string, int64_t> now = CrashesBySignature(replay_now_);
  const std::map<std::string, int64_t> previous = CrashesBySignature(replay_previous_);
  auto rank = [](const std::map<std::string, int64_t>& counts) {  // count desc, then signature
    std::vector<std::pair<std::string, int64_t>> v(counts.begin(), counts.end());
    std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
    std::map<std::string, int64_t> out;
    for (size_t i = 0; i < v.size(); ++i) out[v[i].first] = static_cast<int64_t>(i + 1);
    return out;
  };
  const auto now_rank = rank(now);
  const auto previous_rank = rank(previous);
  int64_t total = 0;
  for (const auto& [s, n] : now) total += n;
  ASSERT_EQ(total, 400);

  // Distinct installs per signature of the "now" documents: install_time, signature from `seismo signature`.
  const std::string sigs = (*dir_ / "crash-now.signatures").string();
  ASSERT_EQ(std::system(fmt::format("{} signature {} > {}", SEISMO_BINARY, File("crash-now"), sigs).c_str()),
            0);
  std::ifstream docs(File("crash-now")), names(sigs);
  std::map<std::string, std::set<std::string>> installs;
  std::string doc, sig;
  simdjson::dom::parser parser;
  while (std::getline(docs, doc) && std::getline(names, sig)) {
    element d = parser.parse(doc).value();
    installs[sig].insert(Str(d["install_time"]));
  }

  // The usage of the window: main pings are all in it.
  const double usage = BuildUsage();
  auto top = GetJson("/api/v1/crashes/top?window=1h&limit=1000");
  EXPECT_EQ(top->root["total"].get_int64().value(), total);
  EXPECT_NEAR(top->root["usage_hours"].get_double().value(), usage, 1e-6 * usage);
  size_t rows = 0, moved = 0;
  for (auto row : top->root["rows"].get_array()) {
    const std::string s = Str(row["signature"]);
    SCOPED_TRACE(s);
    const int64_t count = row["count"].get_int64().value();
    ASSERT_TRUE(now.count(s));
    EXPECT_EQ(count, now.at(s));
    EXPECT_EQ(row["rank"].get_int64().value(), now_rank.at(s));
    EXPECT_NEAR(row["share"].get_double().value(), 100.0 * count / total, 1e-9);
    EXPECT_NEAR(row["rate_per_1000h"].get_double().value(), 1000.0 * count / usage,
                1e-6 * 1000.0 * count / usage);
    const int64_t exact = static_cast<int64_t>(installs[s].size());
    const int64_t estimate = row["installs"].get_int64().value();
    EXPECT_LE(estimate, count);
    EXPECT_NEAR(static_cast<double>(estimate), static_cast<double>(exact),
                0.05 * exact + 1);  // HLL, 1.6 % error
    if (previous_rank.count(s)) {
      EXPECT_EQ(row["previous_rank"].get_int64().value(), previous_rank.at(s));
      EXPECT_EQ(row["rank_change"].get_int64().value(), previous_rank.at(s) - now_rank.at(s));
      EXPECT_FALSE(row["is_new"].get_bool().value());
      moved += previous_rank.at(s) != now_rank.at(s);
    } else {
      EXPECT_TRUE(row["previous_rank"].is_null());
      EXPECT_TRUE(row["rank_change"].is_null());
      EXPECT_TRUE(row["is_new"].get_bool().value());
    }
    ++rows;
  }
  EXPECT_EQ(rows, now.size());
  EXPECT_GT(moved, 0u) << "the corpus moves some signature's rank";

  // The signature page of the top signature: its count and installs.
  const std::string first = Str(top->root["rows"].at(0)["signature"]);
  auto page = GetJson("/api/v1/crashes/signature?window=1h&signature=" + Escape(first));
  EXPECT_EQ(page->root["count"].get_int64().value(), now.at(first));
  EXPECT_EQ(page->root["installs"].get_int64().value(),
            top->root["rows"].at(0)["installs"].get_int64().value());
}

// Per-bucket series add up to the window's totals; the flame graph's tree and
// folded stacks hold the replay's hang ms per stack.
TEST_F(HttpApiNumbers, TimeseriesAndFlamegraphAddUpToTheReplay) {
  int64_t crashes_now = 0;
  for (const auto& [s, n] : CrashesBySignature(replay_now_)) crashes_now += n;
  auto ts = GetJson("/api/v1/crashes/timeseries?window=1h");
  int64_t sum = 0;
  double usage = 0;
  for (auto p : ts->root["points"].get_array()) {
    sum += p["count"].get_int64().value();
    usage += p["usage_hours"].get_double().value();
  }
  EXPECT_EQ(sum, crashes_now);
  EXPECT_NEAR(usage, BuildUsage(), 1e-6 * BuildUsage());
  auto day = GetJson("/api/v1/crashes/timeseries?window=24h");
  sum = 0;
  for (auto p : day->root["points"].get_array()) sum += p["count"].get_int64().value();
  EXPECT_EQ(sum, 800);

  // bhr hang ms by stack (root first) and by first frame.
  std::map<std::string, double> by_stack;
  std::map<std::string, double> by_first;
  double hang_ms = 0, bhr_usage = 0;
  for (element row : replay_all_["hangs"].get_array()) {
    if (Str(row["source"]) != "bhr") continue;
    std::string folded;
    for (element f : row["stack"].get_array()) folded += (folded.empty() ? "" : ";") + Str(f);
    const double ms = row["hang_ms"].get_double().value();
    by_stack[folded] += ms;
    by_first[Str(row["stack"].at(0))] += ms;
    hang_ms += ms;
  }
  for (element row : replay_all_["usage"].get_array()) {
    if (Str(row["source"]) == "bhr") bhr_usage += row["usage_hours"].get_double().value();
  }
  auto hts = GetJson("/api/v1/hangs/timeseries?window=1h&source=bhr");
  double ts_ms = 0, ts_usage = 0;
  for (auto p : hts->root["points"].get_array()) {
    ts_ms += p["hang_ms"].get_double().value();
    ts_usage += p["usage_hours"].get_double().value();
  }
  EXPECT_NEAR(ts_ms, hang_ms, 1e-6 * hang_ms);
  EXPECT_NEAR(ts_usage, bhr_usage, 1e-6 * bhr_usage);

  auto tree = GetJson("/api/v1/hangs/flamegraph?window=all&source=bhr&format=tree");
  EXPECT_NEAR(tree->root["hang_ms"].get_double().value(), hang_ms, 1e-6 * hang_ms);
  std::map<std::string, double> children;
  for (auto c : tree->root["children"].get_array())
    children[Str(c["name"])] = c["hang_ms"].get_double().value();
  ASSERT_EQ(children.size(), by_first.size());
  for (const auto& [name, ms] : by_first) EXPECT_NEAR(children[name], ms, 1e-6 * ms + 1e-9) << name;

  HttpResponse folded =
      HttpGet(server_->port(), "/api/v1/hangs/flamegraph?window=all&source=bhr&format=collapsed");
  ASSERT_EQ(folded.status, 200);
  std::map<std::string, double> lines;
  std::istringstream in(folded.body);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    lines[line.substr(0, space)] += std::stod(line.substr(space + 1));
  }
  ASSERT_EQ(lines.size(), by_stack.size());
  for (const auto& [stack, ms] : by_stack) EXPECT_NEAR(lines[stack], ms, 0.5 + 1e-9) << stack;
}

}  // namespace
}  // namespace seismo
