#include "seismo/core/bytes.h"

#include <gtest/gtest.h>

#include <limits>

namespace seismo {
namespace {

TEST(Bytes, RoundTripsEveryType) {
  ByteWriter w;
  w.U8(7);
  w.U64(0);
  w.U64(std::numeric_limits<uint64_t>::max());
  w.I64(-1);
  w.I64(std::numeric_limits<int64_t>::min());
  w.I64(std::numeric_limits<int64_t>::max());
  w.Str("héllo");
  w.Str("");
  w.Fixed64(0x0123456789abcdefULL);
  ByteReader r(w.bytes());
  EXPECT_EQ(r.U8(), 7);
  EXPECT_EQ(r.U64(), 0u);
  EXPECT_EQ(r.U64(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(r.I64(), -1);
  EXPECT_EQ(r.I64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(r.I64(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(r.Str(), "héllo");
  EXPECT_EQ(r.Str(), "");
  EXPECT_EQ(r.Fixed64(), 0x0123456789abcdefULL);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.at_end());
}

TEST(Bytes, TruncatedOrAbsurdInputFailsWithoutReadingPastTheEnd) {
  ByteWriter w;
  w.Str("abcdef");
  std::string bytes = w.Take();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    ByteReader r(std::string_view(bytes).substr(0, cut));
    r.Str();
    EXPECT_FALSE(r.ok()) << cut;
  }
  ByteReader huge("\xff\xff\xff\xff\xff\xff\xff\xff\x7f");
  EXPECT_EQ(huge.Count(), 0u);
  EXPECT_FALSE(huge.ok());
  ByteReader overlong("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80");
  overlong.U64();
  EXPECT_FALSE(overlong.ok());
}

}  // namespace
}  // namespace seismo
