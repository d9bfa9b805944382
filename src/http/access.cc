#include "seismo/http/access.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace seismo {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Always walk the longer input; a length difference still fails.
  const size_t n = std::max(a.size(), b.size());
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

bool BearerMatches(const char* authorization, std::string_view token) {
  if (authorization == nullptr || token.empty()) return false;
  std::string_view h(authorization);
  constexpr std::string_view kScheme = "Bearer ";
  if (h.size() < kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {  // the scheme is case-insensitive (RFC 7235)
    if (std::tolower(static_cast<unsigned char>(h[i])) != std::tolower(static_cast<unsigned char>(kScheme[i]))) {
      return false;
    }
  }
  return ConstantTimeEquals(h.substr(kScheme.size()), token);
}

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot read the auth token file");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!token.empty() && space(static_cast<unsigned char>(token.back()))) token.pop_back();
  size_t start = 0;
  while (start < token.size() && space(static_cast<unsigned char>(token[start]))) ++start;
  token.erase(0, start);
  if (token.empty()) return Status::InvalidArgument(path + ": the auth token file is empty");
  return token;
}

bool OriginAllowed(const std::vector<std::string>& allowed, std::string_view origin) {
  if (origin.empty()) return false;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return a == "*" || a == origin; });
}

std::optional<std::filesystem::path> ResolveStaticFile(const std::filesystem::path& root, std::string_view path) {
  namespace fs = std::filesystem;
  if (path.empty() || path[0] != '/' || path.find('\\') != std::string_view::npos ||
      path.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  fs::path rel;
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(pos, slash - pos);
    if (seg == "." || seg == "..") return std::nullopt;
    if (!seg.empty()) rel /= std::string(seg);
    pos = slash + 1;
  }
  std::error_code ec;
  fs::path full = fs::weakly_canonical(root / rel, ec);
  if (ec) return std::nullopt;
  if (fs::is_directory(full, ec)) full /= "index.html";
  full = fs::weakly_canonical(full, ec);
  if (ec) return std::nullopt;
  // Inside the root: the root's components are a prefix of the file's.
  auto [r, f] = std::mismatch(root.begin(), root.end(), full.begin(), full.end());
  if (r != root.end() || f == full.end()) return std::nullopt;
  if (!fs::is_regular_file(full, ec)) return std::nullopt;
  return full;
}

std::string DefaultStaticDir() {
#ifdef SEISMO_SOURCE_DIR
  std::error_code ec;
  std::filesystem::path p = std::filesystem::path(SEISMO_SOURCE_DIR) / "dashboards";
  if (std::filesystem::is_directory(p, ec)) return p.string();
#endif
  return "./dashboards";
}

}  // namespace seismo
