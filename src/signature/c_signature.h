// The C/C++/Rust stack tool (Socorro's CSignatureTool, reference §4.3, §4.8):
// a crashing thread -> its normalised frame list -> the walked signature.
// Internal to the signature stage. Threading: pure functions over const data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seismo/signature/crash_data.h"
#include "seismo/signature/siglists.h"
#include "signature/py_error.h"

namespace seismo::signature_internal {

inline constexpr size_t kMaxFramesConsidered = 40;

// create_frame_list: inline pseudo-frames first, at most 40 entries, Rust 1.34
// missing-module fix, module names lower-cased when `windows`. Fails like
// Python on a null frame, non-list frames, or a value of the wrong type.
PyOr<std::vector<std::string>> CreateFrameList(const Thread& thread, bool windows, const SigLists& lists);

struct WalkResult {
  std::string signature;
  std::vector<std::string> notes;  // without the rule-name prefix
};

// CSignatureTool.generate: sentinel cut, irrelevant/prefix walk with the
// .dll/.so/XUL collapse, then the empty-signature fallbacks.
WalkResult WalkFrames(const std::vector<std::string>& frames, int64_t crashing_thread, const SigLists& lists);

}  // namespace seismo::signature_internal
