#include "scrub_document.h"

#include "seismo/core/hash.h"

namespace seismo::parse_internal {

const std::string* ScrubCache::Scrub(std::string_view frame, const Scrubber& scrubber) {
  if (frame.size() > kMaxBytes) {
    ++searches_;
    scratch_.assign(frame);
    return scrubber.Scrub(scratch_) ? &scratch_ : nullptr;
  }
  if (&scrubber != owner_) {  // another scrubber's results: none of them holds
    for (Slot& s : slots_) s.used = false;
    owner_ = &scrubber;
  }
  const uint64_t hash = Hash64(frame);
  Slot& slot = slots_[hash & (kSlots - 1)];
  if (!slot.used || slot.hash != hash || slot.from != frame) {
    ++searches_;
    slot.used = false;  // until the search below has finished (it may throw)
    slot.hash = hash;
    slot.from.assign(frame);
    slot.to.assign(frame);
    slot.changed = scrubber.Scrub(slot.to);
    slot.used = true;
  }
  return slot.changed ? &slot.to : nullptr;
}

void ScrubDocument(ParsedDocument& doc, const Scrubber& scrubber, ScrubCache& cache) {
  for (HangRecord& h : doc.hangs) {
    for (uint32_t i = h.frames_begin; i < h.frames_end; ++i) {
      std::string_view& frame = doc.frames[i];
      if (!scrubber.MayChange(frame)) continue;
      const std::string* scrubbed = cache.Scrub(frame, scrubber);
      if (scrubbed == nullptr) continue;
      // The signature is a view of one of the frames (or "(empty stack)"): the same rules
      // give it the same text as its frame, so it takes the frame's new text.
      const bool is_signature = h.signature.data() == frame.data() && h.signature.size() == frame.size();
      frame = doc.text.Copy(*scrubbed);
      if (is_signature) h.signature = frame;
    }
  }
  if (doc.crash) {
    scrubber.Scrub(doc.crash->signature);
    scrubber.Scrub(doc.crash->proto_signature);
  }
}

}  // namespace seismo::parse_internal
