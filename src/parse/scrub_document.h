// The one place scrubbing meets the pipeline (SPEC §7): every frame and signature
// a parsed document carries goes through the Scrubber before the document is
// handed on, so nothing downstream (aggregates, checkpoints, answers) ever holds
// a URL, an e-mail address or a user name. Internal to src/parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/parse/document.h"
#include "seismo/signature/scrub.h"

namespace seismo::parse_internal {

// What one scrubber made of the frames it searched last, by their text. The frames that
// hold a key byte (a script's URL, mostly) come back in document after document, and a
// search runs every rule's pattern over them; a frame's result is a function of its text
// alone, so a frame seen before takes its result from here. Direct-mapped, kSlots slots of
// frames up to kMaxBytes (longer ones are searched every time): at most ~1 MiB. One per
// parse thread; a call with another scrubber than the last empties it first.
class ScrubCache {
 public:
  static constexpr size_t kSlots = 1024;
  static constexpr size_t kMaxBytes = 512;

  // The scrubbed text of `frame`, or nullptr when scrubbing leaves it as it is. The text
  // is valid until the next call.
  const std::string* Scrub(std::string_view frame, const Scrubber& scrubber);

  // Frames searched by the scrubber (not found here), for tests.
  uint64_t searches() const { return searches_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    bool used = false;
    bool changed = false;
    std::string from;
    std::string to;
  };
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
  const Scrubber* owner_ = nullptr;  // whose results the slots hold
  std::string scratch_;
  uint64_t searches_ = 0;
};

// Scrubber::MayChange, 32 bytes at a time where the parse stage has AVX2: a frame of 32 bytes
// or more (a script's URL, a C++ name) is compared with every key byte at once, a 32-byte
// block per step, the last one overlapping the one before it; one of 16 to 31 bytes in two
// overlapping blocks of 16; shorter ones take the scrubber's own word-at-a-time check (no
// block is read past a frame's end: frames rendered into an arena may end a page). The key
// bytes are the scrubber's own (Scrubber::key_words). Same answer as MayChange
// (ScrubDocument.KeyByteCheckAgreesWithTheScrubbers).
class KeyByteCheck {
 public:
  explicit KeyByteCheck(const Scrubber& scrubber) : scrubber_(scrubber) {}
  bool MayChange(std::string_view text) const;
  // "avx2" where the parse stage was built with it, else "words" (the scrubber's check):
  // tests check that the build they meant to test is the one they run.
  static std::string_view Kernel();

 private:
  const Scrubber& scrubber_;
};

// Hang stacks and signatures, crash signature and proto signature. A frame that changes
// gets its new text in doc.text.
void ScrubDocument(ParsedDocument& doc, const Scrubber& scrubber, ScrubCache& cache);

}  // namespace seismo::parse_internal
