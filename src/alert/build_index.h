// The alert rules' view of a snapshot: its builds and their baselines
// (aggregate/releases.h, shared with the API's comparisons), and what only the rules
// need on top: the OS scope of a rule and which builds are new.
//
// Threading: built and read by one evaluation round.
#pragma once

#include <string>

#include "seismo/aggregate/releases.h"
#include "seismo/alert/engine.h"

namespace seismo::alert_detail {

using ::seismo::Baseline;
using ::seismo::Baselines;
using ::seismo::BuildIndex;
using ::seismo::CrashBuild;
using ::seismo::FloorDiv;
using ::seismo::HangBuild;
using ::seismo::HourRange;
using ::seismo::SelectBaselines;
using ::seismo::Sum;

// The OS a rule is evaluated for: one OS, or every OS (kNoId, AlertKey::os kAllOs).
struct OsScope {
  Sym os = kNoId;
  bool Matches(Sym series_os) const { return os == kNoId || os == series_os; }
  std::string Name(const Snapshot& snap) const {
    return os == kNoId ? std::string(kAllOs) : std::string(snap.Text(os));
  }
};

// Whether a build first seen at `first_ms` is new at the snapshot's stream time.
bool IsNew(const Snapshot& snap, const AlertOptions& options, int64_t first_ms);

}  // namespace seismo::alert_detail
