// Socorro's default signature ruleset (reference §3, §5), one function per
// rule. Each rule checks its own predicate, then acts. A rule returns the
// Python error it would raise, and must do so before changing the signature
// or proto signature (Socorro then keeps them as they were); the caller adds
// "<Rule>: Rule failed: <message>". Internal.
// Threading: pure functions over const inputs and the caller's RuleState.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/signature/crash_data.h"
#include "seismo/signature/siglists.h"
#include "signature/py_error.h"

namespace seismo::signature_internal {

struct RuleState {
  std::string signature;
  std::string proto_signature;
  std::vector<std::string> notes;
};

using RuleFn = std::optional<PyError> (*)(const CrashData&, const SigLists&, RuleState&);

struct Rule {
  std::string_view name;
  RuleFn apply;
};

// The 14 rules in Socorro's order.
const std::vector<Rule>& DefaultRules();

// Python int(crashing_thread), 0 when int() raises (get_crashing_thread).
int64_t CrashingThreadIndex(const PyValue& v);

// threads[index] with Python indexing, or null (missing, not a list, out of range).
const Thread* SelectThread(const CrashData& crash, int64_t index);

}  // namespace seismo::signature_internal
