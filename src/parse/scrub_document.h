// The one place scrubbing meets the pipeline (SPEC §7): every frame and signature
// a parsed document carries goes through the Scrubber before the document is
// handed on, so nothing downstream (aggregates, checkpoints, answers) ever holds
// a URL, an e-mail address or a user name. Internal to src/parse.
#pragma once

#include <string>

#include "seismo/parse/document.h"
#include "seismo/signature/scrub.h"

namespace seismo::parse_internal {

// Hang stacks and signatures, crash signature and proto signature. A frame that changes
// gets its new text in doc.text; `scratch` is reused from one frame to the next.
void ScrubDocument(ParsedDocument& doc, const Scrubber& scrubber, std::string& scratch);

}  // namespace seismo::parse_internal
