// Aggregates-topic records (ADR 0023): keys, round trips of both kinds, and each
// reason a record is rejected — corrupt, truncated, unknown version, key/value
// mismatch — never half-read.
#include "seismo/cluster/record.h"

#include <gtest/gtest.h>

#include "seismo/core/bytes.h"
#include "seismo/core/hash.h"
#include "support/keys.h"

namespace seismo {
namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kBucket = 29'916'666;  // 2026-11-18T…Z in minutes

PartialRecord SamplePartial(Symbols& symbols) {
  PartialRecord p;
  p.where = {"telemetry.main", 3, kBucket, 0};
  p.bucket_ms = kMinute;
  p.source_offset = 123'456;
  p.stream_time_ms = kBucket * kMinute + 59'000;
  p.owner = "node-b:8080";
  SeriesImage hang;
  hang.key = test::Key(symbols, Table::kHangs,
                       {"bhr", "nightly", "Linux", "20261101", "parent", "Gecko", "sig",
                        "a\x1e"
                        "b\x1e"
                        "c"});
  hang.first_ms = kBucket * kMinute + 5;
  hang.installs.Add(Hash64("client-1"));
  hang.entries.push_back({kBucket, {7000, 3}, {}});
  SeriesImage crash;
  crash.key =
      test::Key(symbols, Table::kCrashes,
                {"release", "Firefox", "146.0", "20261117090501", "Linux", "parent", "parent", "sig"});
  crash.first_ms = kBucket * kMinute + 1;
  crash.installs.Add(Hash64("client-2"));
  crash.entries.push_back({kBucket, {2, 1}, crash.installs});
  p.series = {hang, crash};
  return p;
}

// Rebuilds a value's frame around `payload` with a given version and kind (a record
// as another writer would make it).
std::string Framed(uint32_t version, uint8_t kind, std::string_view payload) {
  ByteWriter w;
  for (char c : kAggregatesMagic) w.U8(static_cast<uint8_t>(c));
  for (int i = 0; i < 4; ++i) w.U8(static_cast<uint8_t>((version >> (8 * i)) & 0xff));
  w.U8(kind);
  w.Fixed64(payload.size());
  w.Fixed64(Hash64(payload));
  return w.Take() + std::string(payload);
}

constexpr size_t kHeader = 29;

TEST(AggregatesKey, PartialKeysNameTopicPartitionBucketAndPart) {
  const PartitionBucket where{"telemetry.main", 3, kBucket, 2};
  EXPECT_EQ(PartialKey(where), "p/telemetry.main/3/29916666/2");
  const auto k = DecodeRecordKey(PartialKey(where));
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kind, RecordKind::kPartial);
  EXPECT_EQ(k->where, where);
  EXPECT_EQ(PartialKey({"t", 0, -5, 0}), "p/t/0/-5/0");
  EXPECT_EQ(DecodeRecordKey("p/t/0/-5/0")->where.bucket, -5);
  EXPECT_EQ(DecodeRecordKey(AlertStateKey())->kind, RecordKind::kAlertState);
}

TEST(AggregatesKey, MalformedKeysAreNotKeys) {
  for (std::string_view bad :
       {"", "p/", "p/t/1/2", "p//1/2/0", "p/t/x/2/0", "p/t/1/2x/0", "p/t/-1/2/0", "p/t/+1/2/0", "p/t/1/2/-1",
        "p/t/1/2/1024", "p/a/b/1/2/0", "q/t/1/2/0", "a/other", "p/t/99999999999/2/0", "p/t/1/2/",
        "p/t/01/2/0", "p/t/1/-0/0", "p/t/1/02/0", "p/t/1/2/00"}) {
    EXPECT_FALSE(DecodeRecordKey(bad)) << bad;
  }
}

