#include "seismo/sim/synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "seismo/core/json_writer.h"

namespace seismo {

// ---------------------------------------------------------------- Rng

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& s : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    s = z ^ (z >> 31);
  }
}

uint64_t Rng::Next() {
  auto rotl = [](uint64_t v, int k) { return (v << k) | (v >> (64 - k)); };
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
uint64_t Rng::Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }
int64_t Rng::Between(int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo + 1)));
}

size_t Rng::Zipf(size_t n, double s) {
  // Inverse-CDF over a harmonic series approximation: rank ~ n^u shaped.
  double u = Uniform();
  double h = 0;
  for (size_t k = 1; k <= n; ++k) h += 1.0 / std::pow(static_cast<double>(k), s);
  double target = u * h;
  double acc = 0;
  for (size_t k = 1; k <= n; ++k) {
    acc += 1.0 / std::pow(static_cast<double>(k), s);
    if (acc >= target) return k - 1;
  }
  return n - 1;
}

double Rng::LogNormal(double mu, double sigma) {
  // Box-Muller.
  double u1 = Uniform();
  double u2 = Uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
  return std::exp(mu + sigma * z);
}

std::string Rng::Uuid() {
  uint64_t a = Next();
  uint64_t b = Next();
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                     a & 0xfff, 8 + (b >> 62), (b >> 48) & 0xfff, b & 0xffffffffffffULL);
}

// ---------------------------------------------------------------- vocabularies

