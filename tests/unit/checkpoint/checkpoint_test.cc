// Checkpoint files: round trip, and every way a file can be bad — each is
// reported, never half-loaded, and set aside under a name of its own; a failed
// write keeps the old one.
#include "seismo/checkpoint/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/sim/synth.h"
#include "seismo/core/bytes.h"
#include "seismo/core/hash.h"
#include "support/keys.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kMinute = 60'000;

Symbols& Sym() {
  static Symbols* symbols = new Symbols();  // shared by this file's tests, never freed
  return *symbols;
}

Delta RandomDelta(Rng& r, int64_t t0) {
  Delta d;
  const bool hang = r.Chance(0.5);
  int id = static_cast<int>(r.Below(300));
  if (hang) {
    d = test::MakeDelta(Sym(), Table::kHangs,
                        {"bhr", "nightly", "Linux", "20261101", "parent", "Gecko", "s" + std::to_string(id), "f"});
    d.install_hash = r.Chance(0.8) ? Hash64(std::to_string(r.Below(80))) : 0;  // some pings carry no clientId
  } else {
    d = test::MakeDelta(Sym(), Table::kCrashes,
                        {"release", "Firefox", "146.0", "20261117090501", "Linux", "parent", "parent",
                         "sig" + std::to_string(id)});
    d.install_hash = Hash64(std::to_string(r.Below(50)));
    d.doc_hash = r.Next() | 1;
  }
  d.time = EventTime{t0 + static_cast<int64_t>(r.Below(3 * 86'400'000ull))};
  d.values[0] = r.Between(1, 1000);
  d.values[1] = 1;
  return d;
}

CheckpointData SampleCheckpoint(std::vector<std::unique_ptr<ShardState>>* states = nullptr) {
  AggregateOptions o;
  CheckpointData data;
  data.written_at_ms = 1'795'000'000'000;
  data.bucket_ms = o.bucket_ms;
  data.counts.by_kind = {10, 20, 30};
  data.counts.rejected[2] = 4;
  data.counts.documents = 64;
  data.counts.bytes = 12345;
  data.kafka_offsets[{"telemetry.main", 3}] = 1000;
  data.kafka_offsets[{"socorro.processed", 0}] = 7;
  data.file_lines["archive.ndjson.zst"] = 5000;
  data.alerts = std::string("alert\0state", 11);
  Rng r(5);
  for (int s = 0; s < 2; ++s) {
    auto state = std::make_unique<ShardState>(o, &Sym());
    for (int i = 0; i < 2000; ++i) state->Apply(RandomDelta(r, 1'795'000'000'000));
    data.shards.push_back(state->Image());
    data.shards.back().shard = static_cast<uint32_t>(s);
    if (states != nullptr) states->push_back(std::move(state));
  }
  return data;
}

class CheckpointFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("seismo-ckpt-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path() const { return (dir_ / std::string(kCheckpointFile)).string(); }
  std::string Read() const { return Slurp(Path()); }
  void Overwrite(const std::string& bytes) const { std::ofstream(Path(), std::ios::binary) << bytes; }
  size_t SetAside() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) n += e.path().filename().string().find(".bad-") != std::string::npos;
    return n;
  }
  std::optional<CheckpointData> Load(std::string* problem) const {
    return LoadCheckpoint(dir_.string(), 60'000, Sym(), problem);
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
};

TEST_F(CheckpointFiles, RoundTripRestoresTheSameState) {
  std::vector<std::unique_ptr<ShardState>> states;
  CheckpointData data = SampleCheckpoint(&states);
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), data, Sym()).ok());
  std::string problem;
  auto loaded = Load(&problem);
  ASSERT_TRUE(loaded) << problem;
  EXPECT_EQ(loaded->counts.by_kind, data.counts.by_kind);
  EXPECT_EQ(loaded->counts.rejected, data.counts.rejected);
  EXPECT_EQ(loaded->kafka_offsets, data.kafka_offsets);
  EXPECT_EQ(loaded->file_lines, data.file_lines);
  EXPECT_EQ(loaded->alerts, data.alerts);
  ASSERT_EQ(loaded->shards.size(), 2u);
  // Restored into a fresh state the snapshot is identical, totals, spans, points and installs
  // (of hang series too).
  size_t hang_installs = 0;
  for (size_t s = 0; s < 2; ++s) {
    ShardState restored{AggregateOptions{}, &Sym()};
    restored.RestoreBegin(loaded->shards[s], true, true);
    for (const SeriesImage& series : loaded->shards[s].series) restored.RestoreSeries(series);
    const AggregateOptions o;
    auto a = MergeSnapshots({states[s]->Snapshot()}, Sym(), o.bucket_ms, o.windows_ms, o.retention_ms);
    auto b = MergeSnapshots({restored.Snapshot()}, Sym(), o.bucket_ms, o.windows_ms, o.retention_ms);
    ASSERT_EQ(a->stream_time_ms, b->stream_time_ms);
    for (size_t t = 0; t < kTableCount; ++t) {
      const Table table = static_cast<Table>(t);
      ASSERT_EQ(a->table(table).size(), b->table(table).size());
      const auto& sorted_b = b->sorted(table);
      for (size_t k = 0; k < a->sorted(table).size(); ++k) {
        const SeriesData& sa = *a->sorted(table)[k];
        const SeriesData& sb = *sorted_b[k];
        ASSERT_EQ(sa.key, sb.key);
        EXPECT_EQ(sa.total(), sb.total());
        EXPECT_EQ(sa.installs.Estimate(), sb.installs.Estimate());
        EXPECT_EQ(sa.first_ms, sb.first_ms);
        hang_installs += table == Table::kHangs && !sb.installs.empty();
        for (size_t i = 0; i < a->spans_ms.size(); ++i) {
          EXPECT_EQ(a->Span(sa, i), b->Span(sb, i));
          EXPECT_EQ(a->SpanInstalls(sa, i).Estimate(), b->SpanInstalls(sb, i).Estimate());
        }
        ASSERT_EQ(a->Points(sa).size(), b->Points(sb).size());
      }
    }
    EXPECT_EQ(restored.counters().duplicates, states[s]->counters().duplicates);
  }
  EXPECT_GT(hang_installs, 100u);
}

// Format 5: each image's shard, and the source partition whose state it is (a
// partition-scoped pipeline's; none for an unscoped one), come back as written.
TEST_F(CheckpointFiles, EachImagesShardAndSourcePartitionComeBack) {
  CheckpointData data = SampleCheckpoint();
  data.shards[0].shard = 3;
  data.partitions = {std::make_pair(std::string("telemetry.main"), 3), std::nullopt};
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), data, Sym()).ok());
  std::string problem;
  auto loaded = Load(&problem);
  ASSERT_TRUE(loaded) << problem;
  ASSERT_EQ(loaded->shards.size(), 2u);
  EXPECT_EQ(loaded->shards[0].shard, 3u);
  EXPECT_EQ(loaded->shards[1].shard, 1u);
  EXPECT_EQ(loaded->partitions, data.partitions);
  EXPECT_EQ(Read()[8], 5);  // the format version
  // An unscoped pipeline's (one image per shard, in order, of no partition) is written in
  // format 4, which the previous release reads, and comes back the same.
  data.partitions.clear();
  data.shards[0].shard = 0;
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), data, Sym()).ok());
  EXPECT_EQ(Read()[8], 4);
  loaded = Load(&problem);
  ASSERT_TRUE(loaded) << problem;
  EXPECT_TRUE(loaded->partitions.empty());
  EXPECT_EQ(loaded->shards[0].shard, 0u);
  EXPECT_EQ(loaded->shards[1].shard, 1u);
}

