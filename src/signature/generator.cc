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
    // A failing rule leaves the signature (and proto signature) as they were.
    std::string signature_before = state.signature;
    std::string proto_before = state.proto_signature;
    if (std::optional<PyError> e = rule.apply(crash, *lists_, state)) {
      state.signature = std::move(signature_before);
      state.proto_signature = std::move(proto_before);
      state.notes.push_back(std::string(rule.name) + ": Rule failed: " + e->message);
    }
  }
  return {std::move(state.signature), std::move(state.proto_signature), std::move(state.notes)};
}

}  // namespace seismo
