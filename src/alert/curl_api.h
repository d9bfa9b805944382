// CurlApi: the few libcurl functions the webhook sink calls, loaded when the first webhook
// sink starts (dlopen of libcurl's run-time library), not when the process does (ADR 0043).
//
//   WebhookSink ──LoadCurl()──> dlopen("libcurl.so.4") once ──> curl_global_init once
//               ──api->easy_init() ... api->easy_perform() ...
//
// Linked, libcurl and the libraries it needs (GnuTLS, Kerberos, LDAP, SSH, ... 28 of the
// process's 51) were mapped, relocated and initialised by every `seismo` process: about
// 4 ms of each start here, for a feature only a daemon with a webhook uses.
//
// Threading: LoadCurl from any thread (once, then the same answer); the functions as
// libcurl allows (one easy handle per thread).
#pragma once

#include <curl/curl.h>

#include <string>

namespace seismo::alert_internal {

struct CurlApi {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

// libcurl, loaded and initialised once for the process; nullptr when it could not be,
// with `error` saying why (the same every call). Never unloaded.
const CurlApi* LoadCurl(std::string* error);
// The functions of `api` found in `library` (dlopen'ed, never closed), without initialising
// it: false with `error` when the library or one of them is missing. LoadCurl's first step,
// with libcurl's soname; tests name others.
bool FindCurlIn(const char* library, CurlApi& api, std::string& error);

}  // namespace seismo::alert_internal