// Format 6: each source partition's record counts (a partition-scoped pipeline's) come
// back as written; without them the checkpoint is still written as format 5.
TEST_F(CheckpointFiles, EachPartitionsRecordCountsComeBack) {
  CheckpointData data = SampleCheckpoint();
  data.partitions = {std::make_pair(std::string("telemetry.main"), 3), std::nullopt};
  RecordCounts three;
  three.by_kind = {5, 6, 7};
  three.rejected[static_cast<size_t>(RejectReason::kFutureTime)] = 2;
  three.documents = 20;
  three.bytes = 4096;
  data.source_counts[{"telemetry.main", 3}] = three;
  data.source_counts[{"telemetry.bhr", 0}] = RecordCounts{};
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), data, Sym()).ok());
  EXPECT_EQ(Read()[8], 6);
  std::string problem;
  auto loaded = Load(&problem);
  ASSERT_TRUE(loaded) << problem;
  ASSERT_EQ(loaded->source_counts.size(), 2u);
  const RecordCounts& back = loaded->source_counts.at({"telemetry.main", 3});
  EXPECT_EQ(back.by_kind, three.by_kind);
  EXPECT_EQ(back.rejected, three.rejected);
  EXPECT_EQ(back.documents, 20u);
  EXPECT_EQ(back.bytes, 4096u);
  EXPECT_EQ(loaded->partitions, data.partitions);
  data.source_counts.clear();
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), data, Sym()).ok());
  EXPECT_EQ(Read()[8], 5);
}

TEST_F(CheckpointFiles, NoCheckpointIsNotAProblem) {
  std::string problem;
  EXPECT_FALSE(Load(&problem));
  EXPECT_TRUE(problem.empty());
}

TEST_F(CheckpointFiles, EveryKindOfDamageIsReportedAndSetAside) {
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), SampleCheckpoint(), Sym()).ok());
  const std::string good = Read();
  struct Damage {
    const char* name;
    std::string bytes;
    const char* reason;
  };
  std::string flipped = good;
  flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 0x40);
  std::string old_version = good;
  old_version[8] = static_cast<char>(kOldestReadableCheckpointVersion - 1);  // a format no longer read
  const std::string old_reason =
      "incompatible format version " + std::to_string(kOldestReadableCheckpointVersion - 1);
  std::vector<Damage> cases = {
      {"flipped byte", flipped, "checksum mismatch"},
      {"truncated", good.substr(0, good.size() - 100), "truncated"},
      {"header only", good.substr(0, 20), "not a seismo checkpoint"},
      {"empty", "", "not a seismo checkpoint"},
      {"other file", "{\"json\": true}", "not a seismo checkpoint"},
      {"older format", old_version, old_reason.c_str()},
  };
  size_t aside = 0;
  for (const Damage& d : cases) {
    Overwrite(d.bytes);
    std::string problem;
    EXPECT_FALSE(Load(&problem)) << d.name;
    EXPECT_NE(problem.find(d.reason), std::string::npos) << d.name << ": " << problem;
    EXPECT_EQ(Read(), d.bytes) << d.name << ": loading must leave the evidence alone";
    // Set aside one after the other, within the same millisecond: each keeps a name of its own.
    Result<std::string> moved = SetAsideCheckpoint(dir_.string());
    ASSERT_TRUE(moved) << d.name << ": " << moved.error().message();
    EXPECT_FALSE(fs::exists(Path())) << d.name;
    EXPECT_EQ(Slurp(*moved), d.bytes) << d.name;
    EXPECT_EQ(SetAside(), ++aside) << d.name;
  }
}

TEST_F(CheckpointFiles, SettingAsideNeverOverwritesAnEarlierBadFile) {
  fs::create_directories(dir_);
  std::set<std::string> names;
  for (int i = 0; i < 50; ++i) {
    Overwrite("bad checkpoint " + std::to_string(i));
    Result<std::string> moved = SetAsideCheckpoint(dir_.string());
    ASSERT_TRUE(moved) << moved.error().message();
    names.insert(*moved);
  }
  ASSERT_EQ(names.size(), 50u);
  EXPECT_EQ(SetAside(), 50u);
  std::set<std::string> contents;
  for (const std::string& n : names) contents.insert(Slurp(n));
  EXPECT_EQ(contents.size(), 50u) << "a bad file was overwritten by a later one";
  Result<std::string> none = SetAsideCheckpoint(dir_.string());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kNotFound);
}

