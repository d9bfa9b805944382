// CurlApi (alert/curl_api.h, ADR 0043): libcurl is loaded when a webhook sink starts, with
// every function the sink calls; a library that is missing, or is not libcurl, is an error
// that says which.
#include "alert/curl_api.h"

#include <gtest/gtest.h>

#include <string>

namespace seismo::alert_internal {
namespace {

TEST(CurlApi, LoadsLibcurlOnceWithEveryFunctionTheSinkCalls) {
  std::string error;
  const CurlApi* api = LoadCurl(&error);
  ASSERT_NE(api, nullptr) << error;
  EXPECT_EQ(LoadCurl(nullptr), api) << "once for the process";
  for (const void* fn :
       {reinterpret_cast<const void*>(api->global_init), reinterpret_cast<const void*>(api->easy_init),
        reinterpret_cast<const void*>(api->easy_setopt), reinterpret_cast<const void*>(api->easy_perform),
        reinterpret_cast<const void*>(api->easy_getinfo), reinterpret_cast<const void*>(api->easy_strerror),
        reinterpret_cast<const void*>(api->easy_cleanup), reinterpret_cast<const void*>(api->slist_append),
        reinterpret_cast<const void*>(api->slist_free_all)}) {
    EXPECT_NE(fn, nullptr);
  }
  CURL* curl = api->easy_init();
  ASSERT_NE(curl, nullptr);
  EXPECT_EQ(api->easy_setopt(curl, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
  api->easy_cleanup(curl);
  EXPECT_STREQ(api->easy_strerror(CURLE_OK), "No error");
}

TEST(CurlApi, ALibraryThatIsMissingOrIsNotLibcurlIsAnErrorThatSaysWhich) {
  CurlApi api;
  std::string error;
  EXPECT_FALSE(FindCurlIn("libseismo-no-such-library.so.1", api, error));
  EXPECT_NE(error.find("libseismo-no-such-library.so.1"), std::string::npos) << error;
  error.clear();
  EXPECT_FALSE(FindCurlIn("libc.so.6", api, error));
  EXPECT_EQ(error, "libc.so.6: no curl_global_init");
}

}  // namespace
}  // namespace seismo::alert_internal
