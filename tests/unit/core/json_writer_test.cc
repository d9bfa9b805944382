#include "seismo/core/json_writer.h"

#include <gtest/gtest.h>

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

TEST(JsonWriter, PrettyPrintsWithIndent) {
  JsonWriter w(2);
  w.BeginObject().Key("a").BeginArray().Int(1).EndArray().EndObject();
  EXPECT_EQ(w.str(), "{\n  \"a\": [\n    1\n  ]\n}");
}

}  // namespace
}  // namespace seismo
