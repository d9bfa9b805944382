// GlobalView: the aggregates topic read back into one view of every source partition
// (ADR 0024, "Reading the global view"), which every instance of a cluster builds.
//
//   record (key, value) ──Apply──> per source partition: the newest partial of each
//                                  (bucket, part), its owner, offset and stream time
//                        Build() ──> one Snapshot: each partition's partials merged into
//                                    a state of its own, the states merged as instances'
//
// Rules (ADR 0023, "Compaction semantics" and "What a consumer does with a rejection"):
//   * the newest record of a key wins; a tombstone deletes its bucket part;
//   * per (partition, bucket), only the parts of the newest record's part count count,
//     so a series never counts in an old part and a new one at once;
//   * a record that is rejected (RecordReject) is counted by reason; if its key names
//     a partition's bucket part, that key's previous partial leaves the view (never half
//     a record, never a stale one beside its replacement) and the partition is degraded
//     until a valid record or a tombstone comes under that key;
//   * a partial of another bucket width is not this view's: rejected as key_mismatch;
//   * a partition's counts are its newest counts record's (c/ key); the snapshot's
//     counters and counts() are their sum, so the header counts are the whole input's;
//   * a publish is taken whole: its counts record is its last (PublishLedger), so a
//     partition's partials, tombstones and crash-ids chunks are held until the counts
//     record after them is read, and a view never shows the series of a publish beside the
//     counts of the one before it. A reader that sees records before their transaction
//     commits (a read_uncommitted consumer; the mock cluster, whose fetches end at the log's
//     end, not at the last stable offset) therefore never builds half a publish, and a
//     partition's source_offset is always the offset its series and counts both reach;
//   * crash-ids chunks (d/ keys) change nothing in the view; a view that restores
//     partitions keeps them (`keep_crash_ids`), one that serves does not. A rejected
//     chunk degrades its partition as a rejected partial does.
//
// Ownership: owns the partitions' states; borrows `symbols` (records intern into it),
// which must outlive it and every snapshot it builds. Threading: one thread at a time (the
// aggregates consumer's; MarkIds from a sweep while that thread is paused); snapshots are
// immutable and may be read by any thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seismo/aggregate/crash_ids.h"
#include "seismo/aggregate/options.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/cluster/record.h"

namespace seismo {

class GlobalView {
 public:
  // `keep_crash_ids`: hold the crash-ids chunks read (a restore's view: StateOf).
  GlobalView(AggregateOptions options, Symbols* symbols, bool keep_crash_ids = false);
  ~GlobalView();
  GlobalView(const GlobalView&) = delete;
  GlobalView& operator=(const GlobalView&) = delete;

  // One record of the topic, in offset order within its aggregates partition; `value`
  // nullopt is a tombstone; `record_time_ms` its Kafka timestamp (the age of a
  // partition's latest partial). Returns why it was rejected ("<key>: <reason>: <detail>",
  // for the caller's log), or nullopt when it was taken.
  std::optional<std::string> Apply(std::string_view key, std::optional<std::string_view> value,
                                   int64_t record_time_ms);

  // Every partition's partials merged (a partition merged again only when it changed
  // since the last Build).
  std::shared_ptr<const Snapshot> Build();
  // Every partition's record counts summed (of its newest counts record; a partition
  // without one counts nothing).
  RecordCounts counts() const;

  struct PartitionStatus {
    std::string topic;
    int32_t partition = 0;
    std::string owner;                     // instance id of its latest partial's publisher
    int64_t source_offset = -1;            // the largest source offset its partials include
    int64_t stream_time_ms = INT64_MIN;    // the latest stream time of the partials it holds
    int64_t latest_record_ms = INT64_MIN;  // Kafka timestamp of its latest partial
    size_t buckets = 0;
    uint64_t rejected = 0;  // records of this partition rejected so far
    size_t bad_keys = 0;    // keys whose latest record was rejected: degraded while > 0
    bool degraded() const { return bad_keys > 0; }
  };
  std::vector<PartitionStatus> Partitions() const;  // by (topic, partition)
  // One partition's status and the series of the partials it holds (each series once per
  // bucket it has a value in: MergePartial's input), for a restore (ADR 0024); nullopt
  // when the view holds nothing of it.
  struct PartitionState {
    PartitionStatus status;
    std::vector<SeriesImage> series;
    std::optional<PartitionCounts> counts;  // of its newest counts record, if any
    // Kept crash-ids chunks (epoch -> chunk -> ids), and their ids by epoch.
    std::map<int64_t, std::map<uint32_t, std::vector<uint64_t>>> crash_id_chunks;
    CrashIds crash_ids;
  };
  std::optional<PartitionState> StateOf(const std::string& topic, int32_t partition) const;
  // Per degraded partition, the keys whose latest record was rejected (its owner publishes
  // them again: ADR 0023).
  std::map<std::pair<std::string, int32_t>, std::vector<std::string>> BadKeys() const;

  // Marks the ids of every series it holds (an intern sweep's marks, ADR 0021): those of
  // its partials, which are every key its states hold once built.
  void MarkIds(std::vector<uint64_t>& text, std::vector<uint64_t>& stacks) const;

  // Records rejected so far, by RecordReject (also those whose key names no partition).
  const std::array<uint64_t, kRecordRejectCount>& rejected() const { return rejected_; }
  // The newest alert state read (ADR 0024, "Alerts"), if any.
  const std::optional<AlertStateRecord>& alert_state() const { return alert_state_; }

 private:
  struct Bucket {
    uint32_t parts = 1;                         // of the newest record read for the bucket
    std::map<uint32_t, PartialRecord> by_part;  // only parts of that count
  };
  struct Held {  // a record read before the counts record that closes its publish
    std::string key;
    AggregatesRecord record;
    int64_t record_time_ms = 0;
  };
  struct Partition {
    PartitionStatus status;
    std::vector<Held> held;  // in the order read
    std::map<int64_t, Bucket> buckets;
    std::set<std::pair<int64_t, uint32_t>> bad;  // (bucket, part) whose latest record was rejected
    std::optional<PartitionCounts> counts;       // of the newest counts record
    bool bad_counts = false;                     // the newest counts record was rejected
    std::map<int64_t, std::map<uint32_t, std::vector<uint64_t>>> crash_ids;  // epoch -> chunk -> ids (kept)
    std::set<std::pair<int64_t, uint32_t>> bad_crash_ids;  // (epoch, chunk) whose latest record was rejected
    std::unique_ptr<ShardState> state;           // the partials merged; rebuilt when dirty
    std::shared_ptr<const ShardSnapshot> snapshot;
    bool dirty = true;
  };
  Partition& PartitionOf(const PartitionBucket& where);
  // Applies a partial, a tombstone or a crash-ids chunk to its partition.
  void Take(Partition& p, AggregatesRecord&& record, int64_t record_time_ms);
  // Applies the records the partition holds (their publish's counts record was read).
  void TakeHeld(Partition& p);
  // The partition's stream time: the latest of the partials it holds.
  static int64_t StreamTimeOf(const Partition& p);
  static PartitionStatus StatusOf(const Partition& p);
  void Reject(RecordReject reason, std::string_view key);

  AggregateOptions options_;
  Symbols* symbols_;
  bool keep_crash_ids_;
  std::map<std::pair<std::string, int32_t>, Partition> partitions_;
  std::array<uint64_t, kRecordRejectCount> rejected_{};
  std::optional<AlertStateRecord> alert_state_;
};

}  // namespace seismo
