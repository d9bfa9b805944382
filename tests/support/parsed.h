// What tests read of a ParsedDocument, as plain strings.
#pragma once

#include <string>
#include <vector>

#include "seismo/parse/document.h"

namespace seismo::test {

// The stack of hang `i`, root first.
inline std::vector<std::string> StackOf(const ParsedDocument& d, size_t i) {
  std::vector<std::string> out;
  for (std::string_view f : d.Stack(d.hangs.at(i))) out.emplace_back(f);
  return out;
}

}  // namespace seismo::test