TEST(AggregatesRecord, PartialRoundTripsThroughAnotherProcessSymbols) {
  Symbols writer;
  const PartialRecord p = SamplePartial(writer);
  const std::string value = EncodePartial(p, writer);
  Symbols reader;  // ids are the writer's own: the record carries its texts
  reader.Intern("something else first");
  RecordResult r = DecodeRecord(PartialKey(p.where), value, reader);
  ASSERT_TRUE(r.ok()) << r.detail();
  const auto& q = std::get<PartialRecord>(r.value());
  EXPECT_EQ(q.where, p.where);
  EXPECT_EQ(q.bucket_ms, kMinute);
  EXPECT_EQ(q.source_offset, 123'456);
  EXPECT_EQ(q.stream_time_ms, p.stream_time_ms);
  EXPECT_EQ(q.owner, "node-b:8080");
  ASSERT_EQ(q.series.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(test::KeyText(q.series[i].key, reader), test::KeyText(p.series[i].key, writer));
    EXPECT_EQ(q.series[i].first_ms, p.series[i].first_ms);
    EXPECT_EQ(q.series[i].installs.Estimate(), p.series[i].installs.Estimate());
    ASSERT_EQ(q.series[i].entries.size(), 1u);
    EXPECT_EQ(q.series[i].entries[0].bucket, kBucket);
    EXPECT_EQ(q.series[i].entries[0].v, p.series[i].entries[0].v);
  }
  EXPECT_EQ(q.series[1].entries[0].installs.Estimate(), 1.0 * p.series[1].entries[0].installs.Estimate());
}

TEST(AggregatesRecord, AlertStateRoundTrips) {
  const AlertStateRecord a{"host-a:8080", 1'795'000'060'000, std::string("state\0bytes", 11)};
  Symbols symbols;
  RecordResult r = DecodeRecord(AlertStateKey(), EncodeAlertState(a), symbols);
  ASSERT_TRUE(r.ok()) << r.detail();
  const auto& b = std::get<AlertStateRecord>(r.value());
  EXPECT_EQ(b.holder, a.holder);
  EXPECT_EQ(b.evaluated_ms, a.evaluated_ms);
  EXPECT_EQ(b.state, a.state);
}

TEST(AggregatesKey, CountsKeysNameTopicAndPartitionInCanonicalForm) {
  EXPECT_EQ(CountsKey("telemetry.main", 3), "c/telemetry.main/3");
  const auto k = DecodeRecordKey("c/telemetry.main/3");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kind, RecordKind::kCounts);
  EXPECT_EQ(k->where.topic, "telemetry.main");
  EXPECT_EQ(k->where.partition, 3);
  for (std::string_view bad :
       {"c/", "c/t", "c//1", "c/t/", "c/t/01", "c/t/-1", "c/t/+1", "c/a/b/1", "c/t/1x"})
    EXPECT_FALSE(DecodeRecordKey(bad)) << bad;
}