namespace {

constexpr const char* kLabels[] = {
    "Startup::XRE_Main", "Events::ProcessGeckoEvents", "Timer::Fire", "nsRefreshDriver::Tick",
    "PresShell::DoFlushPendingNotifications Layout", "PresShell::DoReflow",
    "nsViewManager::ProcessPendingUpdates", "IPDL::PBrowser::RecvAsyncMessage",
    "Startup::XRE_InitChildProcess", "nsJSContext::GarbageCollectNow", "js::RunScript",
    "JS::EvaluateString", "mozilla::dom::Promise::MaybeResolve", "nsDocShell::LoadURI",
    "imgRequest::OnDataAvailable", "gfxFontGroup::FindFontForChar", "nsStyleSet::ResolveStyleFor",
    "mozilla::places::History::VisitURI", "nsHttpChannel::OnStartRequest",
    "mozilla::storage::Connection::ExecuteSimpleSQL", "SessionStore::collectData",
    "mozilla::dom::ContentParent::RecvSyncMessage", "BackgroundHangMonitor::NotifyWait",
    "resource://gre/modules/SessionStore.jsm:812", "chrome://browser/content/tabbrowser.js:4410",
    "nsCycleCollector::Collect", "mozilla::layers::CompositorBridgeChild::SendFlush",
};
constexpr const char* kMarkers[] = {"(chrome script)", "(content script)", "(unresolved)",
                                    "(jit frame)", "(wasm)"};
constexpr const char* kModules[][2] = {
    {"xul.pdb", "146C491F690333ACAF0D7B08B67CB2000"}, {"ntdll.pdb", "0F2F1C5A1C7A4B5FA3F4C1D2E3F40A1B1"},
    {"kernel32.pdb", "5A8C3B2D1E0F4A5B8C7D6E5F4A3B2C1D1"}, {"nss3.pdb", "7B6A5C4D3E2F1A0B9C8D7E6F5A4B3C2D1"},
    {"mozglue.pdb", "1D2C3B4A5F6E7D8C9B0A1F2E3D4C5B6A1"}, {"user32.pdb", "9E8D7C6B5A4F3E2D1C0B9A8F7E6D5C4B1"},
};
constexpr const char* kFunctions[] = {
    "mozilla::dom::Element::SetAttribute(int, nsAtom*, nsAString const&, bool)",
    "mozilla::dom::HTMLMediaElement::Load()", "js::GCMarker::markChildren(JSObject*)",
    "nsTArray_Impl<mozilla::dom::Foo, nsTArrayInfallibleAllocator>::AppendElement<mozilla::dom::Foo&>",
    "mozilla::ipc::MessageChannel::Send(mozilla::UniquePtr<IPC::Message>)",
    "mozilla::layers::WebRenderBridgeParent::RecvEmptyTransaction()",
    "nsGlobalWindowInner::RunTimeoutHandler(mozilla::dom::Timeout*, nsIScriptContext*)",
    "mozilla::net::nsHttpConnection::OnSocketReadable()", "IPC::Channel::ChannelImpl::ProcessIncomingMessages()",
    "mozilla::gfx::DrawTargetD2D1::Flush()", "static void js::jit::InvalidateAll(JS::GCContext*, JS::Zone*)",
    "style::traversal::recalc_style_at<style::gecko::wrapper::GeckoElement>",
    "core::option::expect_failed", "webrender::renderer::Renderer::render",
    "mozilla::dom::WorkerPrivate::DoRunLoop(JSContext*)", "std::_Hash<std::_Umap_traits<int> >::_Forced_rehash(unsigned int)",
};
constexpr const char* kIrrelevant[] = {"RtlUserThreadStart", "BaseThreadInitThunk", "KiUserExceptionDispatcher",
                                       "mozalloc_abort", "MOZ_Crash", "abort", "NtWaitForMultipleObjects"};

struct Population {
  std::vector<SynthBuild> builds;
};

std::vector<SynthBuild> DefaultBuilds() {
  return {
      {"release", "145.0", "20261020093012", 30},   {"release", "145.0.1", "20261104101522", 35},
      {"release", "146.0", "20261117090501", 10},   {"beta", "146.0b8", "20261110151200", 5},
      {"beta", "146.0b9", "20261113151200", 6},     {"beta", "147.0b1", "20261117151200", 4},
      {"nightly", "147.0a1", "20261116094433", 2},  {"nightly", "147.0a1", "20261117094433", 2},
      {"nightly", "147.0a1", "20261118094433", 2},  {"esr", "140.5.0esr", "20261027120000", 4},
  };
}

// A fixed pool of stacks, the same for every seed (stacks are the identity of
// a hang; the seed only decides which are drawn).
std::vector<std::vector<std::string>> LegacyStackPool() {
  Rng r(0x5eed);
  std::vector<std::vector<std::string>> pool;
  for (int i = 0; i < 400; ++i) {
    std::vector<std::string> stack = {"Startup::XRE_Main"};
    int depth = static_cast<int>(r.Between(1, 9));
    for (int d = 0; d < depth; ++d) stack.push_back(kLabels[r.Below(std::size(kLabels))]);
    if (r.Chance(0.25)) stack.push_back(kMarkers[r.Below(2)]);
    pool.push_back(std::move(stack));
  }
  return pool;
}

// bhr stack elements: strings, or {module, offset} native frames.
struct BhrFrame {
  int64_t module = -1;  // -1 with empty label = unknown-module native frame
  std::string text;     // label, or hex offset
  bool native = false;
};

// A bhr stack of 2-40 elements: native frames (55 %, 3 % of them of an unknown
// module), labels (30 %) and markers (15 %).
std::vector<BhrFrame> RandomBhrStack(Rng& r) {
  std::vector<BhrFrame> stack;
  int depth = static_cast<int>(r.Between(2, 40));
  for (int d = 0; d < depth; ++d) {
    double p = r.Uniform();
    if (p < 0.55) {
      int64_t m = r.Chance(0.03) ? -1 : static_cast<int64_t>(r.Below(std::size(kModules)));
      stack.push_back({m, fmt::format("{:x}", r.Between(0x1000, 0x3ffffff)), true});
    } else if (p < 0.85) {
      stack.push_back({0, kLabels[r.Below(std::size(kLabels))], false});
    } else {
      stack.push_back({0, kMarkers[r.Below(std::size(kMarkers))], false});
    }
  }
  return stack;
}

std::vector<std::vector<BhrFrame>> BhrStackPool(uint64_t seed, int size) {
  Rng r(seed);
  std::vector<std::vector<BhrFrame>> pool;
  for (int i = 0; i < size; ++i) pool.push_back(RandomBhrStack(r));
  return pool;
}

const std::vector<std::vector<std::string>>& Legacy() {
  static const auto pool = LegacyStackPool();
  return pool;
}
const std::vector<std::vector<BhrFrame>>& BhrPool() {
  static const auto pool = BhrStackPool(0xb4e, 600);
  return pool;
}

// ---------------------------------------------------------------- the dense profile

// Zipf ranks by binary search over precomputed cumulative weights, O(log n) a draw
// (Rng::Zipf is O(n): fine for the default profile's vocabularies of a few hundred,
// too slow for the dense profile's tens of thousands). Same distribution.
class ZipfTable {
 public:
  ZipfTable(size_t n, double s) : cumulative_(n) {
    double acc = 0;
    for (size_t k = 1; k <= n; ++k) cumulative_[k - 1] = acc += 1.0 / std::pow(static_cast<double>(k), s);
  }
  size_t Draw(Rng& r) const {
    const double target = r.Uniform() * cumulative_.back();
    auto it = std::lower_bound(cumulative_.begin(), cumulative_.end(), target);
    return std::min<size_t>(static_cast<size_t>(it - cumulative_.begin()), cumulative_.size() - 1);
  }

