// Frame normalisation (reference §4.4–§4.7): one json_dump frame -> the string
// that stands for it in signatures. Exact to Socorro's CSignatureTool,
// including its quirks (plain suffix test for `const`, `operator new` -> `new`,
// an unbalanced '<' swallowing the rest, `[clone .cold.N]` leaving a space).
// Internal to the signature stage. Threading: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "seismo/signature/crash_data.h"
#include "seismo/signature/siglists.h"
#include "signature/py_error.h"

namespace seismo::signature_internal {

// The fields normalize_frame reads. Pointers borrow from a Frame/InlineFrame;
// `unloaded` is null for inline pseudo-frames.
struct FrameFields {
  const PyValue* function;
  const PyValue* module;
  const PyValue* file;
  const PyValue* line;
  const PyValue* offset;
  const Frame* unloaded;
  bool rust_file = false;  // parse_source_file(file) ends with ".rs" (set by the caller)
};

PyOr<std::string> NormalizeFrame(const FrameFields& f, const SigLists& lists);

PyOr<std::string> NormalizeCppFunction(std::string function, const PyValue& line, const SigLists& lists);
std::string NormalizeRustFunction(std::string function, const PyValue& line, const SigLists& lists);

// Socorro's helpers, exposed for tests.
// parse_source_file: the path part of "hg:host/repo:path:rev", "c:\path" or
// "/abs/path"; empty view (Python None) otherwise.
std::string_view ParseSourceFile(std::string_view file, bool* found);
// drop_prefix_and_return_type; nullopt-equivalent `ok=false` when the token
// list is empty (Python raises IndexError).
bool DropPrefixAndReturnType(std::string_view function, std::string_view* out);
std::string CollapseTypesCpp(std::string_view s);
std::string CollapseTypesRust(std::string_view s);
std::string CollapseArgumentsCpp(std::string_view s);
void CollapseArgumentsCppInPlace(std::string& s);

// Python str() of a value, with None -> "None".
inline std::string_view PyStr(const PyValue& v) { return v.is_none() ? std::string_view("None") : v.text; }

}  // namespace seismo::signature_internal
