#include "output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace seismo {

Status WriteOutputFile(const std::string& path, const std::function<void(OutputSink&)>& write) {
  if (path == "-") {
    FileOutputSink sink(stdout);
    write(sink);
    sink.Write("\n");
    std::fflush(stdout);
    return sink.ok() ? Status::Ok() : Status::IoError(std::string("stdout: ") + std::strerror(errno));
  }
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "we");
  if (f == nullptr) return Status::IoError(path + ": " + std::strerror(errno));
  FileOutputSink sink(f);
  write(sink);
  sink.Write("\n");
  bool ok = sink.ok();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError(path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status WriteOutputFile(const std::string& path, std::string_view content) {
  return WriteOutputFile(path, [&](OutputSink& sink) { sink.Write(content); });
}

}  // namespace seismo
