#include "seismo/signature/generator.h"

#include "signature/rules.h"

namespace seismo {

using signature_internal::DefaultRules;
using signature_internal::PyError;
using signature_internal::Rule;
using signature_internal::RuleState;

SignatureGenerator::SignatureGenerator(std::unique_ptr<SigLists> lists) : lists_(std::move(lists)) {}
SignatureGenerator::~SignatureGenerator() = default;

Result<std::unique_ptr<SignatureGenerator>> SignatureGenerator::LoadDefault() {
  Result<std::unique_ptr<SigLists>> lists = SigLists::LoadDefault();
  if (!lists) return lists.error();
  return std::make_unique<SignatureGenerator>(std::move(lists).value());
}

Result<std::unique_ptr<SignatureGenerator>> SignatureGenerator::LoadFromDir(const std::string& dir) {
  Result<std::unique_ptr<SigLists>> lists = SigLists::LoadFromDir(dir);
  if (!lists) return lists.error();
  return std::make_unique<SignatureGenerator>(std::move(lists).value());
}

SignatureResult SignatureGenerator::Generate(const CrashData& crash) const {
  RuleState state;
  for (const Rule& rule : DefaultRules()) {
    // Rules return their error before touching the signature (see rules.h),
    // so a failing rule leaves it as it was without a snapshot here.
    if (std::optional<PyError> e = rule.apply(crash, *lists_, state)) {
      state.notes.push_back(std::string(rule.name) + ": Rule failed: " + e->message);
    }
  }
  return {std::move(state.signature), std::move(state.proto_signature), std::move(state.notes)};
}

}  // namespace seismo
