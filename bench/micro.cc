// Google Benchmark micro-benchmarks of the hot paths, on documents from the
// same generator (and seed) as scripts/bench's corpus:
//   BM_ParseMain / BM_ParseBhr / BM_ParseCrashPing   Parser::Parse of one document (a crash as
//                      a crash source gives it; ...Detected: from a source that names no kind)
//   BM_RouteEnqueue    DeltaEncoder::Encode + shard routing + batch push through an SPSC ring
//   BM_AggregateAdd    ShardState::Apply of one delta (hang series, realistic keys)
//   BM_Signature       SignatureGenerator::Generate of one crash (CrashData prepared)
//   BM_FlameTree/N     BuildFlameTree of N distinct stacks under the API's 10 000-node bound:
//                      the default flame graph's tree at N hang series (as bench/api.cc's
//                      series: a shared prefix, then a leaf of their own)
//   BM_FlameTreeFromOrder/N  the same tree from the stacks kept in frame order (StackOrder,
//                      the warm-up's), 1 % of them changed since the order was made;
//                      ...EqualLeaves: every leaf of one hang time (as bench/api.cc's), tied
//   BM_StackOrderMadeAnew/N  such an order made anew, of N leaves whose names share 29 bytes
//   BM_HangRows/N      HangRows of the default window over a snapshot of N hang series: one
//                      walk of the hang table, as the warm-up makes it before its answers
//   BM_WarmDefaultAnswers/N  WarmDefaultAnswers of a snapshot of N hang series (bench/api.cc's
//                      series documents): what the warm-up thread builds after each publish
//   BM_WarmDefaultAnswersAfterOnePercent/N  the same round after 1 % of the series changed,
//                      given what the round before left (its hang rows, updated: ADR 0034)
//   BM_WarmDefaultAnswersAfterAMinute/N  the same, the documents a minute later: the default
//                      window moves on a bucket (its rows read again, not made anew)
//   BM_Request*        a filtered view on request over 10⁶ hang series (no cache, a walk)
//   BM_View*           filtered views built ahead by the warm-up, given the round's hang rows:
//                      their groups made from the rows; BM_ViewKept*: from those kept
// Not a test: nothing here asserts a speed (SPEC §8).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "seismo/aggregate/delta.h"
#include "seismo/aggregate/releases.h"
#include "seismo/aggregate/shard_state.h"
#include "seismo/aggregate/snapshot.h"
#include "seismo/core/huge_pages.h"
#include "seismo/parse/crash_parser.h"
#include "seismo/parse/parser.h"
#include "seismo/query/answer_cache.h"
#include "seismo/query/api.h"
#include "seismo/query/flame_tree.h"
#include "seismo/query/hang_rows.h"
#include "seismo/query/id_sums.h"
#include "seismo/query/selection.h"
#include "seismo/query/stack_order.h"
#include "seismo/shard/shard_set.h"
#include "seismo/shard/spsc_ring.h"
#include "seismo/signature/generator.h"
#include "seismo/sim/synth.h"
#include "series_docs.h"

