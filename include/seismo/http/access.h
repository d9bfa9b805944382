// Access rules of the HTTP server (SPEC §7 "HTTP"), as pure functions so they
// are tested without sockets: the bearer token, CORS origins and the mapping
// of a request path to a file under the static root.
//
// Threading: pure functions (ReadTokenFile and ResolveStaticFile read the file system).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seismo/core/status.h"

namespace seismo {

// Compares in time that depends only on the lengths, never on where the
// first difference is.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Whether an Authorization header value ("Bearer <token>") carries `token`.
// A null header never matches.
bool BearerMatches(const char* authorization, std::string_view token);

// The token in `path`: its content without surrounding whitespace. An empty
// or unreadable file is an error (a daemon must not start open by mistake).
Result<std::string> ReadTokenFile(const std::string& path);

// Exact match against the configured origins; "*" allows any origin.
bool OriginAllowed(const std::vector<std::string>& allowed, std::string_view origin);

// The file a decoded request path names under `root` (which must be
// canonical), or nullopt: a "." or ".." segment, a backslash, anything that
// resolves (through symlinks too) outside the root, or no regular file.
// "/" and directories map to their index.html.
std::optional<std::filesystem::path> ResolveStaticFile(const std::filesystem::path& root, std::string_view path);

// <source dir>/dashboards when it exists (compiled in), else ./dashboards.
std::string DefaultStaticDir();

}  // namespace seismo
