// The sharded pipeline against a naive single-threaded recomputation, for
// several thread counts: results must be identical whatever the threading.
#include "seismo/shard/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

#include "seismo/core/thread_priority.h"
#include "seismo/signature/generator.h"
#include "seismo/sim/synth.h"
#include "support/keys.h"
#include "support/parsed.h"
#include "support/wait_for.h"
#include "test_scale.h"

namespace seismo {
namespace {

using UsageKey = std::tuple<std::string, std::string, std::string, std::string>;
using HangKey = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string,
                           std::string, std::vector<std::string>>;

struct Naive {
  std::map<UsageKey, std::pair<int64_t, int64_t>> usage;
  std::map<HangKey, std::pair<int64_t, int64_t>> hangs;
  std::map<std::string, std::pair<int64_t, int64_t>> crashes;  // by crash series key
  uint64_t accepted = 0, rejected = 0, duplicates = 0;
};

const SignatureGenerator& Signatures() {
  static const auto gen = SignatureGenerator::LoadDefault();
  return *gen.value();
}

// Main and bhr pings, processed crashes and crash pings, some truncated, and
// crash documents delivered twice (as Kafka redelivers): a copy later in the input,
// so that it usually lands in another chunk, on another parse worker.
std::vector<std::string> Corpus(uint64_t seed, size_t n) {
  SynthOptions o;
  o.seed = seed;
  Synth synth(o);
  Rng r(seed * 31 + 7);
  std::vector<std::string> docs;
  std::vector<std::string> redeliver;
  for (size_t i = 0; i < n; ++i) {
    double p = r.Uniform();
    std::string d = p < 0.4   ? synth.Main(i)
                    : p < 0.8 ? synth.Bhr(i)
                    : p < 0.9 ? synth.ProcessedCrash(i)
                              : synth.CrashPing(i);
    if (p >= 0.8 && r.Chance(0.2)) redeliver.push_back(d);
    if (r.Chance(0.02)) d = d.substr(0, d.size() / 2);  // truncated: malformed
    docs.push_back(std::move(d));
    if (!redeliver.empty() && r.Chance(0.05)) {
      docs.push_back(std::move(redeliver.front()));
      redeliver.erase(redeliver.begin());
    }
  }
  for (std::string& d : redeliver) docs.push_back(std::move(d));
  return docs;
}

std::string Join(std::initializer_list<std::string_view> fields, char sep = '\x1f') {
  std::string out;
  bool first = true;
  for (std::string_view f : fields) {
    if (!first) out += sep;
    first = false;
    out += f;
  }
  return out;
}

std::string JoinFrames(const std::vector<std::string>& frames) {
  std::string out;
  for (size_t i = 0; i < frames.size(); ++i) out += (i ? "\x1e" : "") + frames[i];
  return out;
}

std::string CrashKey(const ParsedDocument& d) {
  const CrashRecord& c = *d.crash;
  return Join({d.dims.channel, d.dims.product, d.dims.version, d.dims.build_id, d.dims.os, c.process,
               CrashClassName(c.crash_class), c.signature});
}

// A pipeline's final state, with the texts its ids name.
struct Result {
  std::unique_ptr<Symbols> symbols;
  std::shared_ptr<const Snapshot> snapshot;
  const std::map<std::string, test::TextTotal> Table(Table t) const { return test::Totals(*snapshot, t); }
};

Naive Recompute(const std::vector<std::string>& docs) {
  Naive n;
  Parser parser({}, &Signatures());
  std::set<std::string> seen_ids;
  for (const std::string& text : docs) {
    auto r = parser.Parse(text);
    if (!r.ok()) {
      ++n.rejected;
      continue;
    }
    ++n.accepted;
    const ParsedDocument& d = r.value();
    if (d.crash) {
      if (!d.doc_id.empty() && !seen_ids.insert(d.doc_id).second) {
        ++n.duplicates;
        continue;
      }
      auto& c = n.crashes[CrashKey(d)];
      c.first += 1;
      c.second += d.crash->startup ? 1 : 0;
      continue;
    }
    std::string source(DocKindName(d.kind));
    auto& u = n.usage[{source, d.dims.channel, d.dims.os, d.dims.build_date}];
    u.first += d.usage_ms;
    u.second += 1;
    for (size_t i = 0; i < d.hangs.size(); ++i) {
      const HangRecord& h = d.hangs[i];
      auto& s = n.hangs[{source, d.dims.channel, d.dims.os, d.dims.build_date, std::string(h.process),
                         std::string(h.thread), std::string(h.signature), test::StackOf(d, i)}];
      s.first += h.hang_us;
      s.second += static_cast<int64_t>(h.hang_count);
    }
  }
  return n;
}

Result RunSharded(const std::vector<std::string>& docs, size_t threads, PipelineCounters* out_counts,
                  uint64_t* accepted, uint64_t* rejected) {
  PipelineOptions o;
  o.parse_threads = threads;
  o.shards = threads;
  o.chunk_ring_capacity = 4;  // small rings: exercise backpressure
  o.delta_ring_capacity = 4;
  o.sources = {{"test", std::nullopt}};
  SystemClock clock;
  Result result;
  result.symbols = std::make_unique<Symbols>();
  Pipeline p(o, result.symbols.get(), &Signatures(), nullptr, &clock);
  p.Start();
  auto chunk = std::make_unique<DocChunk>();
  for (size_t i = 0; i < docs.size(); ++i) {
    DocRef ref;
    ref.begin = static_cast<uint32_t>(chunk->data.size());
    ref.length = static_cast<uint32_t>(docs[i].size());
    ref.position = static_cast<int64_t>(i);
    chunk->data += docs[i];
    chunk->docs.push_back(ref);
    if (chunk->docs.size() == 37) {
      p.Submit(std::move(chunk));
      chunk = std::make_unique<DocChunk>();
    }
  }
  p.Submit(std::move(chunk));
  p.Finish();
  (void)out_counts;
  *accepted = p.counters().records[0] + p.counters().records[1] + p.counters().records[2];
  *rejected = 0;
  for (const auto& r : p.counters().rejected) *rejected += r;
  result.snapshot = p.FinalSnapshot();
  return result;
}

void ExpectEqual(const Naive& naive, const Result& a) {
  const auto usage = a.Table(Table::kUsage);
  ASSERT_EQ(naive.usage.size(), usage.size());
  for (const auto& [k, v] : naive.usage) {
    auto it = usage.find(Join({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)}));
    ASSERT_NE(it, usage.end());
    EXPECT_EQ(it->second.total[0], v.first);
    EXPECT_EQ(it->second.total[1], v.second);
  }
  const auto hangs = a.Table(Table::kHangs);
  ASSERT_EQ(naive.hangs.size(), hangs.size());
  for (const auto& [k, v] : naive.hangs) {
    auto it = hangs.find(Join({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k),
                               std::get<5>(k), std::get<6>(k), JoinFrames(std::get<7>(k))}));
    ASSERT_NE(it, hangs.end());
    EXPECT_EQ(it->second.total[0], v.first);
    EXPECT_EQ(it->second.total[1], v.second);
  }
  const auto crashes = a.Table(Table::kCrashes);
  ASSERT_EQ(naive.crashes.size(), crashes.size());
  ASSERT_EQ(naive.crashes.size(), a.snapshot->table(Table::kCrashes).size());  // each key once
  for (const auto& [key, v] : naive.crashes) {
    auto it = crashes.find(key);
    ASSERT_NE(it, crashes.end());
    EXPECT_EQ(it->second.total[0], v.first);
    EXPECT_EQ(it->second.total[1], v.second);
  }
  EXPECT_EQ(a.snapshot->counters.duplicates, naive.duplicates);
}