// A directory the process may not write to (a read-only mount, or another owner): the
// rename fails, and nothing claims it happened. Root may rename anywhere, so the attempt
// runs in a child process that gave up root first.
TEST_F(CheckpointFiles, ARenameThatFailsIsReportedAndTheFileStaysWhereItWas) {
  fs::create_directories(dir_);
  Overwrite("not a checkpoint");
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    Result<std::string> moved = SetAsideCheckpoint(dir_.string());
    const std::string message = moved ? "moved aside to " + *moved : moved.error().message();
    (void)!write(pipe_fds[1], message.data(), message.size());
    _exit(moved ? 1 : moved.error().code() == StatusCode::kIoError ? 0 : 2);
  }
  close(pipe_fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof(buf))) > 0;) message.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  fs::permissions(dir_, fs::perms::owner_all);
  ASSERT_TRUE(WIFEXITED(status)) << message;
  EXPECT_EQ(WEXITSTATUS(status), 0) << message;
  EXPECT_NE(message.find("cannot move"), std::string::npos) << message;
  EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
  EXPECT_EQ(message.find("moved aside"), std::string::npos) << message;
  EXPECT_EQ(Read(), "not a checkpoint");
  EXPECT_EQ(SetAside(), 0u);
}

TEST_F(CheckpointFiles, ValidChecksumButUndecodablePayloadIsCorrupt) {
  // A payload that passes the checksum but lies about its counts must not be half-loaded.
  std::string payload = "\x01\x02\xff\xff\xff\xff\x0f";
  std::string bytes = "SEISMOCP";
  bytes += std::string("\x01\x00\x00\x00", 4);
  uint64_t len = payload.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  uint64_t h = Hash64(payload);
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((h >> (8 * i)) & 0xff));
  bytes += payload;
  auto decoded = DecodeCheckpoint(bytes, Sym());
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().code(), StatusCode::kCorrupt);
}

TEST_F(CheckpointFiles, APartitionNumberOutOfRangeIsCorrupt) {
  // Kafka partitions are 0 … 2^31-1; anything else is damage, never a partition to seek.
  for (int32_t bad : {-1, INT32_MIN}) {
    CheckpointData data = SampleCheckpoint();
    data.kafka_offsets[{"telemetry.main", bad}] = 5;
    auto decoded = DecodeCheckpoint(EncodeCheckpoint(data, Sym()), Sym());
    ASSERT_FALSE(decoded) << bad;
    EXPECT_EQ(decoded.error().code(), StatusCode::kCorrupt);
  }
}

TEST_F(CheckpointFiles, ADifferentBucketWidthIsIncompatible) {
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), SampleCheckpoint(), Sym()).ok());
  std::string problem;
  EXPECT_FALSE(LoadCheckpoint(dir_.string(), 10'000, Sym(), &problem));
  EXPECT_NE(problem.find("bucket"), std::string::npos) << problem;
}

TEST_F(CheckpointFiles, AFullDiskFailsCleanlyAndKeepsThePreviousCheckpoint) {
  CheckpointData first = SampleCheckpoint();
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), first, Sym()).ok());
  const std::string before = Read();
  // The kernel refuses writes past RLIMIT_FSIZE (EFBIG) exactly like a full disk.
  struct rlimit old_limit{};
  getrlimit(RLIMIT_FSIZE, &old_limit);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  CheckpointData bigger = first;
  bigger.counts.documents = 999;
  Status s = WriteCheckpoint(dir_.string(), bigger, Sym());
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(Read(), before);
  EXPECT_FALSE(fs::exists(Path() + ".tmp"));
  std::string problem;
  auto loaded = Load(&problem);
  ASSERT_TRUE(loaded) << problem;
  EXPECT_EQ(loaded->counts.documents, 64u);
}

