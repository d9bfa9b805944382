// The rows a filter on a signature, a build id, a build date, a thread or a process can select
// come from a per-snapshot index (Snapshot::RowsWithTextHash): exactly the rows holding that
// text, in the order of their addresses; the answers over them count what the whole table holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "query_fixture.h"
#include "seismo/query/hangs_json.h"
#include "seismo/query/selection.h"

namespace seismo {
namespace {

using namespace seismo::testing;

std::shared_ptr<const Snapshot> ManySignatures() {
  World w;
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  w.Usage("bhr", "Linux", kHour, 10 * kMin, "release", "20261116");
  for (int i = 0; i < 120; ++i) {
    const std::string sig = "Sig" + std::to_string(i % 17);
    const std::string date = i % 3 == 0 ? "20261116" : "20261117";
    const char* thread = i % 3 == 0 ? "Gecko" : i % 3 == 1 ? "Gecko_Child" : "StreamTrans";
    w.Hang("bhr", i % 2 ? "Linux" : "Windows", i % 5 ? "parent" : "content", thread,
           {"root", "f" + std::to_string(i % 4), sig}, 128'000 + i * 1000, 1, (i % 7) * kMin, "release",
           date);
    w.Crash(sig, "parent", "parent", "install" + std::to_string(i % 9), (i % 5) * kMin, false, "Linux",
            i % 2 ? "20261117090501" : "20261116090501");
  }
  return w.Build();
}

// What the index must return: the rows whose field holds `text`, in the order of their
// addresses.
std::vector<const SeriesData*> Brute(const Snapshot& snap, Table t, size_t field, const std::string& text) {
  std::vector<const SeriesData*> out;
  for (const SeriesData* s : snap.table(t)) {
    if (snap.Text(s->key[field]) == text) out.push_back(s);
  }
  std::sort(out.begin(), out.end(), std::less<const SeriesData*>());
  return out;
}

TEST(CandidateRows, AreTheRowsHoldingTheTextInAddressOrder) {
  auto snap = ManySignatures();
  for (int i = 0; i < 18; ++i) {  // Sig17 is held by no row
    const std::string sig = "Sig" + std::to_string(i);
    Filters f;
    f[Dim::kSignature] = sig;
    const auto hangs = CandidateRows(*snap, Table::kHangs, f);
    EXPECT_EQ(std::vector<const SeriesData*>(hangs.begin(), hangs.end()),
              Brute(*snap, Table::kHangs, hang_field::kSignature, sig))
        << sig;
    const auto crashes = CandidateRows(*snap, Table::kCrashes, f);
    EXPECT_EQ(std::vector<const SeriesData*>(crashes.begin(), crashes.end()),
              Brute(*snap, Table::kCrashes, crash_field::kSignature, sig))
        << sig;
  }
  Filters by_date;
  by_date[Dim::kBuildDate] = "20261116";
  const auto dated = CandidateRows(*snap, Table::kHangs, by_date);
  EXPECT_EQ(std::vector<const SeriesData*>(dated.begin(), dated.end()),
            Brute(*snap, Table::kHangs, hang_field::kBuildDate, "20261116"));
  EXPECT_FALSE(dated.empty());
  Filters by_build;
  by_build[Dim::kBuildId] = "20261117090501";
  const auto built = CandidateRows(*snap, Table::kCrashes, by_build);
  EXPECT_EQ(std::vector<const SeriesData*>(built.begin(), built.end()),
            Brute(*snap, Table::kCrashes, crash_field::kBuildId, "20261117090501"));
  // No indexed filter (or one the table lacks): the whole table.
  Filters os;
  os[Dim::kOs] = "linux";
  EXPECT_EQ(CandidateRows(*snap, Table::kHangs, os).size(), snap->table(Table::kHangs).size());
  EXPECT_EQ(CandidateRows(*snap, Table::kHangs, by_build).size(), snap->table(Table::kHangs).size());
  EXPECT_EQ(CandidateRows(*snap, Table::kUsage, by_date).size(), snap->table(Table::kUsage).size());
}

// A thread's or a process's rows come from their index once the snapshot has made it (the
// warm-up does), the fewer of the two where both are named; before, from the whole table, and
// asking makes nothing (a first sort would cost more than the walk it saves).
TEST(CandidateRows, AThreadsOrAProcesssRowsComeFromTheirIndexOnceMade) {
  auto snap = ManySignatures();
  const auto& table = snap->table(Table::kHangs);
  Filters rare;
  rare[Dim::kThread] = "StreamTrans";
  rare[Dim::kProcess] = "content";
  EXPECT_EQ(CandidateRows(*snap, Table::kHangs, rare).size(), table.size());
  for (const IndexedAhead& i : kHangFieldsIndexedAhead) {
    EXPECT_FALSE(snap->RowsWithTextHashIfMade(Table::kHangs, i.field, 0)) << "made by asking";
    snap->RowsWithTextHash(Table::kHangs, i.field, 0);  // as the warm-up makes them
  }
  auto rows_of = [&](const Filters& f) {
    const auto rows = CandidateRows(*snap, Table::kHangs, f);
    return std::vector<const SeriesData*>(rows.begin(), rows.end());
  };
  for (const std::string thread : {"Gecko", "Gecko_Child", "StreamTrans", "NoSuchThread"}) {
    Filters f;
    f[Dim::kThread] = thread;
    EXPECT_EQ(rows_of(f), Brute(*snap, Table::kHangs, hang_field::kThread, thread)) << thread;
  }
  for (const std::string process : {"parent", "content", "gpu"}) {
    Filters f;
    f[Dim::kProcess] = process;
    EXPECT_EQ(rows_of(f), Brute(*snap, Table::kHangs, hang_field::kProcess, process)) << process;
  }
  // Both: the fewer rows (the content process's, here).
  const auto content = Brute(*snap, Table::kHangs, hang_field::kProcess, "content");
  ASSERT_LT(content.size(), Brute(*snap, Table::kHangs, hang_field::kThread, "StreamTrans").size());
  EXPECT_EQ(rows_of(rare), content);
  Filters common = rare;  // and the thread's, beside the parent process
  common[Dim::kProcess] = "parent";
  const auto stream_trans = Brute(*snap, Table::kHangs, hang_field::kThread, "StreamTrans");
  ASSERT_LT(stream_trans.size(), Brute(*snap, Table::kHangs, hang_field::kProcess, "parent").size());
  EXPECT_EQ(rows_of(common), stream_trans);
  // A signature goes first (rule 1), beside either.
  rare[Dim::kSignature] = "Sig4";
  EXPECT_EQ(rows_of(rare), Brute(*snap, Table::kHangs, hang_field::kSignature, "Sig4"));
  // The answers over them are those of a walk: over a snapshot of the same world without the
  // indexes.
  const auto walked = ManySignatures();
  for (const std::string qs : {"thread=StreamTrans", "process=content", "thread=Gecko&process=parent",
                               "thread=StreamTrans&by=thread", "thread=NoSuchThread"}) {
    EXPECT_EQ(HangsJson(*snap, Q(Endpoint::kHangs, qs + "&window=all")),
              HangsJson(*walked, Q(Endpoint::kHangs, qs + "&window=all")))
        << qs;
  }
  // Crash rows have no such index: the whole table.
  Filters process;
  process[Dim::kProcess] = "parent";
  EXPECT_EQ(CandidateRows(*snap, Table::kCrashes, process).size(), snap->table(Table::kCrashes).size());
}

// The answers that read the index count what a walk of the whole table counts: for every
// signature (and with a second filter beside it), the hang ms of /hangs and of its
// timeseries are the sums over every hang series of that signature, added up here.
TEST(CandidateRows, FilteredAnswersCountWhatTheWholeTableHolds) {
  auto snap = ManySignatures();
  for (int i = 0; i < 18; ++i) {
    const std::string sig = "Sig" + std::to_string(i);
    for (const std::string os : {"", "Linux"}) {
      int64_t want_us = 0;
      for (const SeriesData* s : snap->table(Table::kHangs)) {
        if (snap->Text(s->key[hang_field::kSignature]) != sig) continue;
        if (!os.empty() && snap->Text(s->key[hang_field::kOs]) != os) continue;
        want_us += s->total()[0];
      }
      const std::string qs = "signature=" + sig + (os.empty() ? "" : "&os=" + os);
      Json hangs(HangsJson(*snap, Q(Endpoint::kHangs, qs + "&window=all")));
      double got_ms = 0;
      const auto rows = hangs.root["rows"].get_array().value();  // kept: the loop reads it
      for (auto row : rows) got_ms += row["hang_ms"].get_double().value();
      EXPECT_EQ(std::llround(got_ms * 1000), want_us) << qs;
      Json series(HangsTimeseriesJson(*snap, Q(Endpoint::kHangsTimeseries, qs)));
      double points_ms = 0;
      const auto points = series.root["points"].get_array().value();
      for (auto p : points) points_ms += p["hang_ms"].get_double().value();
      EXPECT_EQ(std::llround(points_ms * 1000), want_us) << qs << " (timeseries)";
    }
  }
}

// KnownProcess (the check behind a process filter's 400): the normalised names always; another
// name when a hang or crash series holds it, read from the hang process index once the warm-up
// made it (ADR 0036) and from a walk before, alike; a crash series' process found either way.
TEST(KnownProcess, FromTheHangIndexOnceMadeAsFromAWalk) {
  World w;
  w.Usage("bhr", "Linux", 2 * kHour, 10 * kMin);
  for (int i = 0; i < 20; ++i) {
    w.Hang("bhr", "Linux", i % 4 ? "parent" : "web-extension", "Gecko", {"root", "f" + std::to_string(i)},
           128'000, 1, kMin);
  }
  w.Crash("Sig", "crash-only", "parent", "install1", kMin);
  const auto snap = w.Build();
  for (const bool made : {false, true}) {
    SCOPED_TRACE(made ? "index made" : "walked");
    if (made) snap->RowsWithTextHash(Table::kHangs, hang_field::kProcess, 0);
    ASSERT_EQ(snap->RowsWithTextHashIfMade(Table::kHangs, hang_field::kProcess, 0).has_value(), made);
    EXPECT_TRUE(KnownProcess(*snap, "gpu")) << "normalised: known without a series";
    EXPECT_TRUE(KnownProcess(*snap, "web-extension"));
    EXPECT_TRUE(KnownProcess(*snap, "crash-only")) << "in the crash rows only";
    EXPECT_FALSE(KnownProcess(*snap, "no-such-process"));
    EXPECT_FALSE(KnownProcess(*snap, "web")) << "a prefix is not the process";
  }
}

}  // namespace
}  // namespace seismo
