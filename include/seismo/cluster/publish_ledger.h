// PublishLedger: what one publish to the aggregates topic sends (ADR 0024, "Publishing").
//
// The publisher hands it, per source partition it owns, every partial of that partition
// now (SplitIntoPartials). The ledger remembers, per record key, a hash of what was last
// published there, and sends:
//   * each partial whose contents changed (its series' values, its part count, its
//     bucket width: everything but the source offset and stream time it carries, and the
//     series' own installs sketches and first times);
//   * each partial that is the newest bucket of a series whose installs sketch or first
//     time changed since that series' newest record was sent. Those two merge by union
//     and minimum across a series' buckets, so only the copy in its newest bucket (which
//     expires last) must be current (ADR 0023); older copies are subsets, harmless.
//     Without this rule each new install of a series would send every bucket it has;
//   * a tombstone for each key published before that the partition no longer has (a
//     bucket that expired, a part that a smaller part count left behind);
//   * a tombstone for each of `bad_keys` (the partition's keys whose records a reader
//     rejected) that it does not send again;
//   * last, the partition's counts record (c/ key) whenever its counts or its source
//     offset changed or anything else of it is sent: the record that closes a publish, up
//     to which a reader takes the publish whole (GlobalView). So the largest source offset
//     among the partition's records, which a restore seeks to, is current even when its
//     documents changed no partial (all rejected, late or repeated);
//   * the partition's crash ids that no record holds yet, as new chunks of the epoch they
//     were remembered in (d/ keys, numbered on from the partition's highest chunk), and a
//     tombstone for each chunk of an epoch older than the one before the newest: ids are
//     sent once, not with every publish, and expire with their epoch; an epoch some of whose
//     ids the state forgot early (its id memory full) is tombstoned and sent again as the
//     state holds it (ADR 0024, "Crash ids").
// Every record of a changed bucket is complete, so the newest record of each key, read
// back together, is the partition's state as of the latest publish: unchanged buckets have
// not changed since they were sent.
//
// Commit() when the publish's transaction committed; Abort() when it did not (the next
// Diff then sends everything again that is still different from the last commit);
// Uncertain() when nobody knows yet (its commit was still in progress when the publisher
// gave up on it, and may land later): the next Diff then acts as if either had happened.
//
// Threading: one thread (the source thread's barrier).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seismo/aggregate/crash_ids.h"
#include "seismo/cluster/record.h"

namespace seismo {

struct OutgoingRecord {
  std::string key;
  std::optional<std::string> value;  // nullopt: a tombstone
};

class PublishLedger {
 public:
  // Appends to `out` what partition (counts.topic, counts.partition) must send; `partials`
  // is every partial the partition has now, and `counts` its counts, both with its
  // current source offset; `crash_ids` the ids its states remember now.
  void Diff(const CountsRecord& counts, const std::vector<PartialRecord>& partials, const CrashIds& crash_ids,
            const Symbols& symbols, std::vector<OutgoingRecord>& out,
            const std::vector<std::string>& bad_keys = {});
  void Commit();
  void Abort();
  // The pending publish may or may not have committed: every key either side knows is
  // remembered as unknown, so the next Diff sends each one the partition still has and
  // tombstones each other one, sends the counts record, and sends every crash id again in
  // new chunks after tombstoning the chunks either side numbered.
  void Uncertain();
  // The partition is no longer this instance's: its keys are forgotten (its new owner
  // publishes them from now on), and nothing is tombstoned.
  void Forget(const std::string& topic, int32_t partition);
  // A record of the partition was rejected: its next Diff sends all of it again, its crash
  // ids in new chunks, and tombstones the chunks it knew of.
  void Resend(const std::string& topic, int32_t partition);
  // The partition was just assigned: the crash-ids chunks the topic holds of it (read back:
  // epoch -> chunk -> ids) are what was sent, so its next Diff sends only newer ids, numbers
  // its chunks on from theirs, and tombstones them when their epoch expires.
  using TopicCrashIds = std::map<int64_t, std::map<uint32_t, std::vector<uint64_t>>>;
  void Seed(const std::string& topic, int32_t partition, const TopicCrashIds& chunks);

  // Marks the ids of the series it remembers (an intern sweep's marks).
  void MarkIds(std::vector<uint64_t>& text, std::vector<uint64_t>& stacks) const;

  // Keys remembered (tests, /metrics).
  size_t keys() const;

 private:
  struct Sent {
    // key -> hash of its contents without the series' own sketches and first times
    std::map<std::string, uint64_t> hashes;
    // series -> hash of its installs sketch and first time as its newest bucket's record
    // carries them
    absl::flat_hash_map<SeriesKey, uint64_t> series;
    uint64_t counts = 0;  // hash of the counts record (0: none sent)
    struct EpochIds {
      // Ascending: every id a chunk of the epoch holds. Shared between the committed and the
      // pending ledger (a publish copies the pointer; new ids make a new vector).
      std::shared_ptr<const std::vector<uint64_t>> ids = std::make_shared<const std::vector<uint64_t>>();
      std::vector<uint32_t> chunks;  // the epoch's chunks in the topic
    };
    std::map<int64_t, EpochIds> crash_ids;
    uint32_t next_chunk = 0;
    std::vector<std::string> stale;  // chunk keys to tombstone (Resend)
  };
  // A hash no content has in practice: the key's record is not known (Uncertain).
  static constexpr uint64_t kUnknownHash = 0;
  // The keys of every crash-id chunk `sent` records, appended to `stale` (to tombstone).
  static void StaleChunkKeys(const std::string& topic, int32_t partition, const Sent& sent,
                             std::vector<std::string>& stale);
  // The crash-ids part of Diff: from `before` into `now`.
  static void DiffCrashIds(const std::string& topic, int32_t partition, const std::string& owner,
                           const CrashIds& crash_ids, const Sent& before, Sent& now,
                           std::vector<OutgoingRecord>& out);
  using PartitionId = std::pair<std::string, int32_t>;
  std::map<PartitionId, Sent> committed_;
  std::map<PartitionId, Sent> pending_;  // the partitions diffed since the last Commit/Abort
};

}  // namespace seismo
