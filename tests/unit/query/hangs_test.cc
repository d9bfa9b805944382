#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "query_fixture.h"
#include "seismo/query/flamegraph.h"
#include "seismo/query/hangs_json.h"

namespace seismo {
namespace {

using namespace seismo::testing;

// bhr, release, build date 20261117 (t0 = 2026-11-20T12:00Z):
//   usage  Linux 2 h at t0-30m; Windows 1 h at t0-3h
//   hangs  Linux   parent  Gecko       [root, mid, A]    1000 ms x2  at t0-30m
//          Windows parent  Gecko       [root, other, A]   500 ms x1  at t0-3h
//          Linux   content Gecko_Child [root, B]         3000 ms x1  at t0-10m
// main: usage Linux 1 h, hang parent Gecko [root, A] 100 ms x1 at t0-30m.
class HangsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    world_.Usage("bhr", "Linux", 2 * kHour, 30 * kMin);
    world_.Usage("bhr", "Windows", kHour, 3 * kHour);
    world_.Hang("bhr", "Linux", "parent", "Gecko", {"root", "mid", "A"}, 1'000'000, 2, 30 * kMin);
    world_.Hang("bhr", "Windows", "parent", "Gecko", {"root", "other", "A"}, 500'000, 1, 3 * kHour);
    world_.Hang("bhr", "Linux", "content", "Gecko_Child", {"root", "B"}, 3'000'000, 1, 10 * kMin);
    world_.Usage("main", "Linux", kHour, 30 * kMin);
    world_.Hang("main", "Linux", "parent", "Gecko", {"root", "A"}, 100'000, 1, 30 * kMin);
    snap_ = world_.Build();
  }
  std::string Hangs(std::string_view qs) { return HangsJson(*snap_, Q(Endpoint::kHangs, qs)); }

  World world_;
  std::shared_ptr<const Snapshot> snap_;
};

TEST_F(HangsTest, BySignatureOverADayDividesBySelectedUsage) {
  EXPECT_EQ(Hangs(""),
            R"({"window":"24h","by":"signature","source":"bhr","usage_hours":3,"rows":[)"
            R"({"signature":"B","thread":"Gecko_Child","process":"content","hang_ms":3000,"hang_count":1,)"
            R"("hang_ms_per_hour":1000,"hang_count_per_hour":0.3333333333333333,)"
            R"("stacks":[{"stack":["root","B"],"hang_ms":3000,"hang_count":1}]},)"
            R"({"signature":"A","thread":"Gecko","process":"parent","hang_ms":1500,"hang_count":3,)"
            R"("hang_ms_per_hour":500,"hang_count_per_hour":1,)"
            R"("stacks":[{"stack":["root","mid","A"],"hang_ms":1000,"hang_count":2},)"
            R"({"stack":["root","other","A"],"hang_ms":500,"hang_count":1}]}]})");
}

TEST_F(HangsTest, OneHourWindowSeesOnlyTheLastHour) {
  Json j(Hangs("window=1h"));
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 2.0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(0)["signature"].get_string().value(), "B");
  EXPECT_EQ(rows.at(0)["hang_ms_per_hour"].get_double().value(), 1500.0);
  EXPECT_EQ(rows.at(1)["hang_ms_per_hour"].get_double().value(), 500.0);
  EXPECT_EQ(rows.at(1)["stacks"].get_array().value().size(), 1u);
}

TEST_F(HangsTest, OsFilterNarrowsNumeratorAndDenominator) {
  Json j(Hangs("os=Linux"));
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 2.0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(1)["hang_ms"].get_double().value(), 1000.0);
  EXPECT_EQ(rows.at(1)["hang_ms_per_hour"].get_double().value(), 500.0);
}

TEST_F(HangsTest, OsFilterIgnoresCase) {
  EXPECT_EQ(Hangs("os=linux"), Hangs("os=Linux"));
  Json j(Hangs("os=LINUX"));
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 2.0);
}