namespace seismo {
namespace {

constexpr uint64_t kSeed = 42;
constexpr size_t kPadBytes = 24 * 1024;  // as scripts/bench's corpus
constexpr size_t kDocs = 256;            // distinct documents cycled through

const SignatureGenerator& Signatures() {
  static std::unique_ptr<SignatureGenerator> gen = [] {
    auto g = SignatureGenerator::LoadDefault();
    if (!g) std::abort();
    return std::move(*g);
  }();
  return *gen;
}

std::vector<std::string> MakeDocs(DocKind kind, bool crash_ping = false) {
  SynthOptions o;
  o.seed = kSeed;
  o.pad_bytes = kPadBytes;
  Synth synth(o);
  std::vector<std::string> docs;
  for (size_t i = 0; i < kDocs; ++i) {
    switch (kind) {
      case DocKind::kMain: docs.push_back(synth.Main(i)); break;
      case DocKind::kBhr: docs.push_back(synth.Bhr(i)); break;
      case DocKind::kCrash: docs.push_back(crash_ping ? synth.CrashPing(i) : synth.ProcessedCrash(i)); break;
    }
  }
  return docs;
}

// `hints` as the source gives them: a crash source names its kind.
void RunParse(benchmark::State& state, const std::vector<std::string>& docs, DocHints hints = {}) {
  Parser parser(ParseOptions{}, &Signatures());
  size_t i = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    const std::string& d = docs[i++ % docs.size()];
    auto r = parser.Parse(d, hints);
    if (!r.ok()) state.SkipWithError("document rejected");
    benchmark::DoNotOptimize(r);
    bytes += d.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(state.iterations());
}

void BM_ParseMain(benchmark::State& state) { RunParse(state, MakeDocs(DocKind::kMain)); }
void BM_ParseBhr(benchmark::State& state) { RunParse(state, MakeDocs(DocKind::kBhr)); }
void BM_ParseCrashPing(benchmark::State& state) {
  RunParse(state, MakeDocs(DocKind::kCrash, true), DocHints{DocKind::kCrash});
}
void BM_ParseProcessedCrash(benchmark::State& state) {
  RunParse(state, MakeDocs(DocKind::kCrash), DocHints{DocKind::kCrash});
}
// The same crashes from a source that does not name its kind: read On-Demand to find it, then
// by the crash reader.
void BM_ParseCrashPingDetected(benchmark::State& state) { RunParse(state, MakeDocs(DocKind::kCrash, true)); }
void BM_ParseProcessedCrashDetected(benchmark::State& state) { RunParse(state, MakeDocs(DocKind::kCrash)); }

std::vector<ParsedDocument> ParsedMix() {
  Parser parser(ParseOptions{}, &Signatures());
  std::vector<ParsedDocument> out;
  for (DocKind k : {DocKind::kMain, DocKind::kBhr}) {
    for (const std::string& d : MakeDocs(k)) {
      auto r = parser.Parse(d);
      if (r.ok()) out.push_back(std::move(r.value()));
    }
  }
  return out;
}

// One parsed document (main or bhr, alternating) -> deltas -> per-shard batches
// -> one SPSC ring per shard (popped on the same thread to keep the ring from filling).
void BM_RouteEnqueue(benchmark::State& state) {
  const size_t shards = static_cast<size_t>(state.range(0));
  std::vector<ParsedDocument> docs = ParsedMix();
  std::vector<std::unique_ptr<SpscRing<DeltaBatchPtr>>> rings;
  for (size_t s = 0; s < shards; ++s) rings.push_back(std::make_unique<SpscRing<DeltaBatchPtr>>(1024));
  std::vector<DeltaBatchPtr> batches(shards);
  Symbols symbols;
  DeltaEncoder encoder(&symbols);
  std::vector<Delta> out;
  size_t i = 0;
  uint64_t deltas = 0;
  for (auto _ : state) {
    const ParsedDocument& doc = docs[i++ % docs.size()];
    out.clear();
    encoder.Encode(doc, EventTime{1'795'000'000'000}, out);
    for (const Delta& d : out) {
      size_t s = d.route_hash % shards;
      if (!batches[s]) batches[s] = std::make_unique<DeltaBatch>();
      batches[s]->deltas.push_back(d);
      ++deltas;
    }
    for (size_t s = 0; s < shards; ++s) {
      if (!batches[s]) continue;
      if (!rings[s]->TryPush(batches[s])) state.SkipWithError("ring full");
      batches[s].reset();
      benchmark::DoNotOptimize(rings[s]->TryPop());
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["deltas_per_doc"] = static_cast<double>(deltas) / static_cast<double>(state.iterations());
}

// Deltas of the parsed mix, applied to one shard; time advances one bucket per
// pass so windows slide as in a live stream.
void BM_AggregateAdd(benchmark::State& state) {
  std::vector<ParsedDocument> docs = ParsedMix();
  std::vector<Delta> deltas;
  Symbols symbols;
  DeltaEncoder encoder(&symbols);
  for (const ParsedDocument& d : docs) encoder.Encode(d, EventTime{1'795'000'000'000}, deltas);
  ShardState shard(AggregateOptions{}, &symbols);
  size_t i = 0;
  int64_t t = 1'795'000'000'000;
  for (auto _ : state) {
    Delta& d = deltas[i];
    d.time = EventTime{t};
    shard.Apply(d);
    if (++i == deltas.size()) {
      i = 0;
      t += 60'000;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["series"] = static_cast<double>(shard.series_count());
}

void BM_Signature(benchmark::State& state) {
  SynthOptions o;
  o.seed = kSeed;
  Synth synth(o);
  std::vector<CrashData> crashes;
  for (size_t i = 0; i < kDocs; ++i) {
    auto c = CrashDataFromProcessedJson(synth.ProcessedCrash(i));
    if (c.ok()) crashes.push_back(std::move(c.value()));
  }
  if (crashes.empty()) {
    state.SkipWithError("no crash data");
    return;
  }
  const SignatureGenerator& gen = Signatures();
  size_t i = 0;
  for (auto _ : state) {
    SignatureResult r = gen.Generate(crashes[i++ % crashes.size()]);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

// N distinct stacks as bench/api.cc's series make them: a shared prefix, then a leaf of their
// own; hang times of 977 values.
struct FlameStacks {
  Symbols symbols;
  std::vector<std::vector<Sym>> frames;
  std::vector<FlameStack> stacks;
};
// N stacks under one caller, each a leaf of its own, of `weights` distinct hang times.
std::unique_ptr<FlameStacks> MakeFlameStacks(size_t n, size_t weights = 977) {
  auto out = std::make_unique<FlameStacks>();
  Symbols& symbols = out->symbols;
  std::vector<Sym> prefix;
  for (const char* f :
       {"RtlUserThreadStart", "BaseThreadInitThunk", "mozilla::BackgroundHangThread::Run",
        "nsThread::ProcessNextEvent", "mozilla::TaskController::ExecuteNextTaskOnlyMainThread",
        "mozilla::RunnableTask::Run", "nsTimerEvent::Run", "BenchCaller"}) {
    prefix.push_back(symbols.Intern(f));
  }
  out->frames.assign(n, prefix);
  out->stacks.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    out->frames[i].push_back(symbols.Intern("BenchSeries" + std::to_string(i)));
    out->stacks.push_back({out->frames[i], static_cast<int64_t>(1000 + i % weights), 1});
  }
  return out;
}

void BM_FlameTree(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::unique_ptr<FlameStacks> w = MakeFlameStacks(n);
  // In a hash map's order, as the answer gathers them.
  std::shuffle(w->stacks.begin(), w->stacks.end(), std::mt19937_64(kSeed));
  const AnswerLimits limits;  // the API's defaults
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<FlameStack, HugePageAllocator<FlameStack>> given(w->stacks.begin(), w->stacks.end());
    state.ResumeTiming();
    FlameTree t = BuildFlameTree(given, w->symbols, limits);
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}

// The same tree from the stacks kept in frame order (StackOrder, the warm-up's), after a
// round in which 1 % of them changed sums (`changed`) or none did.
void RunFlameTreeFromOrder(benchmark::State& state, size_t weights, bool changed = true) {
  const auto n = static_cast<size_t>(state.range(0));
  std::unique_ptr<FlameStacks> w = MakeFlameStacks(n, weights);
  std::vector<IdSums::Entry> by_stack;
  for (size_t i = 0; i < n; ++i) {
    by_stack.push_back(
        {0, w->symbols.InternStack(w->frames[i]), {w->stacks[i].hang_us, w->stacks[i].hang_count}});
  }
  std::sort(by_stack.begin(), by_stack.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  StackOrder order;
  order.Update(by_stack, w->symbols, nullptr);
  for (size_t i = 0; changed && i < n; i += 100) by_stack[i].sums.hang_us *= 2;
  order.Update(by_stack, w->symbols, nullptr);
  const AnswerLimits limits;  // the API's defaults
  for (auto _ : state) {
    FlameTree t = BuildFlameTree(order, w->symbols, limits);
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
void BM_FlameTreeFromOrder(benchmark::State& state) { RunFlameTreeFromOrder(state, 977); }
// A stack order made anew (the warm-up's first round, or a view's first): N leaves under one
// caller, whose names share their first 29 bytes and are interned out of their texts' order, so
// that sorting them by text reads 8 bytes of each four times over.
void BM_StackOrderMadeAnew(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  Symbols symbols;
  const Sym caller = symbols.Intern("BenchCaller");
  std::vector<IdSums::Entry> by_stack;
  std::mt19937_64 rng(kSeed);
  for (size_t i = 0; i < n; ++i) {
    const std::vector<Sym> f{caller,
                             symbols.Intern("mozilla::dom::ContentParent::Recv" + std::to_string(rng()))};
    by_stack.push_back({0, symbols.InternStack(f), {1000, 1}});
  }
  std::sort(by_stack.begin(), by_stack.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  by_stack.erase(std::unique(by_stack.begin(), by_stack.end(),
                             [](const auto& a, const auto& b) { return a.id == b.id; }),
                 by_stack.end());
  for (auto _ : state) {
    StackOrder order;
    order.Update(by_stack, symbols, nullptr);
    benchmark::DoNotOptimize(order.entries().data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
// Every leaf of one hang time, as bench/api.cc's series documents have (each hang 200 ms): the
// kept leaves tie, and are ordered by name.
void BM_FlameTreeFromOrderEqualLeaves(benchmark::State& state) { RunFlameTreeFromOrder(state, 1); }
// Every leaf of one hang time and none changed, as in bench/api.cc between its series'
// documents: a million siblings tie for the bound's places, which go to the first names.
void BM_FlameTreeFromOrderAllTied(benchmark::State& state) { RunFlameTreeFromOrder(state, 1, false); }

// The state of N hang series (bench/api.cc's series documents), made once per N and kept
// for every run of it, with the deltas that made it; and its first snapshot.
struct SeriesWorld {
  std::shared_ptr<Symbols> symbols = std::make_shared<Symbols>();
  AggregateOptions options;
  std::unique_ptr<ShardState> state;
  std::vector<Delta> deltas;  // every document's, in order
  std::shared_ptr<const Snapshot> first;

  std::shared_ptr<const Snapshot> Snap() const {
    return MergeSnapshots({state->Snapshot()}, *symbols, options.bucket_ms, options.windows_ms,
                          options.retention_ms,
                          /*routed_by_key=*/true, symbols);
  }
};

SeriesWorld& SeriesWorldOf(size_t n) {
  static std::map<size_t, std::unique_ptr<SeriesWorld>> made;
  auto& w = made[n];
  if (w) return *w;
  w = std::make_unique<SeriesWorld>();
  w->options.max_series = n + 1000;
  w->options.memory_limit = 64ull << 30;  // no series folds into "(other)"
  w->state = std::make_unique<ShardState>(w->options, w->symbols.get());
  Parser parser(ParseOptions{}, &Signatures());
  DeltaEncoder encoder(w->symbols.get());
  for (const std::string& doc : bench::SeriesDocs(n, "2026-11-17T12:00:00.000Z")) {
    auto parsed = parser.Parse(doc);
    const std::optional<EventTime> t =
        parsed.ok() ? ResolveEventTime(parsed.value(), std::nullopt) : std::nullopt;
    if (!t) std::abort();
    encoder.Encode(parsed.value(), *t, w->deltas);
  }
  for (const Delta& d : w->deltas) w->state->Apply(d);
  w->first = w->Snap();
  return *w;
}

std::shared_ptr<const Snapshot> SeriesSnapshot(size_t n) { return SeriesWorldOf(n).first; }

// Runs `round(snap, settings)` once per iteration over the snapshot of state.range(0) hang
// series, with the API's default settings.
template <typename Round>
void OverSeriesSnapshot(benchmark::State& state, Round&& round) {
  const auto n = static_cast<size_t>(state.range(0));
  const std::shared_ptr<const Snapshot> snap = SeriesSnapshot(n);
  if (snap->table(Table::kHangs).size() < n) state.SkipWithError("fewer hang series than asked for");
  const ApiSettings settings;
  for (auto _ : state) round(snap, settings);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}

void BM_HangRows(benchmark::State& state) {
  OverSeriesSnapshot(state, [](const std::shared_ptr<const Snapshot>& snap, const ApiSettings& settings) {
    HangRows rows(*snap, DefaultWindow(settings.windows_ms), Filters{});
    benchmark::DoNotOptimize(rows.rows().data());
  });
}

// A snapshot's build index made in full (releases.h IndexSnapshot): what a first /builds
// answer or alert round of each snapshot made before the warm-up carried it (ADR 0034).
void BM_BuildIndex(benchmark::State& state) {
  OverSeriesSnapshot(state, [](const std::shared_ptr<const Snapshot>& snap, const ApiSettings&) {
    BuildIndex index = IndexSnapshot(*snap);
    benchmark::DoNotOptimize(index.hang_builds.data());
  });
}

// A request the warm-up does not build ahead, over the snapshot of 10⁶ hang series: what a
// filtered view costs on request (no cache). Over a snapshot of its own (the indexes it makes
// stay out of the other benches' snapshot): with the thread and process indexes the warm-up
// makes while a view in use filters on them (selection.h CandidateRows, ADR 0036), or
// (`walked`) without them, as before they were made.
void RunRequest(benchmark::State& state, const char* path, const char* query, bool walked = false) {
  const std::shared_ptr<const Snapshot> snap = SeriesWorldOf(1'000'000).Snap();
  if (!walked) {
    for (const IndexedAhead& i : kHangFieldsIndexedAhead) snap->RowsWithTextHash(Table::kHangs, i.field, 0);
  }
  OneSnapshot provider(snap);
  const ApiSettings settings;
  for (auto _ : state) {
    ApiAnswer a = AnswerApi(path, query, provider, settings, 0, nullptr, nullptr, nullptr);
    if (a.status != 200) state.SkipWithError(a.body.c_str());
    benchmark::DoNotOptimize(a.body.data());
  }
}
void BM_RequestHangsOneThread(benchmark::State& state) {
  RunRequest(state, "/api/v1/hangs", "thread=NoSuchThread");
}
void BM_RequestHangsOneThreadWalked(benchmark::State& state) {
  RunRequest(state, "/api/v1/hangs", "thread=NoSuchThread", /*walked=*/true);
}
void BM_RequestHangsOneOs(benchmark::State& state) { RunRequest(state, "/api/v1/hangs", "os=Windows_NT"); }
void BM_RequestFlameOneThread(benchmark::State& state) {
  RunRequest(state, "/api/v1/hangs/flamegraph", "thread=NoSuchThread");
}
void BM_RequestFlameOneThreadWalked(benchmark::State& state) {
  RunRequest(state, "/api/v1/hangs/flamegraph", "thread=NoSuchThread", /*walked=*/true);
}
void BM_RequestHangsOneProcessWalked(benchmark::State& state) {
  RunRequest(state, "/api/v1/hangs", "process=gpu", /*walked=*/true);
}
void BM_RequestHangsOneProcess(benchmark::State& state) { RunRequest(state, "/api/v1/hangs", "process=gpu"); }
void BM_RequestFlameOneSignature(benchmark::State& state) {
  RunRequest(state, "/api/v1/hangs/flamegraph", "signature=BenchSeries7");
}
void BM_RequestHangsOneSignature(benchmark::State& state) {
  RunRequest(state, "/api/v1/hangs", "signature=BenchSeries7");
}
void BM_RequestBuildsOneOs(benchmark::State& state) { RunRequest(state, "/api/v1/builds", "os=Linux"); }
// The same request over and over, with the answer cache a server has: a process filter outside
// the built-in names that no row holds (a stale link, or a client that repeats it). Its check
// walks the hang and crash tables; once per snapshot, as part of the answer kept.
void BM_RequestUnknownProcessRepeated(benchmark::State& state) {
  const std::shared_ptr<const Snapshot> snap = SeriesWorldOf(1'000'000).Snap();
  OneSnapshot provider(snap);
  const ApiSettings settings;
  AnswerCache<ApiAnswer> cache;
  for (auto _ : state) {
    ApiAnswer a = AnswerApi("/api/v1/hangs", "process=nosuchprocess", provider, settings, 0, &cache);
    if (a.status != 400) state.SkipWithError("not a 400");
    benchmark::DoNotOptimize(a.body.data());
  }
}

// Filtered views built ahead by the warm-up (WarmViews, ADR 0035), given what the round left
// (its hang rows, made once here as the round makes them for its default answers): the first
// time, their groups made from the rows (`kept` false: every time); then from those kept
// (`kept` true; a round brings them up to date with what changed, not timed here).
void RunView(benchmark::State& state, const char* path, const char* query, bool kept) {
  const std::shared_ptr<const Snapshot> snap = SeriesSnapshot(1'000'000);
  const ApiSettings settings;
  WarmCarry carry;
  carry.snap = snap;
  carry.rows.emplace(*snap, DefaultWindow(settings.windows_ms), Filters{});
  const std::vector<ApiView> views = {{path, query}};
  for (auto _ : state) {
    if (!kept) carry.DropViews();
    AnswerCache<ApiAnswer> cache;
    if (WarmViews(
            snap, settings, cache, nullptr, views, 1, [] { return false; }, &carry) != 1) {
      state.SkipWithError("not built");
    }
    benchmark::ClobberMemory();
  }
  if (carry.views_from_kept != static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("not built from what was kept");
  }
}
void BM_ViewHangsOneOs(benchmark::State& state) { RunView(state, "/api/v1/hangs", "os=Windows_NT", false); }
void BM_ViewFlameOneThread(benchmark::State& state) {
  RunView(state, "/api/v1/hangs/flamegraph", "thread=Gecko", false);
}
void BM_ViewKeptHangsOneOs(benchmark::State& state) {
  RunView(state, "/api/v1/hangs", "os=Windows_NT", true);
}
void BM_ViewKeptFlameOneThread(benchmark::State& state) {
  RunView(state, "/api/v1/hangs/flamegraph", "thread=Gecko", true);
}

void BM_WarmDefaultAnswers(benchmark::State& state) {
  SeriesWorld& w = SeriesWorldOf(static_cast<size_t>(state.range(0)));
  const ApiSettings settings;
  for (auto _ : state) {
    state.PauseTiming();
    // A snapshot of its own each time, as each publish makes one (one reused would have
    // its indexes made once, by the first round).
    std::shared_ptr<const Snapshot> snap = w.Snap();
    auto cache = std::make_unique<AnswerCache<ApiAnswer>>(size_t{1} << 30);  // every answer kept
    state.ResumeTiming();
    WarmDefaultAnswers(snap, settings, *cache, nullptr);
    benchmark::ClobberMemory();
    state.PauseTiming();
    cache.reset();
    snap.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(state.range(0)));
}

// What a round left for the next (its snapshot, rows, stack order, groups and sums), copied
// without the budget's holds (the benches give the round no budget), so that each iteration
// starts from the same.
WarmCarry KeptCopy(const WarmCarry& left) {
  WarmCarry copy;
  copy.snap = left.snap;
  copy.rows = left.rows;
  copy.stacks = left.stacks;
  copy.groups = left.groups;
  copy.buckets = left.buckets;
  copy.build_dates = left.build_dates;
  copy.filter_values_in_use = left.filter_values_in_use;
  return copy;
}

// What a warm-up round over `snap` leaves the next (its rows, orders, groups and sums), the
// round's answers thrown away.
WarmCarry LeftByARound(const std::shared_ptr<const Snapshot>& snap, const ApiSettings& settings,
                       const std::vector<std::string>& threads_in_use = {}) {
  WarmCarry left;
  left.filter_values_in_use[0] = threads_in_use;  // kHangFieldsIndexedAhead[0]: the thread's
  AnswerCache<ApiAnswer> cache(size_t{1} << 30);
  WarmDefaultAnswers(snap, settings, cache, nullptr, &left);
  return left;
}

// Each 100th document's deltas applied again (1 % of the series changed), at `at_ms` when
// given (else at their own times).
void ApplyOnePercentAgain(SeriesWorld& w, size_t n, std::optional<int64_t> at_ms = std::nullopt) {
  const size_t per_doc = std::max<size_t>(1, w.deltas.size() / n);
  for (size_t i = 0; i < w.deltas.size(); i += 100 * per_doc) {
    for (size_t j = i; j < std::min(i + per_doc, w.deltas.size()); ++j) {
      Delta d = w.deltas[j];
      if (at_ms) d.time.ms = *at_ms;
      w.state->Apply(d);
    }
  }
}

// A warm-up round after a publish that changed 1 % of the series (each 100th document's
// deltas applied again: about what changes per publish at 10⁶ series under full ingest,
// docs/benchmarks.md), given what the round over the snapshot before left (WarmCarry). With
// `threads_in_use` (a view in use filters on them), the round makes the thread index too, from
// the one the round before made (ADR 0036).
void RunAfterOnePercent(benchmark::State& state, const std::vector<std::string>& threads_in_use) {
  const auto n = static_cast<size_t>(state.range(0));
  SeriesWorld& w = SeriesWorldOf(n);
  const ApiSettings settings;
  WarmCarry left = LeftByARound(w.first, settings, threads_in_use);
  ApplyOnePercentAgain(w, n);
  std::shared_ptr<const Snapshot> after;
  for (auto _ : state) {
    state.PauseTiming();
    // A snapshot of its own each time, as each publish makes one: its indexes (text, builds)
    // are made by the round that reads it.
    after = w.Snap();
    WarmCarry carry = KeptCopy(left);
    auto cache = std::make_unique<AnswerCache<ApiAnswer>>(size_t{1} << 30);
    state.ResumeTiming();
    WarmDefaultAnswers(after, settings, *cache, nullptr, &carry);
    benchmark::ClobberMemory();
    state.PauseTiming();
    if (carry.rows_updated != 1) state.SkipWithError("the carried rows were not updated");
    if (carry.builds_carried != 1) state.SkipWithError("the build index was not made from the carried one");
    if (carry.index_carried != 1)
      state.SkipWithError("the signature index was not made from the carried one");
    if (carry.stacks_carried != 1)
      state.SkipWithError("the flame graph's stack order was not brought from the carried one");
    if (carry.groups_updated != 1)
      state.SkipWithError("the /hangs groups were not brought from the carried ones");
    if (carry.flame_sums_read != 1)
      state.SkipWithError("the flame graph did not read the kept sums by stack");
    if (carry.buckets_carried != 1)
      state.SkipWithError("the time series' sums were not brought from the carried ones");
    if (carry.build_dates_updated != 1)
      state.SkipWithError("the /builds hang sums by build date were not brought from the carried ones");
    if (after->RowsWithTextHashIfMade(Table::kHangs, hang_field::kThread, 0).has_value() !=
        !threads_in_use.empty())
      state.SkipWithError("the thread index was made where not in use, or not made where in use");
    cache.reset();
    carry = WarmCarry{};
    after.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
void BM_WarmDefaultAnswersAfterOnePercent(benchmark::State& state) { RunAfterOnePercent(state, {}); }
// A thread no series has: the index is made each round (a selective value).
void BM_WarmDefaultAnswersAfterOnePercentThreadIndexed(benchmark::State& state) {
  RunAfterOnePercent(state, {"NoSuchThread"});
}

BENCHMARK(BM_ParseMain);
BENCHMARK(BM_ParseBhr);
BENCHMARK(BM_ParseCrashPing);
BENCHMARK(BM_ParseProcessedCrash);
BENCHMARK(BM_ParseCrashPingDetected);
BENCHMARK(BM_ParseProcessedCrashDetected);
BENCHMARK(BM_RouteEnqueue)->Arg(1)->Arg(2);
BENCHMARK(BM_AggregateAdd);
BENCHMARK(BM_Signature);
BENCHMARK(BM_FlameTree)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlameTreeFromOrder)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlameTreeFromOrderEqualLeaves)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlameTreeFromOrderAllTied)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StackOrderMadeAnew)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HangRows)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildIndex)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestHangsOneThread)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestHangsOneThreadWalked)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestHangsOneProcess)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestHangsOneProcessWalked)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestHangsOneOs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestFlameOneThread)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestFlameOneThreadWalked)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestFlameOneSignature)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestHangsOneSignature)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestBuildsOneOs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RequestUnknownProcessRepeated)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ViewHangsOneOs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ViewFlameOneThread)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ViewKeptHangsOneOs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ViewKeptFlameOneThread)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WarmDefaultAnswers)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WarmDefaultAnswersAfterOnePercent)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WarmDefaultAnswersAfterOnePercentThreadIndexed)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// Times a warm-up round over a new snapshot of `w`'s state per iteration, each given what
// `left` left, and reports the share of them that updated their rows (`rows_updated`).
void TimeRoundsOver(benchmark::State& state, SeriesWorld& w, const WarmCarry& left,
                    const ApiSettings& settings, size_t n) {
  uint64_t rows_updated = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::shared_ptr<const Snapshot> after = w.Snap();
    WarmCarry carry = KeptCopy(left);
    auto cache = std::make_unique<AnswerCache<ApiAnswer>>(size_t{1} << 30);
    state.ResumeTiming();
    WarmDefaultAnswers(after, settings, *cache, nullptr, &carry);
    benchmark::ClobberMemory();
    state.PauseTiming();
    rows_updated += carry.rows_updated;
    cache.reset();
    carry = WarmCarry{};
    after.reset();
    state.ResumeTiming();
  }
  state.counters["rows_updated"] =
      static_cast<double>(rows_updated) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}

