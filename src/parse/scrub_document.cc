#include "scrub_document.h"

namespace seismo::parse_internal {

void ScrubDocument(ParsedDocument& doc, const Scrubber& scrubber, std::string& scratch) {
  for (HangRecord& h : doc.hangs) {
    for (uint32_t i = h.frames_begin; i < h.frames_end; ++i) {
      std::string_view& frame = doc.frames[i];
      if (!scrubber.MayChange(frame)) continue;
      scratch.assign(frame);
      if (!scrubber.Scrub(scratch)) continue;
      // The signature is a view of one of the frames (or "(empty stack)"): the same rules
      // give it the same text as its frame, so it takes the frame's new text.
      const bool is_signature = h.signature.data() == frame.data() && h.signature.size() == frame.size();
      frame = doc.text.Copy(scratch);
      if (is_signature) h.signature = frame;
    }
  }
  if (doc.crash) {
    scrubber.Scrub(doc.crash->signature);
    scrubber.Scrub(doc.crash->proto_signature);
  }
}

}  // namespace seismo::parse_internal