 private:
  std::vector<double> cumulative_;
};

constexpr const char* kScripts[] = {
    "resource://gre/modules/SessionStore.sys.mjs",
    "chrome://browser/content/tabbrowser/tabbrowser.js",
    "resource://gre/modules/ExtensionContent.sys.mjs",
    "resource:///modules/sessionstore/SessionFile.sys.mjs",
    "chrome://global/content/elements/browser-custom-element.js",
    "resource://gre/actors/AutoCompleteChild.sys.mjs",
    "resource://gre/modules/PromiseWorker.sys.mjs",
    "resource://gre/modules/Preferences.sys.mjs",
    "chrome://browser/content/browser.js",
    "resource://gre/modules/AsyncShutdown.sys.mjs",
};

// A legacy (main ping) stack of the dense profile: the root, 2-12 labels and script
// frames (file:line, so most fresh stacks are new), sometimes a marker.
std::vector<std::string> DenseLegacyStack(Rng& r) {
  std::vector<std::string> stack = {"Startup::XRE_Main"};
  int depth = static_cast<int>(r.Between(2, 12));
  for (int d = 0; d < depth; ++d) {
    if (r.Chance(0.3)) {
      // Two draws: the line first, then the script (the order g++ evaluated them in when they
      // were one call's arguments, which C++ leaves unspecified; clang took the other).
      const int64_t line = r.Between(1, 20000);
      stack.push_back(fmt::format("{}:{}", kScripts[r.Below(std::size(kScripts))], line));
    } else {
      stack.push_back(kLabels[r.Below(std::size(kLabels))]);
    }
  }
  if (r.Chance(0.2)) stack.push_back(kMarkers[r.Below(2)]);
  return stack;
}

// Stack pools of the dense profile (fixed, like the default pools) and their ranks.
constexpr size_t kDenseLegacyPool = 20000;
constexpr size_t kDenseBhrPool = 5000;
constexpr size_t kDenseProcessedSignatures = 3000;
constexpr size_t kDenseCrashPingSignatures = 1000;
// The share of hangs whose stack is made fresh rather than drawn from the pool.
constexpr double kDenseFreshStack = 0.35;

const std::vector<std::vector<std::string>>& DenseLegacyPool() {
  static const auto pool = [] {
    Rng r(0xd3e5e);
    std::vector<std::vector<std::string>> p;
    for (size_t i = 0; i < kDenseLegacyPool; ++i) p.push_back(DenseLegacyStack(r));
    return p;
  }();
  return pool;
}
const std::vector<std::vector<BhrFrame>>& DenseBhrPool() {
  static const auto pool = BhrStackPool(0xd3e5eb4e, kDenseBhrPool);
  return pool;
}
struct DenseRanks {
  ZipfTable legacy{kDenseLegacyPool, 1.1};
  ZipfTable bhr{kDenseBhrPool, 1.1};
  ZipfTable processed{kDenseProcessedSignatures, 1.1};
  ZipfTable crash_ping{kDenseCrashPingSignatures, 1.1};
};
const DenseRanks& Ranks() {
  static const DenseRanks ranks;
  return ranks;
}

// Hang histogram in Gecko's TimeHistogram form: keys are inclusive upper
// bounds 2^k-1, with zero sentinels around the non-zero range.
void WriteTimeHistogram(JsonWriter& w, Rng& r, int lo_bucket, int hi_bucket) {
  w.BeginObject();
  w.Key("bucket_count").Int(33);
  w.Key("histogram_type").Int(0);
  w.Key("range").BeginArray().Int(1).Int(0).EndArray();
  w.Key("sum").Int(0);
  w.Key("values").BeginObject();
  w.Key(std::to_string((1ll << lo_bucket) - 1)).Int(0);
  for (int k = lo_bucket + 1; k <= hi_bucket; ++k) {
    w.Key(std::to_string((1ll << k) - 1)).Int(r.Between(k == lo_bucket + 1 ? 1 : 0, 6 - (k - lo_bucket)));
  }
  w.Key(std::to_string((1ll << (hi_bucket + 1)) - 1)).Int(0);
  w.EndObject();
  w.EndObject();
}

void WriteApplication(JsonWriter& w, const SynthBuild& b) {
  w.Key("application").BeginObject();
  w.Key("architecture").String("x86-64");
  w.Key("buildId").String(b.build_id);
  w.Key("channel").String(b.channel);
  w.Key("name").String("Firefox");
  w.Key("platformVersion").String(b.version);
  w.Key("version").String(b.version);
  w.Key("displayVersion").String(b.version);
  w.Key("vendor").String("Mozilla");
  w.Key("xpcomAbi").String("x86_64-msvc");
  w.EndObject();
}

void WriteEnvironment(JsonWriter& w, const std::string& os) {
  w.Key("environment").BeginObject();
  w.Key("system").BeginObject();
  w.Key("os").BeginObject();
  w.Key("name").String(os);
  w.Key("version").String(os == "Windows_NT" ? "10.0" : os == "Darwin" ? "23.4.0" : "6.8");
  w.EndObject();
  w.EndObject();
  w.Key("settings").BeginObject().Key("e10sEnabled").Bool(true).EndObject();
  w.EndObject();
}

// Realistic but ignored histograms that make a main ping the size of a real one.
void WritePadding(JsonWriter& w, Rng& r, size_t bytes) {
  w.Key("histograms").BeginObject();
  size_t written = 0;
  for (int h = 0; written < bytes; ++h) {
    size_t before = w.str().size();
    w.Key(fmt::format("GC_MS_{}", h)).BeginObject();
    w.Key("bucket_count").Int(50);
    w.Key("histogram_type").Int(0);
    w.Key("range").BeginArray().Int(1).Int(10000).EndArray();
    w.Key("sum").Int(r.Between(0, 100000));
    w.Key("values").BeginObject();
    for (int k = 0; k < 20; ++k) w.Key(std::to_string(k * 17 + 1)).Int(r.Between(0, 500));
    w.EndObject();
    w.EndObject();
    written += w.str().size() - before;
  }
  w.EndObject();
}

}  // namespace

