// The rows a filter on a signature, a build id or a build date can select come from a
// per-snapshot index (Snapshot::RowsWithTextHash): exactly the rows holding that text, in
// the order of their addresses; the answers over them count what the whole table holds.
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
    w.Hang("bhr", i % 2 ? "Linux" : "Windows", i % 5 ? "parent" : "content", "Gecko",
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

}  // namespace
}  // namespace seismo