// The round after 1 % of the documents came again a minute later: stream time crosses a
// bucket boundary, so the default window moves on (its first bucket leaves it), given what
// the round before left. Its rows are read again from their series and updated (ADR 0034:
// the window's move), not made anew. Changes the shared world's state: registered last.
void BM_WarmDefaultAnswersAfterAMinute(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  SeriesWorld& w = SeriesWorldOf(n);
  const ApiSettings settings;
  WarmCarry left = LeftByARound(w.Snap(), settings);
  // A minute after the stream time (each run of this benchmark moves it on).
  ApplyOnePercentAgain(w, n, left.snap->stream_time_ms + 60'000);
  TimeRoundsOver(state, w, left, settings, n);
}
BENCHMARK(BM_WarmDefaultAnswersAfterAMinute)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// As BM_WarmDefaultAnswersAfterAMinute, with a second source ahead of stream time: before the
// round that leaves the carry, 0.1 % of the documents came again 90 s past stream time (the next bucket)
// (stream time stays: the slowest source's). The window's move then runs over values the
// snapshot before held past its end: the rows are updated across it (HangRows::ahead, ADR
// 0034), where they were made anew. Changes the shared world's state: registered last.
void BM_WarmDefaultAnswersAfterAMinuteWithASourceAhead(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  SeriesWorld& w = SeriesWorldOf(n);
  const ApiSettings settings;
  const EventTime stream{w.Snap()->stream_time_ms};
  const size_t per_doc = std::max<size_t>(1, w.deltas.size() / n);
  for (size_t i = 0; i < w.deltas.size(); i += 1000 * per_doc) {
    Delta d = w.deltas[i];
    d.time.ms = stream.ms + 90'000;
    w.state->Apply(d, stream);
  }
  WarmCarry left = LeftByARound(w.Snap(), settings);
  ApplyOnePercentAgain(w, n, left.snap->stream_time_ms + 60'000);
  TimeRoundsOver(state, w, left, settings, n);
}
BENCHMARK(BM_WarmDefaultAnswersAfterAMinuteWithASourceAhead)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// One JSON line per benchmark on stdout, like seismo_bench's measures:
// {"measure":"micro","name":...,"ns_per_op":...,"items_per_s":...,"mb_per_s":...}
class JsonLineReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) {
        std::printf("{\"measure\":\"micro\",\"name\":\"%s\",\"error\":\"%s\"}\n",
                    run.benchmark_name().c_str(), run.error_message.c_str());
        continue;
      }
      const double ns = run.GetAdjustedRealTime() * 1e9 / benchmark::GetTimeUnitMultiplier(run.time_unit);
      std::string extra;
      for (const auto& [name, counter] : run.counters) {
        std::string key = name == "items_per_second" ? "items_per_s"
                          : name == "bytes_per_second" ? "mb_per_s"
                                                       : name;
        double v = name == "bytes_per_second" ? counter.value / 1e6 : counter.value;
        char buf[96];
        std::snprintf(buf, sizeof buf, ",\"%s\":%.1f", key.c_str(), v);
        extra += buf;
      }
      std::printf("{\"measure\":\"micro\",\"name\":\"%s\",\"ns_per_op\":%.1f,\"iterations\":%lld%s}\n",
                  run.benchmark_name().c_str(), ns, static_cast<long long>(run.iterations), extra.c_str());
    }
    std::fflush(stdout);
  }
};

}  // namespace
}  // namespace seismo

int main(int argc, char** argv) {
  // --json-lines (ours) is taken out before Google Benchmark reads the flags.
  bool json_lines = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--json-lines") {
      json_lines = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (json_lines) {
    seismo::JsonLineReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}