CountsRecord SampleCounts() {
  CountsRecord c{"telemetry.main", 3, 123'456, "node-b:8080", {}};
  c.counts.records.by_kind = {40, 30, 20};
  c.counts.records.rejected[static_cast<size_t>(RejectReason::kMalformedJson)] = 2;
  c.counts.records.rejected[static_cast<size_t>(RejectReason::kFutureTime)] = 1;
  c.counts.records.documents = 93;
  c.counts.records.bytes = 280'000;
  c.counts.shards = {500, 4, 6, 1, 0};
  return c;
}

TEST(AggregatesRecord, CountsRoundTrip) {
  const CountsRecord c = SampleCounts();
  Symbols symbols;
  RecordResult r = DecodeRecord(CountsKey(c.topic, c.partition), EncodeCounts(c), symbols);
  ASSERT_TRUE(r.ok()) << r.detail();
  const auto& d = std::get<CountsRecord>(r.value());
  EXPECT_EQ(d.topic, c.topic);
  EXPECT_EQ(d.partition, c.partition);
  EXPECT_EQ(d.source_offset, c.source_offset);
  EXPECT_EQ(d.owner, c.owner);
  EXPECT_EQ(d.counts.records.by_kind, c.counts.records.by_kind);
  EXPECT_EQ(d.counts.records.rejected, c.counts.records.rejected);
  EXPECT_EQ(d.counts.records.documents, 93u);
  EXPECT_EQ(d.counts.records.bytes, 280'000u);
  EXPECT_EQ(d.counts.shards.deltas, 500u);
  EXPECT_EQ(d.counts.shards.duplicates, 4u);
  EXPECT_EQ(d.counts.shards.late_dropped, 6u);
  EXPECT_EQ(d.counts.shards.folded, 1u);
}

TEST(AggregatesRecord, NullValueUnderAPartialKeyIsATombstone) {
  Symbols symbols;
  RecordResult r = DecodeRecord("p/telemetry.main/3/29916666/1", std::nullopt, symbols);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::get<Tombstone>(r.value()).where, (PartitionBucket{"telemetry.main", 3, kBucket, 1}));
}

class Rejected : public ::testing::Test {
 protected:
  void SetUp() override {
    partial_ = SamplePartial(symbols_);
    key_ = PartialKey(partial_.where);
    value_ = EncodePartial(partial_, symbols_);
  }
  void ExpectRejected(std::string_view key, std::optional<std::string_view> value, RecordReject reason) {
    RecordResult r = DecodeRecord(key, value, symbols_);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(RecordRejectName(r.reason()), RecordRejectName(reason)) << r.detail();
    EXPECT_FALSE(r.detail().empty());
  }
  std::string payload() const { return value_.substr(kHeader); }

  Symbols symbols_;
  PartialRecord partial_;
  std::string key_, value_;
};

TEST_F(Rejected, CorruptWhenAByteOfThePayloadFlips) {
  for (size_t at : {kHeader, kHeader + 5, value_.size() / 2, value_.size() - 1}) {
    std::string bad = value_;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    ExpectRejected(key_, bad, RecordReject::kCorrupt);
  }
}

TEST_F(Rejected, CorruptWhenTheMagicIsNotOurs) {
  std::string bad = value_;
  bad[3] = 'X';
  ExpectRejected(key_, bad, RecordReject::kCorrupt);
  ExpectRejected(key_, "{\"json\":1}", RecordReject::kCorrupt);
}

TEST_F(Rejected, CorruptWhenTheKeyIsNotAnAggregatesKey) {
  ExpectRejected("telemetry.main-3-29916666", value_, RecordReject::kCorrupt);
}

TEST_F(Rejected, CorruptWhenBytesFollowThePayload) {
  // The checksum covers the stated payload only: the extra bytes are caught by the length.
  ExpectRejected(key_, value_ + "x", RecordReject::kCorrupt);
}

TEST_F(Rejected, CorruptWhenTheKindIsUnknownOrThePayloadUndecodable) {
  ExpectRejected(key_, Framed(kAggregatesFormatVersion, 9, payload()), RecordReject::kCorrupt);
  // A valid frame (checksum right) around a payload cut short: a writer's bug.
  const std::string cut = payload().substr(0, payload().size() - 3);
  ExpectRejected(key_, Framed(kAggregatesFormatVersion, 1, cut), RecordReject::kCorrupt);
  ExpectRejected(AlertStateKey(),
                 Framed(kAggregatesFormatVersion, 2,
                        "\x05"
                        "ab"),
                 RecordReject::kCorrupt);
}

TEST_F(Rejected, TruncatedWhenShorterThanTheHeaderOrTheStatedLength) {
  for (size_t n : {size_t{4}, size_t{8}, kHeader - 1, kHeader, value_.size() - 1}) {
    ExpectRejected(key_, std::string_view(value_).substr(0, n), RecordReject::kTruncated);
  }
}

TEST_F(Rejected, UnknownVersionWhateverFollows) {
  ExpectRejected(key_, Framed(kAggregatesFormatVersion + 1, 1, payload()), RecordReject::kUnknownVersion);
  ExpectRejected(key_, Framed(0, 1, payload()), RecordReject::kUnknownVersion);
  // A newer writer may lay out everything after the version differently.
  std::string newer = Framed(kAggregatesFormatVersion + 1, 1, "");
  newer.resize(kHeader, '\xff');
  ExpectRejected(key_, newer, RecordReject::kUnknownVersion);
}

TEST_F(Rejected, KeyMismatchWhenTheValueIsAnotherPartitionOrBucket) {
  for (PartitionBucket other :
       {PartitionBucket{"telemetry.bhr", 3, kBucket, 0}, PartitionBucket{"telemetry.main", 4, kBucket, 0},
        PartitionBucket{"telemetry.main", 3, kBucket + 1, 0},
        PartitionBucket{"telemetry.main", 3, kBucket, 1}}) {
    ExpectRejected(PartialKey(other), value_, RecordReject::kKeyMismatch);
  }
}

TEST_F(Rejected, KeyMismatchWhenASeriesBelongsToAnotherPart) {
  // Two parts: each series belongs to the part its content hash names.
  PartialRecord p = partial_;
  p.parts = 2;
  const uint32_t home = static_cast<uint32_t>(KeyContentHash(p.series[0].key, symbols_) % 2);
  p.series = {partial_.series[0]};
  p.where.part = home;
  RecordResult ok = DecodeRecord(PartialKey(p.where), EncodePartial(p, symbols_), symbols_);
  EXPECT_TRUE(ok.ok()) << ok.detail();
  p.where.part = 1 - home;
  ExpectRejected(PartialKey(p.where), EncodePartial(p, symbols_), RecordReject::kKeyMismatch);
  // A part beyond the parts the value says the bucket has.
  p.parts = 1;
  p.series.clear();
  p.where.part = 1;
  ExpectRejected(PartialKey(p.where), EncodePartial(p, symbols_), RecordReject::kKeyMismatch);
}

TEST_F(Rejected, CorruptWhenThePartCountIsNotAPowerOfTwoUpToTheLimit) {
  for (uint32_t parts : {0u, 3u, 2048u}) {
    PartialRecord p = partial_;
    p.series.clear();
    p.parts = parts;
    ExpectRejected(key_, EncodePartial(p, symbols_), RecordReject::kCorrupt);
  }
}

TEST_F(Rejected, CorruptWhenAPartitionOrPartNumberIsOutOfRangeNotWrapped) {
  // The payload as EncodePartial lays it out, with the numbers written wide: 2^32 + 3
  // narrowed to 32 bits would be partition 3 (the key's), and 2^32 part 0.
  auto payload = [&](int64_t partition, uint64_t part) {
    ByteWriter w;
    w.Str(partial_.where.topic);
    w.I64(partition);
    w.I64(partial_.where.bucket);
    w.U64(part);
    w.U64(1);
    w.I64(partial_.bucket_ms);
    w.I64(partial_.source_offset);
    w.I64(partial_.stream_time_ms);
    w.Str(partial_.owner);
    EncodeSeriesSet(partial_.series, symbols_, w);
    return Framed(kAggregatesFormatVersion, 1, w.bytes());
  };
  RecordResult as_written = DecodeRecord(key_, payload(3, 0), symbols_);
  ASSERT_TRUE(as_written.ok()) << as_written.detail();  // the layout above is the writer's
  ExpectRejected(key_, payload((int64_t{1} << 32) + 3, 0), RecordReject::kCorrupt);
  ExpectRejected(key_, payload(-1, 0), RecordReject::kCorrupt);
  ExpectRejected(key_, payload(3, uint64_t{1} << 32), RecordReject::kCorrupt);
  ExpectRejected(key_, payload(3, kMaxPartialParts), RecordReject::kCorrupt);
}

TEST_F(Rejected, CorruptWhenASeriesIsThereTwice) {
  // Merging would count it twice; a writer never repeats a key.
  PartialRecord p = partial_;
  p.series.push_back(partial_.series[0]);
  ExpectRejected(key_, EncodePartial(p, symbols_), RecordReject::kCorrupt);
}

TEST_F(Rejected, CorruptWhenASeriesClaimsMoreEntriesThanItsBytesHold) {
  // The series' entry count raised past what the remaining bytes can hold (each entry is
  // at least its bucket and its values, a byte each): corrupt, whatever the count says.
  PartialRecord p = partial_;
  p.series = {partial_.series[1]};
  const std::string good = EncodePartial(p, symbols_);
  ASSERT_TRUE(DecodeRecord(key_, good, symbols_).ok());
  std::string body = good.substr(kHeader);
  // The crash entry is: count 1, bucket, 5 values, its HLL. Find the count byte just
  // before the bucket's varint and make it a two-byte count of 128 entries.
  ByteWriter bucket;
  bucket.I64(kBucket);
  const size_t at = body.rfind(bucket.bytes());
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(body[at - 1], '\x01');
  body.replace(at - 1, 1, std::string("\x80\x01", 2));
  ExpectRejected(key_, Framed(kAggregatesFormatVersion, 1, body), RecordReject::kCorrupt);
}

TEST_F(Rejected, KeyMismatchWhenASeriesHoldsAnotherBucket) {
  PartialRecord p = partial_;
  p.series[1].entries[0].bucket = kBucket - 1;
  ExpectRejected(key_, EncodePartial(p, symbols_), RecordReject::kKeyMismatch);
  p = partial_;
  p.series[0].entries.push_back({kBucket, {1, 1}, {}});
  ExpectRejected(key_, EncodePartial(p, symbols_), RecordReject::kKeyMismatch);
}

TEST_F(Rejected, KeyMismatchWhenTheKindsDiffer) {
  ExpectRejected(AlertStateKey(), value_, RecordReject::kKeyMismatch);
  ExpectRejected(key_, EncodeAlertState({"a", 0, "s"}), RecordReject::kKeyMismatch);
  ExpectRejected(AlertStateKey(), std::nullopt, RecordReject::kKeyMismatch);
}

TEST_F(Rejected, CountsOfAnotherPartitionUnderAKeyOrAKindTheirVersionDidNotHave) {
  const CountsRecord c = SampleCounts();
  const std::string counts = EncodeCounts(c);
  ExpectRejected(CountsKey(c.topic, 4), counts, RecordReject::kKeyMismatch);
  ExpectRejected(CountsKey("telemetry.bhr", 3), counts, RecordReject::kKeyMismatch);
  ExpectRejected(CountsKey(c.topic, 3), std::nullopt, RecordReject::kKeyMismatch);
  ExpectRejected(CountsKey(c.topic, 3), value_, RecordReject::kKeyMismatch);
  ExpectRejected(key_, counts, RecordReject::kKeyMismatch);
  // Kind 3 came with version 3: under version 2 it is no kind that version had.
  ExpectRejected(CountsKey(c.topic, 3), Framed(2, 3, counts.substr(kHeader)), RecordReject::kCorrupt);
  ExpectRejected(CountsKey(c.topic, 3), Framed(kAggregatesFormatVersion, 3, counts.substr(kHeader, 20)),
                 RecordReject::kCorrupt);
}

TEST(AggregatesKey, CrashIdsKeysNameTopicPartitionEpochAndChunkInCanonicalForm) {
  EXPECT_EQ(CrashIdsKey("telemetry.main", 3, 1246, 17), "d/telemetry.main/3/1246/17");
  const auto k = DecodeRecordKey("d/telemetry.main/3/1246/17");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kind, RecordKind::kCrashIds);
  EXPECT_EQ(k->where, (PartitionBucket{"telemetry.main", 3, 1246, 17}));
  // A chunk number is not a part: no part limit.
  EXPECT_TRUE(DecodeRecordKey("d/t/0/-3/4000000000"));
  for (std::string_view bad : {"d/t/3/1246", "d/t/3/1246/017", "d/t/3/1246/-1", "d/t/3/1246/4294967296",
                               "d/a/b/3/1246/1", "d/t/3/+1/1"})
    EXPECT_FALSE(DecodeRecordKey(bad)) << bad;
}