// ---------------------------------------------------------------- Synth

Synth::Synth(SynthOptions options) : options_(std::move(options)), rng_(options_.seed) {
  if (options_.builds.empty()) options_.builds = DefaultBuilds();
}

const SynthBuild& Synth::PickBuild() {
  double total = 0;
  for (const SynthBuild& b : options_.builds) total += b.weight;
  double x = rng_.Uniform() * total;
  for (const SynthBuild& b : options_.builds) {
    x -= b.weight;
    if (x < 0) return b;
  }
  return options_.builds.back();
}

std::string Synth::PickOs() {
  double p = rng_.Uniform();
  return p < 0.72 ? "Windows_NT" : p < 0.87 ? "Darwin" : "Linux";
}

EventTime Synth::TimeOf(uint64_t i) const {
  return EventTime{options_.start.ms + static_cast<int64_t>(i) * options_.spacing_ms};
}

std::string Synth::Main(uint64_t i) {
  Rng& r = rng_;
  const SynthBuild& b = PickBuild();
  std::string os = PickOs();
  EventTime t = TimeOf(i);
  JsonWriter w;
  w.BeginObject();
  w.Key("type").String(r.Chance(0.03) ? "saved-session" : "main");
  w.Key("id").String(r.Uuid());
  w.Key("creationDate").String(FormatTimestamp(EventTime{t.ms - r.Between(0, 60'000)}));
  w.Key("submission_timestamp").String(FormatTimestamp(t));
  w.Key("version").Int(4);
  w.Key("clientId").String(r.Uuid());
  WriteApplication(w, b);
  WriteEnvironment(w, os);
  w.Key("payload").BeginObject();
  w.Key("ver").Int(4);
  double reason_p = r.Uniform();
  const char* reason = reason_p < 0.4 ? "shutdown" : reason_p < 0.8 ? "daily" : "environment-change";
  w.Key("info").BeginObject();
  w.Key("reason").String(reason);
  w.Key("sessionId").String(r.Uuid());
  w.Key("subsessionId").String(r.Uuid());
  int64_t length = std::min<int64_t>(static_cast<int64_t>(r.LogNormal(7.5, 1.2)), 90'000);
  w.Key("sessionLength").Int(length + r.Between(0, 3600));
  w.Key("subsessionLength").Int(length);
  w.Key("subsessionCounter").Int(r.Between(1, 5));
  w.Key("profileSubsessionCounter").Int(r.Between(1, 500));
  w.EndObject();
  w.Key("processes").BeginObject();
  w.Key("parent").BeginObject().Key("scalars").BeginObject().EndObject().EndObject();
  w.EndObject();
  if (options_.pad_bytes > 0) WritePadding(w, r, options_.pad_bytes);
  if (r.Chance(0.04)) {
    w.Key("keyedHistograms").BeginObject();
    w.Key("SUBPROCESS_CRASHES_WITH_DUMP").BeginObject();
    const char* key = r.Chance(0.7) ? "gpu" : r.Chance(0.5) ? "plugin" : "gmplugin";
    int64_t n = r.Between(1, 2);
    w.Key(key).BeginObject();
    w.Key("bucket_count").Int(3).Key("histogram_type").Int(4);
    w.Key("range").BeginArray().Int(1).Int(2).EndArray();
    w.Key("sum").Int(n);
    w.Key("values").BeginObject().Key("0").Int(n).Key("1").Int(0).EndObject();
    w.EndObject();
    w.EndObject();
    w.EndObject();
  }
  auto write_threads = [&](const char* main_thread, int max_hangs) {
    w.BeginArray();
    for (const char* name : {main_thread, "Compositor"}) {
      w.BeginObject();
      w.Key("name").String(name);
      w.Key("activity");
      WriteTimeHistogram(w, r, 0, 6);
      w.Key("hangs").BeginArray();
      int hangs = static_cast<int>(r.Between(0, name == main_thread ? max_hangs : 1));
      for (int h = 0; h < hangs; ++h) {
        w.BeginObject();
        w.Key("stack").BeginArray();
        if (!dense()) {
          for (const std::string& f : Legacy()[r.Zipf(Legacy().size())]) w.String(f);
        } else if (r.Chance(kDenseFreshStack)) {
          for (const std::string& f : DenseLegacyStack(r)) w.String(f);
        } else {
          for (const std::string& f : DenseLegacyPool()[Ranks().legacy.Draw(r)]) w.String(f);
        }
        w.EndArray();
        w.Key("histogram");
        int lo = static_cast<int>(r.Between(6, 9));
        WriteTimeHistogram(w, r, lo, lo + static_cast<int>(r.Between(1, 5)));
        if (r.Chance(0.3)) {
          w.Key("annotations").BeginArray();
          w.BeginObject().Key("UserInteracting").String("true").EndObject();
          w.EndArray();
        }
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
  };
  if (r.Chance(0.8)) {
    w.Key("threadHangStats");
    write_threads("Gecko", 4);
  }
  if (r.Chance(0.5)) {
    w.Key("childPayloads").BeginArray();
    int children = static_cast<int>(r.Between(1, 3));
    for (int c = 0; c < children; ++c) {
      w.BeginObject();
      w.Key("ver").Int(4);
      w.Key("simpleMeasurements").BeginObject().Key("uptime").Int(r.Between(1, 500)).EndObject();
      if (r.Chance(0.7)) {  // some children carry no threadHangStats: skipped, not fatal
        w.Key("threadHangStats");
        write_threads("Gecko_Child", 2);
      }
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  w.EndObject();
  return w.Take();
}

std::string Synth::Bhr(uint64_t i) {
  Rng& r = rng_;
  const SynthBuild& b = PickBuild();
  std::string os = PickOs();
  EventTime t = TimeOf(i);
  JsonWriter w;
  w.BeginObject();
  w.Key("type").String("bhr");
  w.Key("id").String(r.Uuid());
  w.Key("creationDate").String(FormatTimestamp(EventTime{t.ms - r.Between(0, 60'000)}));
  w.Key("submission_timestamp").String(FormatTimestamp(t));
  w.Key("version").Int(4);
  WriteApplication(w, b);
  WriteEnvironment(w, os);
  w.Key("payload").BeginObject();
  w.Key("timeSinceLastPing").Int(std::min<int64_t>(static_cast<int64_t>(r.LogNormal(15.5, 0.8)), 80'000'000));
  w.Key("modules").BeginArray();
  for (const auto& m : kModules) w.BeginArray().String(m[0]).String(m[1]).EndArray();
  w.EndArray();
  w.Key("hangs").BeginArray();
  // Dense: a few hangs per ping (a ping of a few KB), not up to 51.
  int hangs = static_cast<int>(r.Chance(0.2) ? 0 : r.Between(1, dense() ? 8 : 51));
  for (int h = 0; h < hangs; ++h) {
    bool child = r.Chance(0.6);
    w.BeginObject();
    double d = 128.0 + r.LogNormal(5.0, 1.3);
    w.Key("duration").Double(std::round(d * 10) / 10);
    w.Key("thread").String(child ? "Gecko_Child" : "Gecko");
    w.Key("runnableName").String(child ? "" : "RefreshDriverTimer");
    w.Key("process").String(child ? "tab" : "default");
    if (child) {
      w.Key("remoteType").String("webIsolated");
    } else {
      w.Key("remoteType").Null();
    }
    w.Key("annotations").BeginArray();
    if (r.Chance(0.5)) w.BeginArray().String("UserInteracting").String("true").EndArray();
    w.EndArray();
    w.Key("stack").BeginArray();
    auto write_stack = [&w](const std::vector<BhrFrame>& stack) {
      for (const BhrFrame& f : stack) {
        if (f.native) {
          w.BeginArray().Int(f.module).String(f.text).EndArray();
        } else {
          w.String(f.text);
        }
      }
    };
    if (!dense()) {
      write_stack(BhrPool()[r.Zipf(BhrPool().size())]);
    } else if (r.Chance(kDenseFreshStack)) {
      write_stack(RandomBhrStack(r));
    } else {
      write_stack(DenseBhrPool()[Ranks().bhr.Draw(r)]);
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return w.Take();
}

namespace {

// A crashing-thread stack: innermost first, as minidump-stackwalk writes it.
void WriteCrashFrames(JsonWriter& w, Rng& r, size_t signature_rank) {
  Rng stack_rng(0xc4a5 + signature_rank);  // the same rank gives the same stack
  w.BeginArray();
  int frame = 0;
  if (stack_rng.Chance(0.4)) {
    w.BeginObject().Key("frame").Int(frame++).Key("function").String(kIrrelevant[stack_rng.Below(std::size(kIrrelevant))]);
    w.Key("module").String("mozglue.dll").Key("offset").String("0x7ffb1234abcd").EndObject();
  }
  int depth = static_cast<int>(stack_rng.Between(3, 30));
  for (int d = 0; d < depth; ++d) {
    w.BeginObject();
    w.Key("frame").Int(frame++);
    double p = stack_rng.Uniform();
    if (p < 0.8) {
      w.Key("function").String(kFunctions[stack_rng.Below(std::size(kFunctions))]);
      w.Key("file").String("hg:hg.mozilla.org/mozilla-central:dom/base/Element.cpp:abc123");
      w.Key("line").Int(stack_rng.Between(1, 4000));
      if (stack_rng.Chance(0.1)) {
        w.Key("inlines").BeginArray();
        w.BeginObject().Key("function").String("mozilla::dom::InlineHelper()")
            .Key("file").String("hg:hg.mozilla.org/mozilla-central:dom/base/Helper.h:abc123")
            .Key("line").Int(12).EndObject();
        w.EndArray();
      }
    }
    if (p < 0.93) w.Key("module").String("xul.dll");
    w.Key("offset").String(fmt::format("0x{:016x}", stack_rng.Between(0x10000, 0x7fffffff)));
    w.Key("trust").String(d == 0 ? "context" : "cfi");
    w.EndObject();
  }
  (void)r;
  w.EndArray();
}

}  // namespace

std::string Synth::ProcessedCrash(uint64_t i) {
  Rng& r = rng_;
  const SynthBuild& b = PickBuild();
  std::string os = PickOs();
  std::string os_name = os == "Windows_NT" ? "Windows NT" : os == "Darwin" ? "Mac OS X" : "Linux";
  EventTime t = TimeOf(i);
  size_t rank = dense() ? Ranks().processed.Draw(r) : r.Zipf(120);
  std::string uuid = r.Uuid();
  JsonWriter w;
  w.BeginObject();
  w.Key("uuid").String(uuid);
  w.Key("crash_id").String(uuid);
  w.Key("date_processed").String(FormatTimestamp(t));
  w.Key("submitted_timestamp").String(FormatTimestamp(t));
  w.Key("product").String("Firefox");
  w.Key("version").String(b.version);
  w.Key("build").String(b.build_id);
  w.Key("release_channel").String(b.channel);
  double pp = r.Uniform();
  const char* process = pp < 0.5 ? "parent" : pp < 0.9 ? "content" : pp < 0.97 ? "gpu" : "rdd";
  w.Key("process_type").String(process);
  w.Key("install_time").String(std::to_string(1'700'000'000 + r.Below(5000)));
  w.Key("startup_crash").Bool(r.Chance(0.05));
  w.Key("os_name").String(os_name);
  w.Key("mdsw_status_string").String("OK");
  w.Key("additional_minidumps").BeginArray();
  if (std::string(process) == "content" && r.Chance(0.5)) w.String("upload_file_minidump_browser");
  w.EndArray();
  if (rank % 17 == 3) w.Key("oom_allocation_size").Int(r.Chance(0.5) ? 65536 : 8'388'608);
  if (rank % 23 == 5) w.Key("abort_message").String("###!!! ABORT: file dom/base/Foo.cpp:42  ");
  if (std::string(process) == "content" && rank % 11 == 2) w.Key("ipc_channel_error").String("ShutDownKill");
  w.Key("json_dump").BeginObject();
  w.Key("status").String("OK");
  w.Key("system_info").BeginObject().Key("os").String(os_name).Key("cpu_arch").String("amd64").EndObject();
  w.Key("crash_info").BeginObject();
  w.Key("type").String(os == "Windows_NT" ? "EXCEPTION_ACCESS_VIOLATION_READ" : "SIGSEGV");
  w.Key("address").String("0x0000000000000010");
  if (r.Chance(0.05)) {
    w.Key("crashing_thread").Null();
  } else {
    w.Key("crashing_thread").Int(0);
  }
  w.EndObject();
  w.Key("threads").BeginArray();
  w.BeginObject().Key("thread_name").String("Main Thread").Key("frames");
  WriteCrashFrames(w, r, rank);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return w.Take();
}

std::string Synth::CrashPing(uint64_t i) {
  Rng& r = rng_;
  const SynthBuild& b = PickBuild();
  std::string os = PickOs();
  EventTime t = TimeOf(i);
  size_t rank = dense() ? Ranks().crash_ping.Draw(r) : r.Zipf(60);
  Rng stack_rng(0xfee + rank);
  JsonWriter w;
  w.BeginObject();
  w.Key("type").String("crash");
  w.Key("id").String(r.Uuid());
  w.Key("creationDate").String(FormatTimestamp(t));
  w.Key("submission_timestamp").String(FormatTimestamp(t));
  w.Key("version").Int(4);
  w.Key("clientId").String(fmt::format("00000000-0000-4000-8000-{:012x}", r.Below(4000)));
  WriteApplication(w, b);
  WriteEnvironment(w, os);
  w.Key("payload").BeginObject();
  w.Key("crashDate").String(FormatTimestamp(t).substr(0, 10));
  w.Key("version").Int(1);
  w.Key("sessionId").String(r.Uuid());
  w.Key("crashId").String(r.Uuid());
  double pp = r.Uniform();
  const char* process = pp < 0.4 ? "main" : pp < 0.9 ? "content" : "gpu";
  w.Key("processType").String(process);
  w.Key("hasCrashEnvironment").Bool(true);
  w.Key("metadata").BeginObject();
  w.Key("ProductName").String("Firefox");
  w.Key("ReleaseChannel").String(b.channel);
  w.Key("Version").String(b.version);
  w.Key("BuildID").String(b.build_id);
  w.Key("StartupCrash").String(r.Chance(0.05) ? "1" : "0");
  if (std::string(process) == "content" && rank % 7 == 1) w.Key("ipc_channel_error").String("ShutDownKill");
  if (rank % 13 == 4) w.Key("OOMAllocationSize").String(r.Chance(0.5) ? "4096" : "16777216");
  w.EndObject();
  w.Key("stackTraces").BeginObject();
  w.Key("status").String("OK");
  w.Key("crash_info").BeginObject();
  w.Key("type").String(os == "Windows_NT" ? "EXCEPTION_BREAKPOINT" : "SIGSEGV");
  w.Key("address").String("0x7ffb1123abcd");
  w.Key("crashing_thread").Int(0);
  w.EndObject();
  w.Key("main_module").Int(0);
  w.Key("modules").BeginArray();
  const char* files[] = {"firefox.exe", "xul.dll", "ntdll.dll", "nss3.dll", "mozglue.dll"};
  for (size_t m = 0; m < std::size(files); ++m) {
    w.BeginObject();
    w.Key("base_addr").String(fmt::format("0x{:x}", 0x7ff600000000ULL + m * 0x10000000ULL));
    w.Key("end_addr").String(fmt::format("0x{:x}", 0x7ff608000000ULL + m * 0x10000000ULL));
    w.Key("debug_file").String(std::string(files[m]).substr(0, std::string(files[m]).find('.')) + ".pdb");
    w.Key("debug_id").String("0123456789ABCDEF0123456789ABCDEF1");
    w.Key("filename").String(files[m]);
    w.EndObject();
  }
  w.EndArray();
  w.Key("threads").BeginArray().BeginObject().Key("frames").BeginArray();
  int depth = static_cast<int>(stack_rng.Between(2, 25));
  for (int d = 0; d < depth; ++d) {
    w.BeginObject();
    w.Key("ip").String(fmt::format("0x{:x}", 0x7ff600001000ULL + stack_rng.Below(0x40000000)));
    if (!stack_rng.Chance(0.1)) w.Key("module_index").Int(static_cast<int64_t>(stack_rng.Below(std::size(files))));
    w.Key("trust").String(d == 0 ? "context" : "cfi");
    w.EndObject();
  }
  w.EndArray().EndObject().EndArray();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace seismo
