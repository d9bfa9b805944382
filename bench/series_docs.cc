#include "series_docs.h"

#include <algorithm>
#include <cstdio>

namespace seismo::bench {

std::string BhrPing(size_t id, std::string_view when, const std::vector<std::string_view>& leaves) {
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "b3e5c0de-0000-4000-8000-%012zu", id);
  std::string doc = R"({"type":"bhr","id":")" + std::string(uuid) + R"(","creationDate":")" +
                    std::string(when) +
                    R"(","version":4,"application":{"architecture":"x86-64","buildId":"20261117090501",)"
                    R"("channel":"release","name":"Firefox","platformVersion":"146.0","version":"146.0"},)"
                    R"("environment":{"system":{"os":{"name":"Windows_NT","version":"10.0"}}},)"
                    R"("payload":{"timeSinceLastPing":3600000,"hangs":[)";
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (i > 0) doc += ',';
    doc += R"({"duration":200,"thread":"Gecko","runnableName":"","process":"default","remoteType":null,)"
           R"("annotations":[],"stack":["Startup::XRE_Main","nsThread::ProcessNextEvent",")";
    doc += leaves[i];
    doc += R"("]})";
  }
  doc += "]}}";
  return doc;
}

std::vector<std::string> SeriesDocs(size_t series, std::string_view when) {
  std::vector<std::string> docs;
  std::vector<std::string> names;
  std::vector<std::string_view> leaves;
  for (size_t first = 0; first < series; first += kHangsPerSeriesDoc) {
    names.clear();
    leaves.clear();
    for (size_t i = first; i < std::min(series, first + kHangsPerSeriesDoc); ++i) {
      names.push_back("BenchSeries" + std::to_string(i));
    }
    for (const std::string& n : names) leaves.push_back(n);
    docs.push_back(BhrPing(docs.size(), when, leaves));
  }
  return docs;
}

}  // namespace seismo::bench