// Format 2 (keys as strings joined by \x1f, a stack's frames by \x1e, an installs sketch
// on every bucket) is still read: an upgrade keeps what the last checkpoint holds.
TEST_F(CheckpointFiles, AFormatTwoCheckpointIsStillRead) {
  ByteWriter w;
  w.I64(1'795'000'000'000);  // written_at_ms
  w.I64(60'000);             // bucket_ms
  for (uint64_t v : {1u, 2u, 3u}) w.U64(v);
  w.U64(0);  // reject reasons
  w.U64(6);  // documents
  w.U64(600);
  w.U64(0);  // kafka offsets
  w.U64(0);  // files
  w.U64(1);  // shards
  w.I64(1'795'000'000'000);  // stream time
  for (int i = 0; i < 5; ++i) w.U64(0);  // counters
  w.I64(INT64_MIN);  // dedup epoch
  w.U64(0);
  w.U64(0);
  w.U64(2);  // series
  w.U8(static_cast<uint8_t>(Table::kHangs));
  w.Str("bhr\x1fnightly\x1fLinux\x1f" "20261101\x1fparent\x1fGecko\x1fsig\x1f" "a\x1e" "b\x1esig");
  w.I64(1'795'000'000'000);
  w.U64(1);
  w.I64(1'795'000'000'000 / kMinute);
  w.I64(5000);
  w.I64(2);
  w.U8(1);  // a sparse sketch of one install
  w.U64(1);
  w.U64((7u << 8) | 3u);
  w.U8(static_cast<uint8_t>(Table::kUsage));
  w.Str("bhr\x1fnightly\x1fLinux\x1f" "20261101");
  w.I64(1'795'000'000'000);
  w.U64(1);
  w.I64(1'795'000'000'000 / kMinute);
  w.I64(3'600'000);
  w.I64(1);
  w.U8(0);
  w.Str("");  // alerts
  const std::string payload = w.Take();
  std::string bytes = "SEISMOCP";
  bytes += std::string("\x02\x00\x00\x00", 4);
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((payload.size() >> (8 * i)) & 0xff));
  const uint64_t h = Hash64(payload);
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((h >> (8 * i)) & 0xff));
  bytes += payload;
  auto decoded = DecodeCheckpoint(bytes, Sym());
  ASSERT_TRUE(decoded) << decoded.error().message();
  ASSERT_EQ(decoded->shards.size(), 1u);
  EXPECT_EQ(decoded->shards[0].shard, 0u);  // one image per shard, in shard order
  EXPECT_TRUE(decoded->partitions.empty());
  ASSERT_EQ(decoded->shards[0].series.size(), 2u);
  const SeriesImage& hang = decoded->shards[0].series[0];
  EXPECT_EQ(test::KeyText(hang.key, Sym()),
            "bhr\x1fnightly\x1fLinux\x1f" "20261101\x1fparent\x1fGecko\x1fsig\x1f" "a\x1e" "b\x1esig");
  EXPECT_EQ(Sym().Frames(hang.key[hang_field::kStack]).size(), 3u);
  EXPECT_EQ(hang.entries[0].v[0], 5000);
  EXPECT_NEAR(hang.installs.Estimate(), 1.0, 0.01);
  EXPECT_TRUE(hang.entries[0].installs.empty());  // only crash buckets keep a sketch now
}

TEST_F(CheckpointFiles, AnUnwritableDirectoryIsAnErrorNotACrash) {
  fs::create_directories(dir_);
  std::ofstream((dir_ / "blocker").string()) << "x";
  Status s = WriteCheckpoint((dir_ / "blocker").string(), SampleCheckpoint(), Sym());
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace seismo
