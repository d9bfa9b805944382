#include "scrub_document.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

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

bool KeyByteCheck::MayChange(std::string_view text) const {
#if defined(__AVX2__)
  const std::vector<uint64_t>& keys = scrubber_.key_words();  // each key byte eight times
  if (text.size() >= 16) {
    if (text.size() < 32) {
      // Two blocks of 16 bytes, overlapping where the text is under 32.
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data()));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + text.size() - 16));
      __m128i hit = _mm_setzero_si128();
      for (uint64_t key : keys) {
        const __m128i k = _mm_set1_epi64x(static_cast<int64_t>(key));
        hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(a, k), _mm_cmpeq_epi8(b, k)));
      }
      return _mm_testz_si128(hit, hit) == 0;
    }
    const char* p = text.data();
    const char* const last = text.data() + text.size() - 32;
    for (;;) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      __m256i hit = _mm256_setzero_si256();
      for (uint64_t key : keys) {
        hit = _mm256_or_si256(hit, _mm256_cmpeq_epi8(v, _mm256_set1_epi64x(static_cast<int64_t>(key))));
      }
      if (_mm256_testz_si256(hit, hit) == 0) return true;
      if (p == last) return false;
      p = last - p > 32 ? p + 32 : last;
    }
  }
#endif
  return scrubber_.MayChange(text);
}

std::string_view KeyByteCheck::Kernel() {
#if defined(__AVX2__)
  return "avx2";
#else
  return "words";
#endif
}

void ScrubDocument(ParsedDocument& doc, const Scrubber& scrubber, ScrubCache& cache) {
  const KeyByteCheck check(scrubber);
  for (HangRecord& h : doc.hangs) {
    for (uint32_t i = h.frames_begin; i < h.frames_end; ++i) {
      std::string_view& frame = doc.frames[i];
      if (!check.MayChange(frame)) continue;
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
