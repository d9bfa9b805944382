#include "seismo/query/api.h"

#include <gtest/gtest.h>

#include "fake_provider.h"
#include "query_fixture.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/metrics.h"
#include "seismo/query/provider.h"

namespace seismo {
namespace {

using namespace seismo::testing;

class ApiTest : public ::testing::Test {
 protected:
  ApiAnswer Get(std::string_view path, std::string_view qs = "") {
    return AnswerApi(path, qs, provider_, settings_, 1'000'000'000'000);
  }
  FakeProvider provider_;
  ApiSettings settings_;
};

TEST_F(ApiTest, UnknownPathIs404AndBadParameterIs400) {
  ApiAnswer a = Get("/api/v1/nothing");
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(a.body, R"({"error":"not found"})");
  ApiAnswer b = Get("/api/v1/crashes/top", "limit=0");
  EXPECT_EQ(b.status, 400);
  EXPECT_EQ(b.body, R"({"error":"limit: '0' is not an integer in 1..1000"})");
  EXPECT_EQ(Get("/api/v1/hangs", "by=x").status, 400);
}

TEST_F(ApiTest, BeforeTheFirstSnapshotListsAreEmpty) {
  for (const char* path : {"/api/v1/builds", "/api/v1/hangs", "/api/v1/crashes/top", "/api/v1/hangs/timeseries",
                           "/api/v1/crashes/timeseries"}) {
    ApiAnswer a = Get(path);
    EXPECT_EQ(a.status, 200) << path;
    Json j(a.body);
    EXPECT_EQ(j.root["window"].get_string().value(), "24h") << path;
  }
  EXPECT_EQ(Get("/api/v1/crashes/top").body,
            R"({"window":"24h","total":0,"usage_hours":0,"previous_total":null,"rows":[]})");
  EXPECT_EQ(Get("/api/v1/hangs/flamegraph", "format=collapsed").content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(Get("/api/v1/hangs/flamegraph", "format=collapsed").body, "");
}

TEST_F(ApiTest, AlertsPassThrough) {
  provider_.SetAlerts(R"([{"rule":"r","state":"firing"}])");
  EXPECT_EQ(Get("/api/v1/alerts").body, R"({"alerts":[{"rule":"r","state":"firing"}]})");
}

// A cluster's instance lists every source partition of its global view with its owner,
// offset and the age of its latest partial, and counts the topic's rejected records
// (SPEC §9: a view is never silently partial).
TEST_F(ApiTest, StatusListsTheClustersPartitionsAndMetricsCountRejectedRecords) {
  ServiceStatus s;
  s.cluster.enabled = true;
  s.cluster.instance_id = "node-a:8080";
  s.cluster.aggregates_topic = "seismo.aggregates";
  s.cluster.publishes = 4;
  s.cluster.records_published = 17;
  s.cluster.partitions = {
      {"telemetry.main", 0, "node-a:8080", 120, ParseTimestamp("2026-11-20T10:00:00Z")->ms,
       1'000'000'000'000 - 2'500, 3, 0, false},
      {"telemetry.main", 1, "node-b:8080", 80, INT64_MIN, INT64_MIN, 0, 2, true},
  };
  s.cluster.rejected = {{"corrupt", 1}, {"truncated", 0}, {"unknown_version", 1}, {"key_mismatch", 0}};
  provider_.SetStatus(s);
  const std::string status = Get("/api/v1/status").body;
  EXPECT_NE(
      status.find(
          R"("cluster":{"instance_id":"node-a:8080","aggregates_topic":"seismo.aggregates",)"
          R"("publishes":4,"publish_failures":0,"publish_offsets_refused":0,"records_published":17,"last_publish":null,)"
          R"("view_error":null,"rejected":{"corrupt":1,"truncated":0,"unknown_version":1,"key_mismatch":0},)"
          R"("partitions":[{"topic":"telemetry.main","partition":0,"owner":"node-a:8080","offset":120,)"
          R"("stream_time":"2026-11-20T10:00:00.000Z","latest_partial_age_s":2.5,"buckets":3,)"
          R"("rejected":0,"degraded":false},{"topic":"telemetry.main","partition":1,)"
          R"("owner":"node-b:8080","offset":80,"stream_time":null,"latest_partial_age_s":null,)"
          R"("buckets":0,"rejected":2,"degraded":true}],"degraded_partitions":1})"),
      std::string::npos)
      << status;
  const std::string metrics = MetricsText(nullptr, RecordCounts{}, s, "[]", HttpStats{}, 0);
  EXPECT_NE(metrics.find("\nseismo_aggregates_rejected_total{reason=\"corrupt\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("\nseismo_aggregates_rejected_total{reason=\"unknown_version\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("\nseismo_cluster_degraded_partitions 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nseismo_aggregates_records_published_total 17\n"), std::string::npos) << metrics;
}

TEST_F(ApiTest, StatusReportsCountersAndConfiguration) {
  RecordCounts c;
  c.by_kind = {1, 2, 3};
  c.rejected[static_cast<size_t>(RejectReason::kBadUsage)] = 4;
  c.rejected[static_cast<size_t>(RejectReason::kFiltered)] = 5;
  c.documents = 15;
  c.bytes = 1234;
  provider_.SetCounts(c);
  ServiceStatus s;
  s.started_at_ms = 1'000'000'000'000 - 12'500;
  s.sources_done = true;
  s.consuming = true;
  s.queued_chunks = 2;
  s.consumer_lag = 7;
  s.last_checkpoint_ms = ParseTimestamp("2026-11-20T10:00:00Z")->ms;
  s.checkpoint_failures = 2;
  s.dead_letter_failures = 3;
  provider_.SetStatus(s);
  EXPECT_EQ(
      Get("/api/v1/status").body,
      R"({"version":"0.1.0","uptime_s":12.5,"stream_time":null,"records":{"main":1,"bhr":2,"crash":3},)"
      R"("rejected":{"bad_usage":4},"filtered":5,"documents":15,"bytes":1234,"duplicates":0,"late_dropped":0,)"
      R"("folded_series":0,"dedup_forgotten":0,"series":0,"memory_bytes":0,"queues":{"chunks":2,"batches":0},)"
      R"("consumer":{"enabled":false,"consuming":true,"lag":7,"paused_partitions":0,"pauses":0,"redelivered":0,"errors":0,)"
      R"("last_error":"","offset_resets":0,"commit_failures":0,"lost_offsets":0,"lost":[]},"alert_rounds":0,"alert_sinks":{},"ready":true,"not_ready_reason":null,"checkpoint_recovery":null,)"
      R"("last_checkpoint":"2026-11-20T10:00:00.000Z","cluster":null,)"
      R"("checkpoint_failures":2,"dead_letter_failures":3,)"
      R"("windows":["1h","24h","7d"],"default_window":"24h","bucket":"60s"})");
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  provider_.SetSnapshot(w.Build());
  Json j(Get("/api/v1/status").body);
  EXPECT_EQ(j.root["stream_time"].get_string().value(), "2026-11-20T12:00:00.000Z");
  EXPECT_EQ(j.root["series"].get_int64().value(), 1);
}

TEST_F(ApiTest, StatusSaysWhyItIsNotReadyAndHowFarBackACorruptCheckpointIsReadAgain) {
  ServiceStatus s;
  s.consuming = true;
  s.sources_done = true;
  s.not_ready_reason = "checkpoint /c/seismo.ckpt cannot be used; waiting for an operator";
  s.checkpoint_recovery.problem = "/c/seismo.ckpt: checksum mismatch";
  s.checkpoint_recovery.action = "reread";
  s.checkpoint_recovery.set_aside_to = "/c/seismo.ckpt.bad-1";
  s.checkpoint_recovery.reread = {{"telemetry.main[0]", 0, 1859, ParseTimestamp("2026-11-20T10:00:00Z")->ms},
                                  {"telemetry.main[1]", 12, -1, 0}};
  provider_.SetStatus(s);
  Json j(Get("/api/v1/status").body);
  EXPECT_FALSE(j.root["ready"].get_bool().value());
  EXPECT_EQ(j.root["not_ready_reason"].get_string().value(), s.not_ready_reason);
  auto r = j.root["checkpoint_recovery"];
  EXPECT_EQ(r["problem"].get_string().value(), "/c/seismo.ckpt: checksum mismatch");
  EXPECT_EQ(r["action"].get_string().value(), "reread");
  EXPECT_EQ(r["set_aside_to"].get_string().value(), "/c/seismo.ckpt.bad-1");
  auto first = r["reread"].at(0);
  EXPECT_EQ(first["partition"].get_string().value(), "telemetry.main[0]");
  EXPECT_EQ(first["from_offset"].get_int64().value(), 0);
  EXPECT_EQ(first["committed_offset"].get_int64().value(), 1859);
  EXPECT_EQ(first["from_time"].get_string().value(), "2026-11-20T10:00:00.000Z");
  auto second = r["reread"].at(1);
  EXPECT_EQ(second["from_offset"].get_int64().value(), 12);
  EXPECT_TRUE(second["committed_offset"].is_null());
  EXPECT_TRUE(second["from_time"].is_null());
}

TEST_F(ApiTest, StatusReportsEachAlertSinksDeliveries) {
  ServiceStatus s;
  s.alert_sinks = {{"file", 3, 1, 0, 0}, {"webhook", 2, 4, 12, 1}};
  s.alert_rounds = 118;
  provider_.SetStatus(s);
  Json j(Get("/api/v1/status").body);
  EXPECT_EQ(j.root["alert_rounds"].get_uint64().value(), 118u);
  EXPECT_EQ(j.root["alert_sinks"]["file"]["sent"].get_uint64().value(), 3u);
  EXPECT_EQ(j.root["alert_sinks"]["file"]["failed"].get_uint64().value(), 1u);
  EXPECT_EQ(j.root["alert_sinks"]["webhook"]["sent"].get_uint64().value(), 2u);
  EXPECT_EQ(j.root["alert_sinks"]["webhook"]["failed"].get_uint64().value(), 4u);
  EXPECT_EQ(j.root["alert_sinks"]["webhook"]["retried"].get_uint64().value(), 12u);
  EXPECT_EQ(j.root["alert_sinks"]["webhook"]["dropped"].get_uint64().value(), 1u);
}

TEST_F(ApiTest, StatusAndMetricsReportKafkaOffsetsLostBeforeTheyWereRead) {
  ServiceStatus s;
  s.kafka_enabled = true;
  s.offset_resets = 3;
  s.commit_failures = 2;
  s.lost_offsets = 150;  // 100 + 40 on telemetry.main[0], 10 on telemetry.bhr[2]
  s.lost_partitions = {{"telemetry.bhr", 2, 10, 5, 15}, {"telemetry.main", 0, 140, 200, 240}};
  provider_.SetStatus(s);
  const std::string status = Get("/api/v1/status").body;
  EXPECT_NE(
      status.find(R"("offset_resets":3,"commit_failures":2,"lost_offsets":150,"lost":[)"
                  R"({"topic":"telemetry.bhr","partition":2,"offsets":10,"last_from":5,"last_to":15},)"
                  R"({"topic":"telemetry.main","partition":0,"offsets":140,"last_from":200,"last_to":240}])"),
      std::string::npos)
      << status;
  const std::string metrics = MetricsText(nullptr, RecordCounts{}, s, "[]", HttpStats{}, 0);
  EXPECT_NE(metrics.find("\nseismo_consumer_lost_offsets_total 150\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nseismo_consumer_offset_resets_total 3\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nseismo_consumer_commit_failures_total 2\n"), std::string::npos) << metrics;
  EXPECT_NE(
      metrics.find(
          "\nseismo_consumer_partition_lost_offsets_total{topic=\"telemetry.main\",partition=\"0\"} 140\n"),
      std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find(
          "\nseismo_consumer_partition_lost_offsets_total{topic=\"telemetry.bhr\",partition=\"2\"} 10\n"),
      std::string::npos)
      << metrics;
}

TEST_F(ApiTest, WindowsComeFromTheSnapshotOnceThereIsOne) {
  auto snap = std::make_shared<Snapshot>();
  snap->windows_ms = {2 * kHour};
  provider_.SetSnapshot(snap);
  EXPECT_EQ(Get("/api/v1/hangs", "window=1h").status, 400);
  EXPECT_EQ(Get("/api/v1/hangs", "window=2h").status, 200);
  Json j(Get("/api/v1/hangs").body);
  EXPECT_EQ(j.root["window"].get_string().value(), "2h");
}

// A process filter names SPEC §2's normalised processes or one the data holds
// (others pass through lower-cased); anything else is a 400, not an empty list.
TEST_F(ApiTest, AnUnknownProcessIs400NamingIt) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "vr", "Gecko", {"root", "A"}, 1000, 1, 0);
  w.Crash("S", "forkserver", "other", "i1", 0);
  provider_.SetSnapshot(w.Build());
  ApiAnswer bad = Get("/api/v1/crashes/top", "process=bogus");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(
      bad.body,
      R"x({"error":"process: unknown process 'bogus' (parent, content, gpu, rdd, socket, utility, gmplugin, )x"
      R"x(plugin, another one in the data, or any)"})x");
  EXPECT_EQ(Get("/api/v1/hangs", "process=bogus").status, 400);
  EXPECT_EQ(Get("/api/v1/hangs", "process=Parent").status, 400);  // names are lower-case
  for (const char* ok :
       {"process=vr", "process=forkserver", "process=gpu", "process=any", "process=plugin"}) {
    EXPECT_EQ(Get("/api/v1/crashes/top", ok).status, 200) << ok;
  }
}

// The check of a process outside the built-in names may walk the hang and crash tables, so it
// is part of the answer kept per snapshot: a repeated request, known name or not, is a cache hit
// with the same answer, and a newer snapshot is asked again.
TEST(ApiCache, AProcessCheckIsKeptWithItsAnswer) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "vr", "Gecko", {"root", "A"}, 1000, 1, 0);
  FakeProvider provider;
  provider.SetSnapshot(w.Build());
  const ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  auto get = [&](std::string_view query) {
    return AnswerApi("/api/v1/hangs", query, provider, settings, 0, &cache);
  };
  const ApiAnswer bogus = get("process=bogus");
  EXPECT_EQ(bogus.status, 400);
  EXPECT_EQ(cache.hits(), 0u);
  EXPECT_EQ(get("process=bogus").body, bogus.body);
  EXPECT_EQ(cache.hits(), 1u) << "the 400 is served from the cache";
  EXPECT_EQ(get("process=vr").status, 200);
  EXPECT_EQ(get("process=vr").status, 200);
  EXPECT_EQ(cache.hits(), 2u);
  // A newer snapshot whose data holds the name: asked again, now a 200.
  w.Hang("bhr", "Linux", "bogus", "Gecko", {"root", "B"}, 1000, 1, 0);
  provider.SetSnapshot(w.Build());
  EXPECT_EQ(get("process=bogus").status, 200);
  // /alerts is not kept: checked on each request.
  EXPECT_EQ(AnswerApi("/api/v1/alerts", "process=nothere", provider, settings, 0, &cache).status, 400);
}

// While the newest snapshot's answers are being built, a request is served an older snapshot's
// answer (AnswerApi's `warmed`), but never its 400 for a process the newest holds. And the check
// of a process, with its walk, takes no room in the budget: with every byte of it held, an
// unknown process is still a 400 (a stored answer then takes the room its body needs to be sent).
TEST(ApiCache, AProcessCheckIsTheNewestSnapshotsAndNeedsNoBudget) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "vr", "Gecko", {"root", "A"}, 1000, 1, 0);
  FakeProvider provider;
  const std::shared_ptr<const Snapshot> older = w.Build();
  provider.SetSnapshot(older);
  const ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  AnswerBudget budget(1 << 20);
  auto get = [&](std::string_view query, const std::shared_ptr<const Snapshot>& warmed) {
    return AnswerApi("/api/v1/hangs", query, provider, settings, 0, &cache, &budget, warmed);
  };
  {
    const auto everything = budget.TryReserve(1 << 20);
    ASSERT_TRUE(everything);
    EXPECT_EQ(get("process=late", older).status, 400);
    EXPECT_EQ(get("process=vr", older).status, 503) << "an answer needs the budget";
  }
  EXPECT_EQ(get("process=late", older).status, 400);
  EXPECT_EQ(cache.hits(), 1u) << "the 400 was kept";
  EXPECT_EQ(get("process=vr", older).status, 200);
  w.Hang("bhr", "Linux", "late", "Gecko", {"root", "B"}, 1000, 1, 0);
  const std::shared_ptr<const Snapshot> newer = w.Build();
  provider.SetSnapshot(newer);
  cache.Protect(older, newer);
  EXPECT_EQ(get("process=vr", older).status, 200);
  EXPECT_EQ(cache.hits(), 2u) << "served the older snapshot's answer";
  EXPECT_EQ(get("process=late", older).status, 200) << "not the older snapshot's 400";
}