TEST_F(HangsTest, ThreadFilterKeepsTheDenominator) {
  Json j(Hangs("thread=Gecko"));
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 3.0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.at(0)["hang_ms_per_hour"].get_double().value(), 500.0);
}

// Filter values longer than a short string's inline buffer: the hang answers and the
// flame graph keep the query's values alive while they read rows.
TEST(HangFilters, LongFilterValuesSelectTheirRows) {
  const std::string signature = "mozilla::dom::ContentParent::RecvSyncMessage";
  const std::string thread = "DOM Worker thread of a long name";
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "parent", thread, {"root", signature}, 2'000'000, 1, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "Short"}, 1'000'000, 1, 0);
  auto snap = w.Build();
  const std::string by_signature = "signature=mozilla%3A%3Adom%3A%3AContentParent%3A%3ARecvSyncMessage";
  Json rows(HangsJson(*snap, Q(Endpoint::kHangs, by_signature)));
  ASSERT_EQ(rows.root["rows"].get_array().value().size(), 1u);
  EXPECT_EQ(rows.root["rows"].at(0)["signature"].get_string().value(), signature);
  Json threads(HangsJson(*snap, Q(Endpoint::kHangs, "by=thread&thread=DOM+Worker+thread+of+a+long+name")));
  ASSERT_EQ(threads.root["rows"].get_array().value().size(), 1u);
  EXPECT_EQ(threads.root["rows"].at(0)["thread"].get_string().value(), thread);
  EXPECT_EQ(FlamegraphCollapsed(*snap, Q(Endpoint::kHangsFlamegraph, by_signature)),
            "root;" + signature + " 2000\n");
  Json series(HangsTimeseriesJson(*snap, Q(Endpoint::kHangsTimeseries, "window=1h&" + by_signature)));
  EXPECT_EQ(series.root["points"].at(59)["hang_ms"].get_double().value(), 2000.0);
}

TEST_F(HangsTest, ByThreadAndByBuildDate) {
  Json t(Hangs("by=thread&limit=1"));
  auto rows = t.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.at(0)["thread"].get_string().value(), "Gecko_Child");
  EXPECT_TRUE(rows.at(0)["signature"].error() == simdjson::NO_SUCH_FIELD);
  Json d(Hangs("by=build_date"));
  auto drows = d.root["rows"].get_array().value();
  ASSERT_EQ(drows.size(), 1u);
  EXPECT_EQ(drows.at(0)["build_date"].get_string().value(), "20261117");
  EXPECT_EQ(drows.at(0)["channel"].get_string().value(), "release");
  EXPECT_EQ(drows.at(0)["hang_ms"].get_double().value(), 4500.0);
  EXPECT_EQ(drows.at(0)["hang_ms_per_hour"].get_double().value(), 1500.0);
}

// A build date's builds of two channels are two rows, each over its own channel's usage:
//   release 4500 ms / 3 h = 1500 ms/h; beta 600 ms / 0.5 h = 1200 ms/h.
TEST_F(HangsTest, ByBuildDateKeepsChannelsApart) {
  World w;
  w.Usage("bhr", "Linux", 2 * kHour, 30 * kMin);
  w.Usage("bhr", "Windows", kHour, 3 * kHour);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "A"}, 4'500'000, 3, 30 * kMin);
  w.Usage("bhr", "Linux", 30 * kMin, 30 * kMin, "beta");
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "A"}, 600'000, 1, 30 * kMin, "beta");
  auto snap = w.Build();
  Json d(HangsJson(*snap, Q(Endpoint::kHangs, "by=build_date")));
  auto rows = d.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at(0)["channel"].get_string().value(), "release");
  EXPECT_EQ(rows.at(0)["usage_hours"].get_double().value(), 3.0);
  EXPECT_EQ(rows.at(0)["hang_ms_per_hour"].get_double().value(), 1500.0);
  EXPECT_EQ(rows.at(1)["channel"].get_string().value(), "beta");
  EXPECT_EQ(rows.at(1)["build_date"].get_string().value(), "20261117");
  EXPECT_EQ(rows.at(1)["usage_hours"].get_double().value(), 0.5);
  EXPECT_EQ(rows.at(1)["hang_ms_per_hour"].get_double().value(), 1200.0);
}

