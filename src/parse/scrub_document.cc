#include "scrub_document.h"

namespace seismo::parse_internal {

void ScrubDocument(ParsedDocument& doc, const Scrubber& scrubber) {
  for (HangRecord& h : doc.hangs) {
    bool changed = false;
    for (std::string& frame : h.stack) changed = scrubber.Scrub(frame) || changed;
    // The signature is one of the frames (or "(empty stack)"): when no frame changed there is
    // nothing in it to scrub; else the same rules give it the same text as its frame.
    if (changed) scrubber.Scrub(h.signature);
  }
  if (doc.crash) {
    scrubber.Scrub(doc.crash->signature);
    scrubber.Scrub(doc.crash->proto_signature);
  }
}

}  // namespace seismo::parse_internal
