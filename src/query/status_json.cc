#include "seismo/query/status_json.h"

#include "seismo/core/json_writer.h"
#include "seismo/core/time.h"
#include "seismo/query/params.h"

namespace seismo {
namespace {

// "key": "text", or "key": null when the text is empty.
void TextOrNull(JsonWriter& w, std::string_view key, const std::string& text) {
  w.Key(key);
  if (text.empty()) {
    w.Null();
  } else {
    w.String(text);
  }
}

// "key": "<RFC 3339>", or "key": null when `known` is false.
void TimestampOrNull(JsonWriter& w, std::string_view key, bool known, int64_t ms) {
  w.Key(key);
  if (known) {
    w.String(FormatTimestamp(EventTime{ms}));
  } else {
    w.Null();
  }
}

void StreamTime(JsonWriter& w, const Snapshot* snap) {
  TimestampOrNull(w, "stream_time", snap && snap->stream_time_ms > 0, snap ? snap->stream_time_ms : 0);
}

// "checkpoint_recovery": null, or the unusable checkpoint and how far back its partitions
// are read again (SPEC §7).
void CheckpointRecoveryJson(JsonWriter& w, const CheckpointRecovery& r) {
  w.Key("checkpoint_recovery");
  if (r.problem.empty()) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Key("problem").String(r.problem);
  w.Key("action").String(r.action);
  TextOrNull(w, "set_aside_to", r.set_aside_to);
  w.Key("reread").BeginArray();
  for (const CheckpointRecovery::Partition& p : r.reread) {
    w.BeginObject();
    w.Key("partition").String(p.partition);
    w.Key("from_offset").Int(p.from_offset);
    w.Key("committed_offset");
    if (p.committed_offset >= 0) {
      w.Int(p.committed_offset);
    } else {
      w.Null();
    }
    TimestampOrNull(w, "from_time", p.from_time_ms > 0, p.from_time_ms);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// "cluster": null for one instance, else this instance, its publishes, and every source
// partition of the global view with its owner, offset and the age of its latest partial
// (SPEC §9: a view is never silently partial).
void ClusterJson(JsonWriter& w, const ClusterStatus& c, int64_t now_ms) {
  w.Key("cluster");
  if (!c.enabled) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Key("instance_id").String(c.instance_id);
  w.Key("aggregates_topic").String(c.aggregates_topic);
  w.Key("publishes").Uint(c.publishes);
  w.Key("publish_failures").Uint(c.publish_failures);
  w.Key("publish_offsets_refused").Uint(c.publish_offsets_refused);
  w.Key("records_published").Uint(c.records_published);
  TimestampOrNull(w, "last_publish", c.last_publish_ms > 0, c.last_publish_ms);
  TextOrNull(w, "view_error", c.view_error);
  w.Key("rejected").BeginObject();
  for (const auto& [reason, n] : c.rejected) w.Key(reason).Uint(n);
  w.EndObject();
  size_t degraded = 0;
  w.Key("partitions").BeginArray();
  for (const ClusterStatus::Partition& p : c.partitions) {
    degraded += p.degraded ? 1 : 0;
    w.BeginObject();
    w.Key("topic").String(p.topic);
    w.Key("partition").Int(p.partition);
    w.Key("owner").String(p.owner);
    w.Key("offset").Int(p.source_offset);
    TimestampOrNull(w, "stream_time", p.stream_time_ms != INT64_MIN, p.stream_time_ms);
    w.Key("latest_partial_age_s");
    if (p.latest_record_ms != INT64_MIN && p.latest_record_ms >= 0) {
      w.Double(static_cast<double>(now_ms - p.latest_record_ms) / 1000.0);
    } else {
      w.Null();
    }
    w.Key("buckets").Uint(p.buckets);
    w.Key("rejected").Uint(p.rejected);
    w.Key("degraded").Bool(p.degraded);
    w.EndObject();
  }
  w.EndArray();
  w.Key("degraded_partitions").Uint(degraded);
  w.EndObject();
}

}  // namespace

std::string StatusJson(const Snapshot* snap, const RecordCounts& counts, const ServiceStatus& status,
                       const ApiSettings& settings, int64_t now_ms) {
  JsonWriter w;
  w.BeginObject();
  w.Key("version").String(SEISMO_VERSION);
  w.Key("uptime_s").Double(status.started_at_ms > 0 ? static_cast<double>(now_ms - status.started_at_ms) / 1000.0
                                                    : 0.0);
  StreamTime(w, snap);
  w.Key("records").BeginObject();
  w.Key("main").Uint(counts.by_kind[0]);
  w.Key("bhr").Uint(counts.by_kind[1]);
  w.Key("crash").Uint(counts.by_kind[2]);
  w.EndObject();
  w.Key("rejected").BeginObject();
  for (size_t i = 0; i < kRejectReasonCount; ++i) {
    auto r = static_cast<RejectReason>(i);
    if (r == RejectReason::kFiltered || counts.rejected[i] == 0) continue;
    w.Key(RejectReasonName(r)).Uint(counts.rejected[i]);
  }
  w.EndObject();
  w.Key("filtered").Uint(counts.rejected[static_cast<size_t>(RejectReason::kFiltered)]);
  w.Key("documents").Uint(counts.documents);
  w.Key("bytes").Uint(counts.bytes);
  const ShardCounters c = snap ? snap->counters : ShardCounters{};
  w.Key("duplicates").Uint(c.duplicates);
  w.Key("late_dropped").Uint(c.late_dropped);
  w.Key("folded_series").Uint(c.folded);
  w.Key("dedup_forgotten").Uint(c.dedup_forgotten);
  size_t series = 0;
  if (snap) {
    for (size_t t = 0; t < kTableCount; ++t) series += snap->table(static_cast<Table>(t)).size();
  }
  w.Key("series").Uint(series);
  w.Key("memory_bytes").Uint(snap ? snap->memory_bytes : 0);
  w.Key("queues").BeginObject();
  w.Key("chunks").Uint(status.queued_chunks);
  w.Key("batches").Uint(status.queued_batches);
  w.EndObject();
  w.Key("consumer").BeginObject();
  w.Key("enabled").Bool(status.kafka_enabled);
  w.Key("consuming").Bool(status.consuming);
  w.Key("lag");
  if (status.consumer_lag >= 0) {
    w.Int(status.consumer_lag);
  } else {
    w.Null();
  }
  w.Key("paused_partitions").Uint(status.paused_partitions);
  w.Key("pauses").Uint(status.pauses);
  w.Key("redelivered").Uint(status.redelivered);
  w.Key("errors").Uint(status.kafka_errors);
  w.Key("last_error").String(status.last_kafka_error);
  w.Key("offset_resets").Uint(status.offset_resets);
  w.Key("commit_failures").Uint(status.commit_failures);
  w.Key("lost_offsets").Uint(status.lost_offsets);
  w.Key("lost").BeginArray();
  for (const LostOffsetsStatus& l : status.lost_partitions) {
    w.BeginObject();
    w.Key("topic").String(l.topic);
    w.Key("partition").Int(l.partition);
    w.Key("offsets").Uint(l.offsets);
    w.Key("last_from").Int(l.last_from);
    w.Key("last_to").Int(l.last_to);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.Key("alert_rounds").Uint(status.alert_rounds);
  w.Key("alert_sinks").BeginObject();
  for (const AlertSinkStatus& s : status.alert_sinks) {
    w.Key(s.sink).BeginObject();
    w.Key("sent").Uint(s.sent);
    w.Key("failed").Uint(s.failed);
    w.Key("retried").Uint(s.retried);
    w.Key("dropped").Uint(s.dropped);
    w.EndObject();
  }
  w.EndObject();
  w.Key("ready").Bool(IsReady(status));
  TextOrNull(w, "not_ready_reason", status.not_ready_reason);
  CheckpointRecoveryJson(w, status.checkpoint_recovery);
  TimestampOrNull(w, "last_checkpoint", status.last_checkpoint_ms > 0, status.last_checkpoint_ms);
  ClusterJson(w, status.cluster, now_ms);
  // Durability failures.
  w.Key("checkpoint_failures").Uint(status.checkpoint_failures);
  w.Key("dead_letter_failures").Uint(status.dead_letter_failures);
  const std::vector<int64_t>& windows = snap && !snap->windows_ms.empty() ? snap->windows_ms : settings.windows_ms;
  w.Key("windows").BeginArray();
  for (int64_t win : windows) w.String(WindowName(win));
  w.EndArray();
  w.Key("default_window").String(WindowName(DefaultWindow(windows)));
  w.Key("bucket").String(BucketName(snap ? snap->bucket_ms : settings.bucket_ms));
  w.EndObject();
  return w.Take();
}

std::string ReadyzJson(const ServiceStatus& status) {
  JsonWriter w;
  w.BeginObject();
  w.Key("ready").Bool(IsReady(status));
  w.Key("restored").Bool(status.restored);
  w.Key("consuming").Bool(status.consuming);
  w.Key("sources_done").Bool(status.sources_done);
  TextOrNull(w, "reason", status.not_ready_reason);
  w.EndObject();
  return w.Take();
}

std::string SnapshotEventJson(const Snapshot* snap, const RecordCounts& counts) {
  JsonWriter w;
  w.BeginObject();
  StreamTime(w, snap);
  w.Key("documents").Uint(counts.documents);
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
