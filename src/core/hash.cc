#include "seismo/core/hash.h"

#include <xxhash.h>

namespace seismo {

uint64_t Hash64(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

}  // namespace seismo