// A view in use whose process no row holds any more is not built ahead: a request for it is
// the 400 a request gets (not an empty list built over the snapshot).
TEST(WarmViews, SkipAViewWhoseProcessIsGone) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "vr", "Gecko", {"root", "A"}, 1000, 1, 0);
  const std::shared_ptr<const Snapshot> snap = w.Build();
  const ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  const std::vector<ApiView> views = {{"/api/v1/hangs", "process=gone"}, {"/api/v1/hangs", "process=vr"}};
  EXPECT_EQ(WarmViews(snap, settings, cache, nullptr, views, 8, [] { return false; }), 1u);
  FakeProvider provider;
  provider.SetSnapshot(snap);
  EXPECT_EQ(
      AnswerApi("/api/v1/hangs", "process=gone", provider, settings, 0, &cache, nullptr, snap, snap).status,
      400);
  EXPECT_EQ(
      AnswerApi("/api/v1/hangs", "process=vr", provider, settings, 0, &cache, nullptr, snap, snap).status,
      200);
  EXPECT_EQ(cache.hits(), 1u) << "the view built ahead was served";
}

// The views in use read the round's hang rows (what the round over the snapshot left, its
// WarmCarry): the default window's rows with no filter serve every filter of that window. The
// /hangs and flame graph views keep their groups from them (the /builds view only filters
// them), and their answers are those a walk of the table gives. Rows made from an older
// snapshot show which the answers read: the warm-up gives a view's pass the carry of its own
// snapshot only, which Serves cannot tell. A carry of another snapshot is not read at all.
TEST(WarmViews, FilterTheRoundsHangRows) {
  World w;
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  w.BuildUsage("Linux", 3 * kHour, 4, 0, 10 * kMin);
  auto hangs = [&](int n, int64_t us) {
    for (int i = 0; i < n; ++i) {
      w.Hang("bhr", i % 2 ? "Linux" : "Windows_NT", "parent", "T" + std::to_string(i % 3),
             {"root", "f" + std::to_string(i % 7), "Sig" + std::to_string(i % 5)}, us + i, 1,
             (i % 50) * kMin);
    }
  };
  hangs(40, 1000);
  const std::shared_ptr<const Snapshot> older = w.Build();
  hangs(40, 7000);
  const std::shared_ptr<const Snapshot> snap = w.Build();
  const ApiSettings settings;
  const int64_t window = DefaultWindow(settings.windows_ms);
  const std::vector<ApiView> views = {{"/api/v1/hangs", "os=Windows_NT"},
                                      {"/api/v1/hangs", "thread=T1&by=build_date"},
                                      {"/api/v1/hangs/flamegraph", "thread=T2"},
                                      {"/api/v1/builds", "os=Linux"}};
  OneSnapshot provider(snap);
  for (const auto& [rows_of, carry_of] :
       {std::pair{snap, snap}, std::pair{older, snap}, std::pair{older, older}}) {
    WarmCarry carry;
    carry.snap = carry_of;
    carry.rows.emplace(*rows_of, window, Filters{});
    AnswerCache<ApiAnswer> cache;
    EXPECT_EQ(WarmViews(
                  snap, settings, cache, nullptr, views, 8, [] { return false; }, &carry),
              views.size());
    const bool read = carry_of == snap;
    EXPECT_EQ(carry.views_from_kept, read ? 3u : 0u);
    EXPECT_EQ(carry.views.size(), read ? 3u : 0u) << "kept for the /hangs and flame graph views";
    for (const ApiView& v : views) {
      const std::string walked =
          AnswerApi(v.path, v.query, provider, settings, 0, nullptr, nullptr, nullptr).body;
      const ApiAnswer built = AnswerApi(v.path, v.query, provider, settings, 0, &cache, nullptr, snap);
      if (rows_of == snap || !read) {
        EXPECT_EQ(built.body, walked) << v.path << "?" << v.query;
      } else {
        EXPECT_NE(built.body, walked) << "read the rows given: " << v.path << "?" << v.query;
      }
    }
    // A view no longer in use gives back what was kept for it.
    if (read) {
      AnswerCache<ApiAnswer> again;
      EXPECT_EQ(
          WarmViews(
              snap, settings, again, nullptr, std::span(views).first(1), 8, [] { return false; }, &carry),
          1u);
      EXPECT_EQ(carry.views.size(), 1u);
    }
  }
}