TEST_F(HangsTest, MainSourceIsSeparate) {
  Json j(Hangs("source=main"));
  EXPECT_EQ(j.root["source"].get_string().value(), "main");
  EXPECT_EQ(j.root["usage_hours"].get_double().value(), 1.0);
  auto rows = j.root["rows"].get_array().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.at(0)["hang_ms_per_hour"].get_double().value(), 100.0);
}

TEST_F(HangsTest, NoUsageGivesNullRates) {
  Json j(Hangs("build_date=20990101"));
  EXPECT_EQ(j.root["rows"].get_array().value().size(), 0u);
  World w;
  w.Hang("main", "Linux", "parent", "Gecko", {"A"}, 1000, 1, 0);
  auto snap = w.Build();
  Json n(HangsJson(*snap, Q(Endpoint::kHangs, "")));
  EXPECT_EQ(n.root["source"].get_string().value(), "main");  // no bhr usage at all
  ASSERT_EQ(n.root["rows"].get_array().value().size(), 1u);
  EXPECT_TRUE(n.root["rows"].at(0)["hang_ms_per_hour"].is_null());
}

TEST_F(HangsTest, EmptySnapshotGivesEmptyRows) {
  EXPECT_EQ(HangsJson(Snapshot{}, Q(Endpoint::kHangs, "")),
            R"({"window":"24h","by":"signature","source":"main","usage_hours":0,"rows":[]})");
}

TEST_F(HangsTest, TimeseriesPerMinuteWithinAnHour) {
  Json j(HangsTimeseriesJson(*snap_, Q(Endpoint::kHangsTimeseries, "window=1h")));
  EXPECT_EQ(j.root["bucket"].get_string().value(), "60s");
  auto points = j.root["points"].get_array().value();
  ASSERT_EQ(points.size(), 60u);
  EXPECT_EQ(points.at(0)["t"].get_string().value(), "2026-11-20T11:01:00.000Z");
  EXPECT_EQ(points.at(59)["t"].get_string().value(), "2026-11-20T12:00:00.000Z");
  auto at30 = points.at(29);  // 11:30
  EXPECT_EQ(at30["t"].get_string().value(), "2026-11-20T11:30:00.000Z");
  EXPECT_EQ(at30["hang_ms"].get_double().value(), 1000.0);
  EXPECT_EQ(at30["usage_hours"].get_double().value(), 2.0);
  EXPECT_EQ(at30["hang_ms_per_hour"].get_double().value(), 500.0);
  auto at50 = points.at(49);  // 11:50: hang without usage in that bucket
  EXPECT_EQ(at50["hang_ms"].get_double().value(), 3000.0);
  EXPECT_TRUE(at50["hang_ms_per_hour"].is_null());
  EXPECT_EQ(points.at(0)["hang_count"].get_int64().value(), 0);
}

TEST_F(HangsTest, TimeseriesOverAWeekIsHourly) {
  Json j(HangsTimeseriesJson(*snap_, Q(Endpoint::kHangsTimeseries, "window=7d&os=Windows")));
  EXPECT_EQ(j.root["bucket"].get_string().value(), "1h");
  auto points = j.root["points"].get_array().value();
  ASSERT_EQ(points.size(), 169u);  // 7 x 24 minute-aligned hours plus the partial first one
  auto last_but_3 = points.at(points.size() - 4);  // 09:00
  EXPECT_EQ(last_but_3["t"].get_string().value(), "2026-11-20T09:00:00.000Z");
  EXPECT_EQ(last_but_3["hang_ms"].get_double().value(), 500.0);
  EXPECT_EQ(last_but_3["hang_ms_per_hour"].get_double().value(), 500.0);
}

