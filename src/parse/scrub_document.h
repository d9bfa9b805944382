// The one place scrubbing meets the pipeline (SPEC §7): every frame and signature
// a parsed document carries goes through the Scrubber before the document is
// handed on, so nothing downstream (aggregates, checkpoints, answers) ever holds
// a URL, an e-mail address or a user name. Internal to src/parse.
#pragma once

#include "seismo/parse/document.h"
#include "seismo/signature/scrub.h"

namespace seismo::parse_internal {

// Hang stacks and signatures, crash signature and proto signature.
void ScrubDocument(ParsedDocument& doc, const Scrubber& scrubber);

}  // namespace seismo::parse_internal