TEST(Metrics, ExpositionHasHelpTypeAndHistogram) {
  RecordCounts c;
  c.by_kind = {10, 0, 2};
  c.rejected[static_cast<size_t>(RejectReason::kMalformedJson)] = 3;
  c.bytes = 99;
  ServiceStatus s;
  s.consumer_lag = 42;
  s.last_checkpoint_ms = 1000;
  s.alert_sinks = {{"webhook", 2, 4, 12, 1}, {"kafka", 6, 0, 0, 0}};
  s.checkpoint_failures = 4;
  s.dead_letter_failures = 5;
  s.alert_installs_unknown = 7;
  Snapshot snap;
  snap.stream_time_ms = 5'000;
  snap.built_at_ms = 9'500;
  HttpStats http;
  http.latency.upper_bounds_s = {0.001, 0.01};
  http.latency.routes.push_back({"/api/v1/hangs", {2, 1, 1}, 0.5});
  http.sse_clients = 1;
  const std::string text = MetricsText(
      &snap, c, s, R"([{"state":"firing"},{"state": "firing"},{"state":"resolved"}])", http, 11'000);
  for (const char* line :
       {"# TYPE seismo_records_total counter\n",
        "seismo_records_total{kind=\"main\"} 10\n",
        "seismo_rejected_total{reason=\"malformed_json\"} 3\n",
        "seismo_bytes_total 99\n",
        "seismo_consumer_lag 42\n",
        "seismo_checkpoint_age_seconds 10\n",
        "seismo_checkpoint_failures_total 4\n",
        "seismo_dead_letter_failures_total 5\n",
        "seismo_alert_installs_unknown_total 7\n",
        "seismo_snapshot_age_seconds 1.5\n",
        "seismo_stream_time_seconds 5\n",
        "seismo_queue_depth{queue=\"chunks\"} 0\n",
        "seismo_alerts{state=\"firing\"} 2\n",
        "seismo_alerts{state=\"resolved\"} 1\n",
        "# TYPE seismo_http_request_duration_seconds histogram\n",
        "seismo_http_request_duration_seconds_bucket{path=\"/api/v1/hangs\",le=\"0.001\"} 2\n",
        "seismo_http_request_duration_seconds_bucket{path=\"/api/v1/hangs\",le=\"0.01\"} 3\n",
        "seismo_http_request_duration_seconds_bucket{path=\"/api/v1/hangs\",le=\"+Inf\"} 4\n",
        "seismo_http_request_duration_seconds_sum{path=\"/api/v1/hangs\"} 0.5\n",
        "seismo_http_request_duration_seconds_count{path=\"/api/v1/hangs\"} 4\n",
        "seismo_http_sse_clients 1\n",
        "# TYPE seismo_alert_sink_sent_total counter\n",
        "seismo_alert_sink_sent_total{sink=\"webhook\"} 2\n",
        "seismo_alert_sink_sent_total{sink=\"kafka\"} 6\n",
        "# TYPE seismo_alert_sink_failed_total counter\n",
        "seismo_alert_sink_failed_total{sink=\"webhook\"} 4\n",
        "seismo_alert_sink_failed_total{sink=\"kafka\"} 0\n",
        "# TYPE seismo_alert_sink_retries_total counter\n",
        "seismo_alert_sink_retries_total{sink=\"webhook\"} 12\n",
        "# TYPE seismo_alert_sink_dropped_total counter\n",
        "seismo_alert_sink_dropped_total{sink=\"webhook\"} 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  // Every sample belongs to a family announced with HELP and TYPE.
  std::string family;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.starts_with("# HELP ")) {
      family = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      EXPECT_EQ(line.substr(7, family.size()), family);
      continue;
    }
    EXPECT_TRUE(line.starts_with(family)) << line;
  }
}

TEST(Metrics, AlertStateCountsIgnoresOtherKeys) {
  auto counts = AlertStateCounts(R"([{"state":"firing","x":{"states":"no"}},{"state" : "pending"}])");
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0], (std::pair<std::string, uint64_t>{"firing", 1}));
  EXPECT_EQ(counts[1], (std::pair<std::string, uint64_t>{"pending", 1}));
}

}  // namespace
}  // namespace seismo
