#include "seismo/query/metrics.h"

#include <fmt/format.h>

#include <map>

#include "seismo/core/json_writer.h"
#include "seismo/query/alerts_json.h"

namespace seismo {
namespace {

class Exposition {
 public:
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void Sample(std::string_view name, std::string_view labels, double v) {
    out_ += name;
    if (!labels.empty()) fmt::format_to(std::back_inserter(out_), "{{{}}}", labels);
    out_ += ' ';
    out_ += FormatDouble(v);
    out_ += '\n';
  }
  void Sample(std::string_view name, std::string_view labels, uint64_t v) {
    out_ += name;
    if (!labels.empty()) fmt::format_to(std::back_inserter(out_), "{{{}}}", labels);
    fmt::format_to(std::back_inserter(out_), " {}\n", v);
  }
  void Gauge(std::string_view name, std::string_view help, double v) {
    Family(name, "gauge", help);
    Sample(name, "", v);
  }
  void Counter(std::string_view name, std::string_view help, uint64_t v) {
    Family(name, "counter", help);
    Sample(name, "", v);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// Label value escaping per the exposition format: backslash, quote, newline.
std::string Label(std::string_view name, std::string_view value) {
  std::string out(name);
  out += "=\"";
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace

std::vector<std::pair<std::string, uint64_t>> AlertStateCounts(std::string_view json) {
  std::map<std::string, uint64_t> counts;
  for (std::string_view alert : SplitJsonArray(json).value_or(std::vector<std::string_view>{})) {
    if (auto state = TopLevelString(alert, "state")) ++counts[*state];
  }
  return {counts.begin(), counts.end()};
}

std::string MetricsText(const Snapshot* snap, const RecordCounts& counts, const ServiceStatus& status,
                        std::string_view alerts_json, const HttpStats& http, int64_t now_ms) {
  Exposition e;
  e.Family("seismo_build_info", "gauge", "Build information; always 1.");
  e.Sample("seismo_build_info", Label("version", SEISMO_VERSION), uint64_t{1});
  e.Gauge("seismo_uptime_seconds", "Seconds since the daemon started.",
          status.started_at_ms > 0 ? static_cast<double>(now_ms - status.started_at_ms) / 1000.0 : 0.0);
  e.Gauge("seismo_ready",
          "1 when restored, consuming, [sources] files read and no operator decision pending.",
          IsReady(status) ? 1.0 : 0.0);

  e.Family("seismo_records_total", "counter", "Accepted records by document kind.");
  constexpr std::array<std::string_view, 3> kKinds = {"main", "bhr", "crash"};
  for (size_t i = 0; i < kKinds.size(); ++i) e.Sample("seismo_records_total", Label("kind", kKinds[i]), counts.by_kind[i]);
  e.Family("seismo_rejected_total", "counter", "Rejected records by reason (filtered = dropped by a configured filter).");
  for (size_t i = 0; i < kRejectReasonCount; ++i) {
    e.Sample("seismo_rejected_total", Label("reason", RejectReasonName(static_cast<RejectReason>(i))),
             counts.rejected[i]);
  }
  e.Counter("seismo_documents_total", "Documents read from every source.", counts.documents);
  e.Counter("seismo_bytes_total", "Bytes of documents read.", counts.bytes);
  const ShardCounters c = snap ? snap->counters : ShardCounters{};
  e.Counter("seismo_duplicates_total", "Crash documents counted once because their id was seen before.", c.duplicates);
  e.Counter("seismo_late_dropped_total", "Deltas older than stream time minus retention.", c.late_dropped);
  e.Counter("seismo_folded_series_total", "Series folded into (other) by the series budget.", c.folded);
  e.Counter("seismo_dedup_forgotten_total",
            "Crash ids forgotten before their time because the id memory was full.", c.dedup_forgotten);
  size_t series = 0;
  if (snap) {
    for (size_t t = 0; t < kTableCount; ++t) series += snap->table(static_cast<Table>(t)).size();
  }
  e.Gauge("seismo_series", "Live series in the latest snapshot.", static_cast<double>(series));
  e.Gauge("seismo_memory_bytes", "Estimated bytes held by shard state.",
          static_cast<double>(snap ? snap->memory_bytes : 0));
  if (snap && snap->stream_time_ms > 0) {
    e.Gauge("seismo_stream_time_seconds", "Stream time (the event-time watermark), Unix seconds.",
            static_cast<double>(snap->stream_time_ms) / 1000.0);
  }
  if (snap && snap->built_at_ms > 0) {
    e.Gauge("seismo_snapshot_age_seconds", "Seconds since the latest snapshot was built.",
            static_cast<double>(now_ms - snap->built_at_ms) / 1000.0);
  }

  e.Family("seismo_queue_depth", "gauge", "Items waiting in the ingest queues.");
  e.Sample("seismo_queue_depth", Label("queue", "chunks"), static_cast<uint64_t>(status.queued_chunks));
  e.Sample("seismo_queue_depth", Label("queue", "batches"), static_cast<uint64_t>(status.queued_batches));
  e.Family("seismo_consumer_lag", "gauge", "Kafka messages behind the partitions' ends (absent when unknown).");
  if (status.consumer_lag >= 0) e.Sample("seismo_consumer_lag", "", static_cast<uint64_t>(status.consumer_lag));
  e.Gauge("seismo_consumer_consuming", "1 when Kafka partitions are assigned (or no Kafka is configured).",
          status.consuming ? 1.0 : 0.0);
  e.Gauge("seismo_consumer_paused_partitions", "Partitions paused for backpressure.",
          static_cast<double>(status.paused_partitions));
  e.Counter("seismo_consumer_pauses_total", "Times consumption paused for backpressure.", status.pauses);
  e.Counter("seismo_consumer_redelivered_total",
            "Kafka records the client delivered twice; skipped, counted once.", status.redelivered);
  e.Counter("seismo_consumer_errors_total", "Kafka client errors.", status.kafka_errors);
  e.Counter("seismo_consumer_offset_resets_total",
            "Kafka positions found out of range (deleted or past the end) and moved.", status.offset_resets);
  e.Counter("seismo_consumer_commit_failures_total",
            "Kafka offset commits that failed; the offsets stay where they were.", status.commit_failures);
  e.Counter("seismo_consumer_lost_offsets_total",
            "Kafka offsets deleted by the broker (retention) before they were read.", status.lost_offsets);
  e.Family("seismo_consumer_partition_lost_offsets_total", "counter",
           "Kafka offsets deleted before they were read, by partition (those that lost any).");
  for (const LostOffsetsStatus& l : status.lost_partitions) {
    e.Sample("seismo_consumer_partition_lost_offsets_total",
             Label("topic", l.topic) + "," + Label("partition", std::to_string(l.partition)), l.offsets);
  }
  e.Family("seismo_checkpoint_age_seconds", "gauge", "Seconds since the last checkpoint (absent before the first).");
  if (status.last_checkpoint_ms > 0) {
    e.Sample("seismo_checkpoint_age_seconds", "", static_cast<double>(now_ms - status.last_checkpoint_ms) / 1000.0);
  }

  if (status.cluster.enabled) {
    const ClusterStatus& cluster = status.cluster;
    e.Family("seismo_aggregates_rejected_total", "counter",
             "Records of the aggregates topic the global view rejected, by reason (each logged).");
    for (const auto& [reason, n] : cluster.rejected)
      e.Sample("seismo_aggregates_rejected_total", Label("reason", reason), n);
    e.Counter("seismo_aggregates_publishes_total",
              "Publishes (transactions) committed to the aggregates topic.", cluster.publishes);
    e.Counter("seismo_aggregates_publish_failures_total",
              "Publishes to the aggregates topic that failed; the next barrier publishes again.",
              cluster.publish_failures);
    e.Counter("seismo_aggregates_publish_offsets_refused_total",
              "Failed publishes whose source offsets the consumer group refused (this instance no longer of "
              "its generation: a zombie's publish, fenced, KIP-447) or could not take.",
              cluster.publish_offsets_refused);
    e.Counter("seismo_aggregates_records_published_total", "Records (partials and tombstones) published.",
              cluster.records_published);
    size_t degraded = 0;
    for (const ClusterStatus::Partition& p : cluster.partitions) degraded += p.degraded ? 1 : 0;
    e.Gauge("seismo_cluster_partitions", "Source partitions the global view holds.",
            static_cast<double>(cluster.partitions.size()));
    e.Gauge("seismo_cluster_degraded_partitions",
            "Source partitions of the global view with a rejected record (the view lacks part of them).",
            static_cast<double>(degraded));
  }

  // Durability failures.
  e.Counter("seismo_checkpoint_failures_total",
            "Checkpoints not taken or not written; the previous checkpoint stays.",
            status.checkpoint_failures);
  e.Counter("seismo_dead_letter_failures_total",
            "Rejected records that could not be written to the dead-letter destination.",
            status.dead_letter_failures);

  e.Family("seismo_alerts", "gauge", "Alerts by state.");
  for (const auto& [state, n] : AlertStateCounts(alerts_json)) e.Sample("seismo_alerts", Label("state", state), n);
  e.Counter("seismo_alert_installs_unknown_total",
            "Rule candidates tested without the min_installs guard (once per round each): no document "
            "behind them carried clientId or install_time, so their installs are unknown.",
            status.alert_installs_unknown);
  // Alert sinks: one sample per configured sink (none when no sink is configured).
  struct SinkFamily {
    std::string_view name, help;
    uint64_t AlertSinkStatus::*value;
  };
  constexpr SinkFamily kSinkFamilies[] = {
      {"seismo_alert_sink_sent_total",
       "Alert transitions delivered, by sink (file written, webhook answered 2xx, Kafka producer accepted).",
       &AlertSinkStatus::sent},
      {"seismo_alert_sink_failed_total",
       "Alert transitions a sink gave up on (write error, every webhook attempt failed, produce refused).",
       &AlertSinkStatus::failed},
      {"seismo_alert_sink_retries_total", "Webhook attempts made after a failed one.",
       &AlertSinkStatus::retried},
      {"seismo_alert_sink_dropped_total", "Webhook events dropped: queue full, or still queued at shutdown.",
       &AlertSinkStatus::dropped},
  };
  for (const SinkFamily& f : kSinkFamilies) {
    e.Family(f.name, "counter", f.help);
    for (const AlertSinkStatus& s : status.alert_sinks) e.Sample(f.name, Label("sink", s.sink), s.*f.value);
  }

  e.Gauge("seismo_http_sse_clients", "Open /api/v1/stream connections.", static_cast<double>(http.sse_clients));
  e.Gauge("seismo_http_answer_memory_bytes", "Bytes API answers in flight hold of http.answer_memory.",
          static_cast<double>(http.answer_memory_bytes));
  e.Counter("seismo_http_answers_refused_total",
            "API requests answered 503 because http.answer_memory was held.", http.answers_refused);
  e.Counter("seismo_http_answer_cache_hits_total",
            "API answers served from the answer cache (built ahead on publish, or by an earlier request).",
            http.answer_cache_hits);
  constexpr std::string_view kHist = "seismo_http_request_duration_seconds";
  e.Family(kHist, "histogram", "HTTP request handling time by route.");
  const auto& bounds = http.latency.upper_bounds_s;
  for (const auto& r : http.latency.routes) {
    const std::string path = Label("path", r.path);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < r.counts.size(); ++i) {
      cumulative += r.counts[i];
      const std::string le = i < bounds.size() ? FormatDouble(bounds[i]) : "+Inf";
      e.Sample(std::string(kHist) + "_bucket", path + "," + Label("le", le), cumulative);
    }
    e.Sample(std::string(kHist) + "_sum", path, r.sum_s);
    e.Sample(std::string(kHist) + "_count", path, cumulative);
  }
  return e.Take();
}

}  // namespace seismo
