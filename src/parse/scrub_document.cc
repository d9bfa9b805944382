#include "scrub_document.h"

namespace seismo::parse_internal {

void ScrubDocument(ParsedDocument& doc, const Scrubber& scrubber) {
  for (HangRecord& h : doc.hangs) {
    for (std::string& frame : h.stack) scrubber.Scrub(frame);
    // The signature is one of the frames (or a marker): the same rules give the same text.
    scrubber.Scrub(h.signature);
  }
  if (doc.crash) {
    scrubber.Scrub(doc.crash->signature);
    scrubber.Scrub(doc.crash->proto_signature);
  }
}

}  // namespace seismo::parse_internal
