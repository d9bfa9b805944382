// DefaultSignatures: the signature generator with the shipped siglists, loaded once per
// test process (what a test that parses crashes passes to Parser or Pipeline).
// Threading: any thread; the first call loads it.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "seismo/signature/generator.h"

namespace seismo::test {

inline const SignatureGenerator& DefaultSignatures() {
  static const std::unique_ptr<SignatureGenerator> gen = [] {
    auto loaded = SignatureGenerator::LoadDefault();
    EXPECT_TRUE(loaded) << loaded.error().message();
    return std::move(*loaded);
  }();
  return *gen;
}

}  // namespace seismo::test
