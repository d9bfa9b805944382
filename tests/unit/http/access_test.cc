#include "seismo/http/access.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "seismo/http/latency.h"

namespace seismo {
namespace {

namespace fs = std::filesystem;

TEST(Access, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secre"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST(Access, BearerHeader) {
  EXPECT_TRUE(BearerMatches("Bearer tok", "tok"));
  EXPECT_TRUE(BearerMatches("bearer tok", "tok"));
  EXPECT_FALSE(BearerMatches("Bearer tok2", "tok"));
  EXPECT_FALSE(BearerMatches("Basic tok", "tok"));
  EXPECT_FALSE(BearerMatches("tok", "tok"));
  EXPECT_FALSE(BearerMatches(nullptr, "tok"));
  EXPECT_FALSE(BearerMatches("Bearer ", ""));  // an empty token never authorises
}

TEST(Access, TokenFileIsTrimmedAndMustNotBeEmpty) {
  const std::string path = ::testing::TempDir() + "/seismo_token";
  std::ofstream(path) << "  s3cret\n";
  auto t = ReadTokenFile(path);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(*t, "s3cret");
  std::ofstream(path) << " \n";
  EXPECT_FALSE(ReadTokenFile(path).has_value());
  EXPECT_FALSE(ReadTokenFile(path + ".missing").has_value());
  fs::remove(path);
}

TEST(Access, Origins) {
  EXPECT_TRUE(OriginAllowed({"http://a.example"}, "http://a.example"));
  EXPECT_FALSE(OriginAllowed({"http://a.example"}, "http://a.example.evil"));
  EXPECT_FALSE(OriginAllowed({}, "http://a.example"));
  EXPECT_TRUE(OriginAllowed({"*"}, "http://b.example"));
  EXPECT_FALSE(OriginAllowed({"*"}, ""));
}

class StaticFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    // Per process: ctest runs the tests of this fixture in parallel.
    base_ = fs::path(::testing::TempDir()) / ("seismo_static_test_" + std::to_string(::getpid()));
    fs::remove_all(base_);
    fs::create_directories(base_ / "root/js");
    fs::create_directories(base_ / "root/empty");
    std::ofstream(base_ / "root/index.html") << "<html>";
    std::ofstream(base_ / "root/js/app.js") << "x";
    std::ofstream(base_ / "secret.txt") << "secret";
    fs::create_directory_symlink(base_, base_ / "root/link");
    fs::create_symlink(base_ / "secret.txt", base_ / "root/secret-link.txt");
    root_ = fs::canonical(base_ / "root");
  }
  void TearDown() override { fs::remove_all(base_); }
  fs::path base_, root_;
};

TEST_F(StaticFiles, FilesInsideTheRootResolve) {
  EXPECT_EQ(ResolveStaticFile(root_, "/"), root_ / "index.html");
  EXPECT_EQ(ResolveStaticFile(root_, "/index.html"), root_ / "index.html");
  EXPECT_EQ(ResolveStaticFile(root_, "/js/app.js"), root_ / "js/app.js");
  EXPECT_EQ(ResolveStaticFile(root_, "//js//app.js"), root_ / "js/app.js");
}

TEST_F(StaticFiles, NothingOutsideTheRootOrMissingResolves) {
  for (const char* path : {"/../secret.txt", "/js/../../secret.txt", "/./index.html", "/..", "/js/..",
                           "/link/secret.txt", "/secret-link.txt", "/..\\secret.txt", "/missing.html", "/empty",
                           "/empty/", "relative.html", ""}) {
    EXPECT_FALSE(ResolveStaticFile(root_, path).has_value()) << path;
  }
}

TEST(Latency, RoutesAndBuckets) {
  EXPECT_EQ(LatencyRecorder::kRoutes[LatencyRecorder::RouteOf("/api/v1/hangs")], "/api/v1/hangs");
  EXPECT_EQ(LatencyRecorder::kRoutes[LatencyRecorder::RouteOf("/api/v1/zzz")], "other");
  EXPECT_EQ(LatencyRecorder::kRoutes[LatencyRecorder::RouteOf("/js/app.js")], "static");
  LatencyRecorder r;
  const size_t hangs = LatencyRecorder::RouteOf("/api/v1/hangs");
  r.Record(hangs, 0.0001);  // on the first bound: counted in it (le)
  r.Record(hangs, 0.003);
  r.Record(hangs, 5.0);
  LatencyHistograms h = r.Copy();
  const auto& route = h.routes[hangs];
  EXPECT_EQ(route.counts[0], 1u);
  EXPECT_EQ(route.counts[5], 1u);  // 0.0025 < 0.003 <= 0.005
  EXPECT_EQ(route.counts.back(), 1u);
  EXPECT_NEAR(route.sum_s, 5.0031, 1e-6);
}

}  // namespace
}  // namespace seismo