TEST(Pipeline, ShardedResultEqualsNaiveRecomputationFor1And2And8Threads) {
  for (uint64_t seed = 1; seed <= test::Scaled(3, 3); ++seed) {
    std::vector<std::string> docs = Corpus(seed, 1500);
    Naive naive = Recompute(docs);
    ASSERT_GT(naive.hangs.size(), 100u);
    ASSERT_GT(naive.crashes.size(), 20u);
    ASSERT_GT(naive.duplicates, 10u);
    ASSERT_GT(naive.rejected, 0u);
    for (size_t threads : {1u, 2u, 8u}) {
      uint64_t accepted = 0, rejected = 0;
      Result a = RunSharded(docs, threads, nullptr, &accepted, &rejected);
      SCOPED_TRACE(testing::Message() << "seed " << seed << " threads " << threads);
      EXPECT_EQ(accepted, naive.accepted);
      EXPECT_EQ(rejected, naive.rejected);
      ExpectEqual(naive, a);
    }
  }
}

// Two documents with one id but different contents (a crash reprocessed with new
// annotations, say) are one crash: counted once, whichever shards their series live on.
// Which of the two is counted is the first to arrive; with several parse threads that
// order is not the input order, so only the totals are compared (ADR 0009).
TEST(Pipeline, OneIdWithDifferentContentsCountsOnceWhateverTheThreads) {
  SynthOptions o;
  o.seed = 11;
  Synth synth(o);
  std::vector<std::string> docs;
  for (size_t i = 0; i < 400; ++i) {
    std::string d = synth.ProcessedCrash(i);
    docs.push_back(d);
    // Same uuid, other dimensions (the last of duplicate keys wins, as in Python),
    // so another series key and usually another shard.
    std::string twin = d.substr(0, d.rfind('}'));
    twin += R"j(, "os_name": "Plan9", "process_type": "gpu"})j";
    docs.push_back(std::move(twin));
  }
  for (size_t threads : {1u, 2u, 8u}) {
    uint64_t accepted = 0, rejected = 0;
    Result a = RunSharded(docs, threads, nullptr, &accepted, &rejected);
    int64_t total = 0;
    for (const SeriesData* s : a.snapshot->table(Table::kCrashes)) total += s->total()[0];
    SCOPED_TRACE(testing::Message() << "threads " << threads);
    EXPECT_EQ(accepted, 800u);
    EXPECT_EQ(total, 400);
    EXPECT_EQ(a.snapshot->counters.duplicates, 400u);
    ASSERT_TRUE(a.snapshot->table(Table::kCrashes).size() > 1u);
  }
}