TEST_F(HangsTest, FlamegraphTreeMergesStacks) {
  EXPECT_EQ(FlamegraphTreeJson(*snap_, Q(Endpoint::kHangsFlamegraph, "")),
            R"J({"name":"(root)","hang_ms":4500,"hang_count":4,"children":[)J"
            R"J({"name":"root","hang_ms":4500,"hang_count":4,"children":[)J"
            R"J({"name":"B","hang_ms":3000,"hang_count":1,"children":[]},)J"
            R"J({"name":"mid","hang_ms":1000,"hang_count":2,"children":[{"name":"A","hang_ms":1000,"hang_count":2,"children":[]}]},)J"
            R"J({"name":"other","hang_ms":500,"hang_count":1,"children":[{"name":"A","hang_ms":500,"hang_count":1,"children":[]}]}]}]})J");
}

TEST_F(HangsTest, FlamegraphCollapsedIsFoldedStacks) {
  EXPECT_EQ(FlamegraphCollapsed(*snap_, Q(Endpoint::kHangsFlamegraph, "format=collapsed")),
            "root;B 3000\nroot;mid;A 1000\nroot;other;A 500\n");
  EXPECT_EQ(FlamegraphCollapsed(*snap_, Q(Endpoint::kHangsFlamegraph, "format=collapsed&window=1h&os=Linux")),
            "root;B 3000\nroot;mid;A 1000\n");
}

TEST(Flamegraph, FrameSeparatorsAreNeutralised) {
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", {"a;b", "c\nd"}, 1'499, 1, 0);
  auto snap = w.Build();
  EXPECT_EQ(FlamegraphCollapsed(*snap, Q(Endpoint::kHangsFlamegraph, "")), "a b;c d 1\n");
}

// A hostile main ping can carry a stack of hundreds of thousands of frames: under bounds
// that let it whole, the tree is built, written and freed without recursion, here on a thread with a 128 KiB
// stack (an HTTP worker's is not much larger under a sanitizer's bigger frames).
TEST(Flamegraph, AStackDeeperThanAnyThreadStackIsServed) {
  constexpr size_t kDepth = 200'000;
  std::vector<std::string> frames;
  frames.reserve(kDepth);
  for (size_t i = 0; i < kDepth; ++i) frames.push_back("f" + std::to_string(i % 7));
  World w;
  w.Usage("bhr", "Linux", kHour, 0);
  w.Hang("bhr", "Linux", "parent", "Gecko", frames, 2'000, 1, 0);
  auto snap = w.Build();
  std::string json;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 << 10);
  struct Job {
    const Snapshot* snap;
    std::string* out;
  } job{snap.get(), &json};
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  auto* j = static_cast<Job*>(arg);
                  *j->out = FlamegraphTreeJson(*j->snap, Q(Endpoint::kHangsFlamegraph, ""),
                                               AnswerLimits{.max_nodes = 300'000, .max_bytes = 64u << 20});
                  return nullptr;
                },
                &job),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  const std::string leaf = R"({"name":"f2","hang_ms":2,"hang_count":1,"children":[])";
  ASSERT_GT(json.size(), kDepth * leaf.size());
  EXPECT_EQ(json.rfind(leaf), json.size() - leaf.size() - 2 * kDepth - 1) << "the deepest frame is last";
  EXPECT_EQ(json.substr(json.size() - 4), "]}]}");
}

