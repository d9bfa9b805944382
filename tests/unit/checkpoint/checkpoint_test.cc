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
#include "seismo/app/synth.h"
#include "seismo/core/hash.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kMinute = 60'000;

Delta RandomDelta(Rng& r, int64_t t0) {
  Delta d;
  d.table = r.Chance(0.5) ? Table::kHangs : Table::kCrashes;
  int id = static_cast<int>(r.Below(300));
  if (d.table == Table::kHangs) {
    d.key = JoinKey({"bhr", "nightly", "Linux", "20261101", "parent", "Gecko", "s" + std::to_string(id), "f"});
    d.install_hash = r.Chance(0.8) ? Hash64(std::to_string(r.Below(80))) : 0;  // some pings carry no clientId
  } else {
    d.key = JoinKey({"release", "Firefox", "146.0", "20261117090501", "Linux", "parent", "parent",
                     "sig" + std::to_string(id)});
    d.install_hash = Hash64(std::to_string(r.Below(50)));
    d.doc_hash = r.Next() | 1;
  }
  d.route_hash = Hash64(d.key);
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
    auto state = std::make_unique<ShardState>(o);
    for (int i = 0; i < 2000; ++i) state->Apply(RandomDelta(r, 1'795'000'000'000));
    data.shards.push_back(state->Image());
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
  std::optional<CheckpointData> Load(std::string* problem) const { return LoadCheckpoint(dir_.string(), 60'000, problem); }
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
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), data).ok());
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
    ShardState restored{AggregateOptions{}};
    restored.RestoreBegin(loaded->shards[s], true, true);
    for (const SeriesImage& series : loaded->shards[s].series) restored.RestoreSeries(series);
    auto a = MergeSnapshots({states[s]->Snapshot()}, 60'000, AggregateOptions{}.windows_ms);
    auto b = MergeSnapshots({restored.Snapshot()}, 60'000, AggregateOptions{}.windows_ms);
    ASSERT_EQ(a->stream_time_ms, b->stream_time_ms);
    for (size_t t = 0; t < kTableCount; ++t) {
      ASSERT_EQ(a->tables[t].size(), b->tables[t].size());
      for (const auto& [key, sa] : a->tables[t]) {
        const MergedSeries& sb = b->tables[t].at(key);
        EXPECT_EQ(sa.total.v, sb.total.v);
        EXPECT_EQ(sa.total.installs.Estimate(), sb.total.installs.Estimate());
        hang_installs += t == static_cast<size_t>(Table::kHangs) && !sb.total.installs.empty();
        for (size_t i = 0; i < sa.spans.size(); ++i) EXPECT_EQ(sa.spans[i].v, sb.spans[i].v);
        ASSERT_EQ(sa.points.size(), sb.points.size());
      }
    }
    EXPECT_EQ(restored.counters().duplicates, states[s]->counters().duplicates);
  }
  EXPECT_GT(hang_installs, 100u);
}

TEST_F(CheckpointFiles, NoCheckpointIsNotAProblem) {
  std::string problem;
  EXPECT_FALSE(Load(&problem));
  EXPECT_TRUE(problem.empty());
}

TEST_F(CheckpointFiles, EveryKindOfDamageIsReportedAndSetAside) {
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), SampleCheckpoint()).ok());
  const std::string good = Read();
  struct Damage {
    const char* name;
    std::string bytes;
    const char* reason;
  };
  std::string flipped = good;
  flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 0x40);
  std::string old_version = good;
  old_version[8] = static_cast<char>(kCheckpointFormatVersion - 1);  // the previous format
  const std::string old_reason = "incompatible format version " + std::to_string(kCheckpointFormatVersion - 1);
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
  auto decoded = DecodeCheckpoint(bytes);
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().code(), StatusCode::kCorrupt);
}

TEST_F(CheckpointFiles, ADifferentBucketWidthIsIncompatible) {
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), SampleCheckpoint()).ok());
  std::string problem;
  EXPECT_FALSE(LoadCheckpoint(dir_.string(), 10'000, &problem));
  EXPECT_NE(problem.find("bucket"), std::string::npos) << problem;
}

TEST_F(CheckpointFiles, AFullDiskFailsCleanlyAndKeepsThePreviousCheckpoint) {
  CheckpointData first = SampleCheckpoint();
  ASSERT_TRUE(WriteCheckpoint(dir_.string(), first).ok());
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
  Status s = WriteCheckpoint(dir_.string(), bigger);
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

TEST_F(CheckpointFiles, AnUnwritableDirectoryIsAnErrorNotACrash) {
  fs::create_directories(dir_);
  std::ofstream((dir_ / "blocker").string()) << "x";
  Status s = WriteCheckpoint((dir_ / "blocker").string(), SampleCheckpoint());
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace seismo
