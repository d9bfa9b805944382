#include "curl_api.h"

#include <dlfcn.h>

#include <type_traits>

namespace seismo::alert_internal {

namespace {

// The soname of libcurl's run-time library: the one the headers came with (CMakeLists.txt).
#if defined(SEISMO_CURL_SONAME)
constexpr const char* kLibrary = SEISMO_CURL_SONAME;
#else
constexpr const char* kLibrary = "libcurl.so.4";
#endif

struct Loaded {
  CurlApi api;
  bool ok = false;
  std::string error;
};

Loaded Load() {
  Loaded out;
  if (!FindCurlIn(kLibrary, out.api, out.error)) return out;
  if (const CURLcode rc = out.api.global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    out.error = std::string("curl_global_init: ") + out.api.easy_strerror(rc);
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace

bool FindCurlIn(const char* library_name, CurlApi& api, std::string& error) {
  void* library = ::dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    error = why != nullptr ? why : library_name;
    return false;
  }
  // The library stays loaded, found or not: it is not ours to unload mid-process.
  auto find = [&](const char* name, auto& fn) {
    void* symbol = ::dlsym(library, name);
    if (symbol == nullptr) error = std::string(library_name) + ": no " + name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(symbol);
    return symbol != nullptr;
  };
  return find("curl_global_init", api.global_init) && find("curl_easy_init", api.easy_init) &&
         find("curl_easy_setopt", api.easy_setopt) && find("curl_easy_perform", api.easy_perform) &&
         find("curl_easy_getinfo", api.easy_getinfo) && find("curl_easy_strerror", api.easy_strerror) &&
         find("curl_easy_cleanup", api.easy_cleanup) && find("curl_slist_append", api.slist_append) &&
         find("curl_slist_free_all", api.slist_free_all);
}

const CurlApi* LoadCurl(std::string* error) {
  static const Loaded loaded = Load();  // once, thread-safe
  if (!loaded.ok) {
    if (error != nullptr) *error = loaded.error;
    return nullptr;
  }
  return &loaded.api;
}

}  // namespace seismo::alert_internal
