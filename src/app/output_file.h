// Writes a whole output file atomically (temp file + rename), or to stdout for "-".
#pragma once

#include <string>
#include <string_view>

#include "seismo/core/status.h"

namespace seismo {

Status WriteOutputFile(const std::string& path, std::string_view content);

}  // namespace seismo