// A document over max_document_bytes enters its chunk as the bytes its dead letter shows and
// its size: rejected as too_large unparsed, with its real size in the letter. Also when the
// reader already cut it (a line longer than the limit) and only its start arrives.
TEST(Pipeline, ADocumentOverTheLimitIsKeptAsItsStartAndRejectedTooLarge) {
  struct Letters final : DeadLetterSink {
    void Write(const DeadLetter& l) override {
      std::lock_guard<std::mutex> lock(mu);
      got.push_back({l.reason, l.offset, l.document.size(), l.document_bytes});
    }
    uint64_t failures() const override { return 0; }
    std::mutex mu;
    std::vector<std::tuple<RejectReason, int64_t, size_t, uint64_t>> got;
  } letters;
  PipelineOptions o;
  o.parse.max_document_bytes = 1 << 20;
  o.sources = {{"test", std::nullopt}};
  SystemClock clock;
  Symbols symbols;
  Pipeline p(o, &symbols, &Signatures(), &letters, &clock);
  p.Start();
  auto chunk = std::make_unique<DocChunk>();
  const std::string big = R"({"pad":")" + std::string(3 << 20, 'x') + "\"}";
  DocRef ref;
  ref.position = 1;
  AddDocument(*chunk, ref, big, 0, o.parse.max_document_bytes);  // whole, from Kafka
  ref.position = 2;
  AddDocument(*chunk, ref, std::string_view(big).substr(0, 1 << 20), 5'000'000'000,
              o.parse.max_document_bytes);
  ref.position = 3;
  const std::string fits = std::string(R"({"type":"main","x":")") + std::string(1000, 'y') + "\"}";
  AddDocument(*chunk, ref, fits, 0, o.parse.max_document_bytes);
  EXPECT_EQ(chunk->data.size(), 2 * kMaxDeadLetterDocumentBytes + fits.size() + kParsePadding)
      << "only what the letters show, and the padding after the last document";
  EXPECT_EQ(chunk->docs[0].cut_from_bytes, big.size());
  EXPECT_EQ(chunk->docs[1].cut_from_bytes, 5'000'000'000u);
  EXPECT_EQ(chunk->docs[2].cut_from_bytes, 0u);
  EXPECT_EQ(chunk->docs[2].length, fits.size());
  p.Submit(std::move(chunk));
  p.Finish();
  EXPECT_EQ(p.counters().rejected[static_cast<size_t>(RejectReason::kTooLarge)], 2u);
  EXPECT_EQ(p.counters().bytes, big.size() + 5'000'000'000u + fits.size());
  std::sort(letters.got.begin(), letters.got.end(),
            [](const auto& a, const auto& b) { return std::get<1>(a) < std::get<1>(b); });
  ASSERT_EQ(letters.got.size(), 3u);  // the third is no main ping either: missing_build_id
  EXPECT_EQ(letters.got[0], std::make_tuple(RejectReason::kTooLarge, int64_t{1}, kMaxDeadLetterDocumentBytes,
                                            uint64_t{big.size()}));
  EXPECT_EQ(letters.got[1], std::make_tuple(RejectReason::kTooLarge, int64_t{2}, kMaxDeadLetterDocumentBytes,
                                            uint64_t{5'000'000'000}));
  EXPECT_NE(std::get<0>(letters.got[2]), RejectReason::kTooLarge);
}

// The parse workers and shard threads run `ingest_nice` steps below the thread that
// started them (the daemon's [ingest] nice); the others keep their priority.
TEST(Pipeline, IngestThreadsRunTheirNiceStepsBelowTheRest) {
  // Nice values of this process's threads, from /proc (field 19 of each task's stat).
  auto nice_values = [] {
    std::multiset<int> out;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream in(task.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const size_t after_name = stat.rfind(')');
      if (after_name == std::string::npos) continue;
      std::istringstream fields(stat.substr(after_name + 2));
      std::string field;
      for (int i = 3; i <= 19 && (fields >> field); ++i) {
      }
      out.insert(std::stoi(field));
    }
    return out;
  };
  const int base = ThisThreadNice();
  if (base > 16) GTEST_SKIP() << "this process already runs at nice " << base;
  PipelineOptions o;
  o.parse_threads = 2;
  o.shards = 3;
  o.ingest_nice = 3;
  o.sources = {{"test", std::nullopt}};
  SystemClock clock;
  Symbols symbols;
  Pipeline p(o, &symbols, &Signatures(), nullptr, &clock);
  const size_t lowered_before = nice_values().count(base + 3);
  p.Start();
  // Each thread lowers its own priority as it starts.
  EXPECT_TRUE(test::WaitFor([&] { return nice_values().count(base + 3) == lowered_before + 5; },
                            std::chrono::seconds(10), std::chrono::milliseconds(5)))
      << "2 parse workers and 3 shard threads";
  EXPECT_EQ(ThisThreadNice(), base) << "the starting thread keeps its priority";
  p.Finish();
}

}  // namespace
}  // namespace seismo