CrashIdsRecord SampleCrashIds() { return {"telemetry.main", 3, 1246, 17, "node-b:8080", {3, 99, 1ULL << 63}}; }

TEST(AggregatesRecord, CrashIdsRoundTripAndTheirTombstone) {
  const CrashIdsRecord c = SampleCrashIds();
  Symbols symbols;
  RecordResult r = DecodeRecord(CrashIdsKey(c.topic, c.partition, c.epoch, c.chunk), EncodeCrashIds(c), symbols);
  ASSERT_TRUE(r.ok()) << r.detail();
  const auto& d = std::get<CrashIdsRecord>(r.value());
  EXPECT_EQ(d.topic, c.topic);
  EXPECT_EQ(d.partition, 3);
  EXPECT_EQ(d.epoch, 1246);
  EXPECT_EQ(d.chunk, 17u);
  EXPECT_EQ(d.owner, c.owner);
  EXPECT_EQ(d.ids, c.ids);
  // 29 header + topic 15 + partition 1 + epoch 2 + chunk 1 + owner 12 + count 1 + 3 ids × 8.
  EXPECT_EQ(EncodeCrashIds(c).size(), 29u + 15 + 1 + 2 + 1 + 12 + 1 + 24);

  RecordResult t = DecodeRecord(CrashIdsKey(c.topic, 3, 1246, 17), std::nullopt, symbols);
  ASSERT_TRUE(t.ok()) << t.detail();
  EXPECT_EQ(std::get<Tombstone>(t.value()).kind, RecordKind::kCrashIds);
  EXPECT_EQ(std::get<Tombstone>(t.value()).where, (PartitionBucket{c.topic, 3, 1246, 17}));
}

