// The signature lists and scrubbing rules compiled into the binary (generated at
// build time from config/siglists/*.txt and config/scrub/rules.txt by
// cmake/EmbedSiglists.cmake). Internal.
#pragma once

#include <array>
#include <string_view>

namespace seismo::signature_internal {

struct EmbeddedSiglist {
  std::string_view file_name;  // e.g. "prefix_signature_re.txt"
  std::string_view text;       // the file's bytes
};

extern const std::array<EmbeddedSiglist, 4> kEmbeddedSiglists;

// config/scrub/rules.txt (read by Scrubber::Default()).
extern const std::string_view kEmbeddedScrubRules;

}  // namespace seismo::signature_internal
