#include "seismo/query/answer_bound.h"

namespace seismo {

size_t JsonTextBound(std::string_view s) {
  size_t n = 2;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    n += b >= 0x20 && b < 0x80 && b != '"' && b != '\\' ? 1 : 6;
  }
  return n;
}

}  // namespace seismo
