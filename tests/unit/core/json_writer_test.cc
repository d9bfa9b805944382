#include "seismo/core/json_writer.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace seismo {
namespace {

TEST(JsonWriter, WritesNestedContainersWithCommas) {
  JsonWriter w;
  w.BeginObject().Key("a").Int(1).Key("b").BeginArray().String("x").Null().Bool(true).EndArray();
  w.Key("c").BeginObject().EndObject().EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":["x",null,true],"c":{}})");
}

TEST(JsonWriter, DoublesAreShortestRoundTripAndNonFiniteIsNull) {
  JsonWriter w;
  w.BeginArray().Double(1021).Double(0.5).Double(1.0 / 3).Double(1.0 / 0.0).OptDouble(std::nullopt).EndArray();
  EXPECT_EQ(w.str(), "[1021,0.5,0.3333333333333333,null,null]");
}

TEST(JsonWriter, EscapesControlCharactersAndReplacesInvalidUtf8) {
  std::string out;
  AppendJsonEscaped(out, std::string("a\"b\\c\n\x01\xff\xc3\xa9", 10));
  EXPECT_EQ(out, "a\\\"b\\\\c\\n\\u0001\xef\xbf\xbd\xc3\xa9");
}

// The escaping looks at eight bytes at a time: against a byte-at-a-time model, on texts
// where any byte may need care at any position of a word (and the text's end).
TEST(JsonWriter, EscapingEightBytesAtATimeMatchesAByteAtATimeModel) {
  auto model = [](std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      std::string one;
      AppendJsonEscaped(one, s.substr(i, 1));  // one byte: never a run of eight
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x80) {
        out.clear();
        return std::string();  // multi-byte sequences: compared whole below
      }
      out += one;
    }
    return out;
  };
  const std::string bytes = "aZ09 ~\"\\\x01\x1f\x7f/";  // a byte of every kind that needs care
  uint64_t state = 88172645463325252ull;
  for (int n = 0; n < 20000; ++n) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    std::string s(state % 40, 'x');
    for (char& c : s) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      c = state % 4 == 0 ? bytes[state / 4 % bytes.size()] : static_cast<char>('a' + state / 4 % 26);
    }
    std::string out;
    AppendJsonEscaped(out, s);
    EXPECT_EQ(out, model(s)) << n;
  }
  std::string utf8;  // a two-byte character at every position of a word
  for (size_t at = 0; at < 16; ++at) {
    utf8.clear();
    AppendJsonEscaped(utf8, std::string(at, 'a') + "\xc3\xa9" + std::string(9, 'b'));
    EXPECT_EQ(utf8, std::string(at, 'a') + "\xc3\xa9" + std::string(9, 'b')) << at;
  }
}

TEST(JsonWriter, IntegersAreExact) {
  JsonWriter w;
  w.BeginArray().Int(INT64_MIN).Int(-1).Int(0).Uint(UINT64_MAX).EndArray();
  EXPECT_EQ(w.str(), "[-9223372036854775808,-1,0,18446744073709551615]");
}

TEST(JsonWriter, PrettyPrintsWithIndent) {
  JsonWriter w(2);
  w.BeginObject().Key("a").BeginArray().Int(1).EndArray().EndObject();
  EXPECT_EQ(w.str(), "{\n  \"a\": [\n    1\n  ]\n}");
}

// An array written in parts: the first element by the writer itself, the rest by writers
// continuing after it, their texts appended in order, gives the bytes of one writer, compact
// and pretty, at any depth.
TEST(JsonWriter, PartsWrittenByContinuingWritersJoinToTheBytesOfOneWriter) {
  auto element = [](JsonWriter& w, int i) {
    w.BeginObject().Key("i").Int(i).Key("v").BeginArray().String("a").Int(i).EndArray().EndObject();
  };
  for (int indent : {0, 2}) {
    for (int n : {1, 2, 5}) {
      JsonWriter one(indent);
      one.BeginObject().Key("rows").BeginArray();
      for (int i = 0; i < n; ++i) element(one, i);
      one.EndArray().Key("after").Int(7).EndObject();

      JsonWriter parts(indent);
      parts.BeginObject().Key("rows").BeginArray();
      element(parts, 0);
      for (int i = 1; i < n; i += 2) {  // parts of two elements (the last may hold one)
        JsonWriter part = JsonWriter::ContinuingAfter(parts);
        for (int k = i; k < std::min(n, i + 2); ++k) element(part, k);
        parts.AppendContinued(part.str());
      }
      parts.EndArray().Key("after").Int(7).EndObject();
      EXPECT_EQ(parts.str(), one.str()) << "indent " << indent << ", " << n << " elements";
    }
  }
}

}  // namespace
}  // namespace seismo
