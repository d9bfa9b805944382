// Socorro's Java signature tools (reference §4.9, §4.10). Internal.
// Threading: pure functions.
#pragma once

#include <string>
#include <vector>

#include "seismo/signature/crash_data.h"
#include "signature/py_error.h"

namespace seismo::signature_internal {

struct JavaResult {
  std::string signature;
  std::vector<std::string> notes;  // without the rule-name prefix
};

// JavaSignatureTool.generate over `java_stack_trace` (any value).
JavaResult JavaStackTraceSignature(const PyValue& trace);

// JavaExceptionSignatureTool over the reduced `java_exception`.
PyOr<JavaResult> JavaExceptionSignature(const JavaException& exception);

}  // namespace seismo::signature_internal
