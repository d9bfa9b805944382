#include "output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace seismo {

Status WriteOutputFile(const std::string& path, std::string_view content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    return Status::Ok();
  }
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "we");
  if (f == nullptr) return Status::IoError(path + ": " + std::strerror(errno));
  bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size() &&
            std::fputc('\n', f) != EOF;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError(path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace seismo