TEST_F(Rejected, CrashIdsOfAnotherChunkUnsortedForgedOrOfAVersionWithoutThem) {
  const CrashIdsRecord c = SampleCrashIds();
  const std::string key = CrashIdsKey(c.topic, 3, 1246, 17);
  const std::string ids = EncodeCrashIds(c);
  ExpectRejected(CrashIdsKey(c.topic, 3, 1246, 18), ids, RecordReject::kKeyMismatch);
  ExpectRejected(CrashIdsKey(c.topic, 3, 1247, 17), ids, RecordReject::kKeyMismatch);
  ExpectRejected(CrashIdsKey(c.topic, 2, 1246, 17), ids, RecordReject::kKeyMismatch);
  ExpectRejected(key, value_, RecordReject::kKeyMismatch);
  ExpectRejected(key_, ids, RecordReject::kKeyMismatch);
  // Kind 4 came with version 4.
  ExpectRejected(key, Framed(3, 4, ids.substr(kHeader)), RecordReject::kCorrupt);
  ExpectRejected(key, Framed(kAggregatesFormatVersion, 4, ids.substr(kHeader, ids.size() - kHeader - 1)),
                 RecordReject::kCorrupt);
  for (const std::vector<uint64_t>& bad : {std::vector<uint64_t>{99, 3}, std::vector<uint64_t>{3, 3}}) {
    CrashIdsRecord unsorted = c;
    unsorted.ids = bad;
    ExpectRejected(key, EncodeCrashIds(unsorted), RecordReject::kCorrupt);
  }
  // Epochs and chunks at their types' ends (readers add and subtract one).
  for (auto [epoch, chunk] :
       {std::pair<int64_t, uint32_t>{INT64_MIN + 1, 0}, {INT64_MAX - 1, 0}, {5, UINT32_MAX}}) {
    CrashIdsRecord extreme = c;
    extreme.epoch = epoch;
    extreme.chunk = chunk;
    ExpectRejected(CrashIdsKey(c.topic, 3, epoch, chunk), EncodeCrashIds(extreme), RecordReject::kCorrupt);
  }
  // A count the bytes cannot hold (here 2^40 ids) reserves nothing and is rejected.
  ByteWriter w;
  w.Str(c.topic);
  w.I64(3);
  w.I64(1246);
  w.U64(17);
  w.Str(c.owner);
  w.U64(uint64_t{1} << 40);
  w.Fixed64(3);
  ExpectRejected(key, Framed(kAggregatesFormatVersion, 4, w.bytes()), RecordReject::kCorrupt);
}

TEST(RecordRejectNames, AreStable) {
  EXPECT_EQ(RecordRejectName(RecordReject::kCorrupt), "corrupt");
  EXPECT_EQ(RecordRejectName(RecordReject::kTruncated), "truncated");
  EXPECT_EQ(RecordRejectName(RecordReject::kUnknownVersion), "unknown_version");
  EXPECT_EQ(RecordRejectName(RecordReject::kKeyMismatch), "key_mismatch");
}

}  // namespace
}  // namespace seismo
