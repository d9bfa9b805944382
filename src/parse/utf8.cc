#include "seismo/parse/utf8.h"

#include <simdjson.h>

namespace seismo {

bool IsValidUtf8(std::string_view bytes) { return simdjson::validate_utf8(bytes.data(), bytes.size()); }

}  // namespace seismo
