// Writes an output file atomically (temp file + rename), or to stdout for "-", from a
// writer that streams into a sink (replay output is written as it is made).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "seismo/core/status.h"
#include "seismo/query/output_sink.h"

namespace seismo {

// `write` fills the sink; a newline ends the file.
Status WriteOutputFile(const std::string& path, const std::function<void(OutputSink&)>& write);
Status WriteOutputFile(const std::string& path, std::string_view content);

}  // namespace seismo
