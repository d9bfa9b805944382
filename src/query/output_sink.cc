#include "seismo/query/output_sink.h"

namespace seismo {

void FileOutputSink::Write(std::string_view bytes) {
  if (!ok_ || bytes.empty()) return;
  ok_ = std::fwrite(bytes.data(), 1, bytes.size(), file_) == bytes.size();
}

}  // namespace seismo