// The rows against a naive recomputation over many groups, stacks shared between groups and
// hangs outside the window, for each grouping (ADR 0025: by signature the groups are summed
// first and the shown rows' stacks in a second pass; by thread and by build date the groups
// and their stacks in one pass): every row's sums and top stacks are the naive ones, and a
// smaller `limit` shows the first rows of the whole list, byte for byte.
TEST(HangsRows, EqualANaiveRecomputationAtEveryLimit) {
  for (const std::string by : {"signature", "thread", "build_date"}) {
    SCOPED_TRACE("by=" + by);
    World w;
    // Usage of the hangs' one source, under none of their build dates: every rate is that of
    // all usage by signature and thread, and none by build date, so rows go by hang ms.
    w.Usage("bhr", "Linux", 3 * kHour, 20 * kMin);
    using Key = std::tuple<std::string, std::string, std::string>;
    std::map<Key, std::pair<int64_t, int64_t>> groups;
    std::map<Key, std::map<std::string, int64_t>> stacks;
    testing::Lcg next(12345);
    for (int i = 0; i < 400; ++i) {
      const std::string process = next(3) == 0 ? "content" : "parent";
      const std::string thread = std::vector<std::string>{"Gecko", "Gecko_Child", "Renderer"}[next(3)];
      const std::string signature = "Sig" + std::to_string(next(40));
      const std::vector<std::string> stack = {"root", "f" + std::to_string(next(6)), signature};
      const std::string os = next(2) == 0 ? "Linux" : "Windows";
      const std::string channel = next(2) == 0 ? "release" : "beta";
      const std::string date = "202610" + std::to_string(10 + next(12));
      const int64_t hang_us = static_cast<int64_t>(128'000 + next(50) * 1000);
      const bool in_window = next(4) != 0;  // a quarter is older than the hour
      w.Hang("bhr", os, process, thread, stack, hang_us, 1, in_window ? 10 * kMin : 2 * kHour, channel, date);
      if (!in_window) continue;
      const Key key = by == "signature" ? Key{process, thread, signature}
                      : by == "thread"  ? Key{process, thread, ""}
                                        : Key{date, channel, ""};
      auto& g = groups[key];
      g.first += hang_us;
      g.second += 1;
      stacks[key]["root;" + stack[1] + ";" + signature] += hang_us;
    }
    auto snap = w.Build();
    auto answer = [&](size_t limit) {
      return HangsJson(*snap, Q(Endpoint::kHangs, "window=1h&by=" + by + "&limit=" + std::to_string(limit)));
    };
    const std::string all_text = answer(1000);
    Json all(all_text);
    auto rows = all.root["rows"].get_array().value();
    ASSERT_EQ(rows.size(), groups.size());
    std::vector<std::string> row_texts;
    int64_t previous = INT64_MAX;
    for (auto row : rows) {
      auto text = [&row](const char* field) { return std::string(row[field].get_string().value()); };
      const Key key = by == "signature" ? Key{text("process"), text("thread"), text("signature")}
                      : by == "thread"  ? Key{text("process"), text("thread"), ""}
                                        : Key{text("build_date"), text("channel"), ""};
      ASSERT_TRUE(groups.count(key));
      const int64_t hang_us = std::llround(row["hang_ms"].get_double().value() * 1000);
      EXPECT_EQ(hang_us, groups[key].first);
      EXPECT_EQ(row["hang_count"].get_int64().value(), groups[key].second);
      EXPECT_LE(hang_us, previous) << "rows by hang ms";
      previous = hang_us;
      // The top stacks: the naive sums, the largest first, as many as there are (up to 5).
      std::vector<int64_t> naive;
      for (const auto& [stack, us] : stacks[key]) naive.push_back(us);
      std::sort(naive.rbegin(), naive.rend());
      naive.resize(std::min<size_t>(naive.size(), 5));
      std::vector<int64_t> shown;
      const auto row_stacks = row["stacks"].get_array().value();  // kept: a loop over a temporary dangles
      for (auto st : row_stacks) {
        std::string joined;
        const auto frames = st["stack"].get_array().value();
        for (auto f : frames) {
          joined += (joined.empty() ? "" : ";") + std::string(f.get_string().value());
        }
        const int64_t us = std::llround(st["hang_ms"].get_double().value() * 1000);
        EXPECT_EQ(us, stacks[key][joined]) << joined;
        shown.push_back(us);
      }
      EXPECT_EQ(shown, naive);
      row_texts.push_back(simdjson::minify(row));
    }
    for (size_t limit : {1u, 5u, 17u}) {
      if (limit > row_texts.size()) continue;
      Json some(answer(limit));
      size_t i = 0;
      const auto some_rows = some.root["rows"].get_array().value();
      for (auto row : some_rows) {
        ASSERT_LT(i, row_texts.size());
        EXPECT_EQ(simdjson::minify(row), row_texts[i++]) << "limit " << limit;
      }
      EXPECT_EQ(i, limit);
    }
  }
}

// Ties at the limit go by text, not by which group or stack came first: of 30 signatures of
// equal hang time after 3 heavier ones, limit=5 shows the 3 and then the 2 first by text; the
// thread's top 5 stacks are the 3 heavier ones and then the 2 first by text. Ids are given in
// about the opposite order of the texts.
TEST(HangsRows, TiesAtTheLimitGoByText) {
  World w;
  w.Usage("bhr", "Linux", 3 * kHour, 20 * kMin);
  for (int i = 29; i >= 0; --i) {
    const std::string sig = "Tie" + std::string(1, static_cast<char>('a' + i % 26)) + std::to_string(i);
    w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "g" + std::to_string(i), sig}, 100'000, 1, 10 * kMin);
  }
  for (const std::string heavy : {"Heavy3", "Heavy1", "Heavy2"}) {
    w.Hang("bhr", "Linux", "parent", "Gecko", {"root", heavy}, 900'000, 1, 10 * kMin);
  }
  auto snap = w.Build();
  Json some(HangsJson(*snap, Q(Endpoint::kHangs, "window=1h&limit=5")));
  std::vector<std::string> sigs;
  const auto rows = some.root["rows"].get_array().value();  // kept: the loop reads it
  for (auto row : rows) sigs.emplace_back(row["signature"].get_string().value());
  EXPECT_EQ(sigs, (std::vector<std::string>{"Heavy1", "Heavy2", "Heavy3", "Tiea0", "Tiea26"}));

  Json by_thread(HangsJson(*snap, Q(Endpoint::kHangs, "window=1h&by=thread")));
  std::vector<std::string> leaves;
  const auto thread_rows = by_thread.root["rows"].get_array().value();
  ASSERT_EQ(thread_rows.size(), 1u);
  for (auto row : thread_rows) {
    const auto stacks = row["stacks"].get_array().value();
    for (auto st : stacks) {
      std::string joined;
      const auto frames = st["stack"].get_array().value();
      for (auto f : frames) joined += (joined.empty() ? "" : ";") + std::string(f.get_string().value());
      leaves.push_back(joined);
    }
  }
  EXPECT_EQ(leaves, (std::vector<std::string>{"root;Heavy1", "root;Heavy2", "root;Heavy3", "root;g0;Tiea0",
                                              "root;g1;Tieb1"}));
}

// By build date each date divides by its own usage, so hang time does not rank the rows: a
// light date with little usage has the highest rate, and limit=1 shows it.
TEST(HangsRows, ByBuildDateRanksByEachDatesOwnRate) {
  World w;
  w.Usage("bhr", "Linux", 10 * kHour, 20 * kMin, "release", "20261110");
  w.Usage("bhr", "Linux", kHour / 10, 20 * kMin, "release", "20261111");
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "A"}, 1'000'000, 1, 10 * kMin, "release", "20261110");
  w.Hang("bhr", "Linux", "parent", "Gecko", {"root", "B"}, 100'000, 1, 10 * kMin, "release", "20261111");
  auto snap = w.Build();
  Json one(HangsJson(*snap, Q(Endpoint::kHangs, "window=1h&by=build_date&limit=1")));
  const auto rows = one.root["rows"].get_array().value();  // kept: the loop reads it
  std::vector<std::string> dates;
  for (auto row : rows) {
    dates.emplace_back(row["build_date"].get_string().value());
    EXPECT_DOUBLE_EQ(row["hang_ms_per_hour"].get_double().value(), 1000.0);  // 100 ms in 0.1 h
  }
  EXPECT_EQ(dates, std::vector<std::string>{"20261111"});
}

}  // namespace
}  // namespace seismo
