// The signature lists compiled into the binary (generated at build time from
// config/siglists/*.txt by cmake/EmbedSiglists.cmake). Internal.
#pragma once

#include <array>
#include <string_view>

namespace seismo::signature_internal {

struct EmbeddedSiglist {
  std::string_view file_name;  // e.g. "prefix_signature_re.txt"
  std::string_view text;       // the file's bytes
};

extern const std::array<EmbeddedSiglist, 4> kEmbeddedSiglists;

}  // namespace seismo::signature_internal
